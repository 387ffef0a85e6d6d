#if canImport(Combine)
public import Combine
import Foundation
import HTTP

extension Connection {
    /// A publisher that sends `request` when a subscriber asks for a value, then publishes the decoded
    /// value and finishes, or fails with the error.
    ///
    /// Cancelling the subscription cancels the request. Nothing is sent until there is demand, and each
    /// subscription sends the request once.
    ///
    /// ```swift
    /// connection.publisher(for: .person(42))
    ///     .receive(on: DispatchQueue.main)
    ///     .sink { completion in … } receiveValue: { person in … }
    /// ```
    public func publisher<Response: Sendable>(for request: Request<Response>) -> AnyPublisher<Response, any Error> {
        RequestPublisher(connection: self, request: request).eraseToAnyPublisher()
    }

    /// A publisher that never fails: it publishes the outcome as a `Result` and finishes — the shape
    /// SwiftUI's `onReceive(_:perform:)` needs.
    public func resultPublisher<Response: Sendable>(
        for request: Request<Response>
    ) -> AnyPublisher<Result<Response, any Error>, Never> {
        RequestPublisher(connection: self, request: request)
            .map { Result<Response, any Error>.success($0) }
            .catch { Just(Result<Response, any Error>.failure($0)) }
            .eraseToAnyPublisher()
    }
}

extension Connection {
    /// A publisher of the lines of `request`'s response body, read as ``lines(for:maximumLineLength:)`` reads them:
    /// the request is sent when a subscriber first asks for a value, one line is read per unit of demand (the
    /// transfer waits while there is none), and cancelling the subscription stops the transfer.
    ///
    /// ```swift
    /// connection.linesPublisher(for: Request<String>(underlyingRequest: HTTPRequest(path: "/logs/tail")))
    ///     .receive(on: DispatchQueue.main)
    ///     .sink { completion in … } receiveValue: { line in … }
    /// ```
    public func linesPublisher(
        for request: Request<String>, maximumLineLength: Int = 1 << 20
    ) -> AnyPublisher<String, any Error> {
        AsyncSequencePublisher(sequence: lines(for: request, maximumLineLength: maximumLineLength))
            .eraseToAnyPublisher()
    }

    /// A publisher of the values of a JSON Lines response, each line decoded as
    /// ``jsonLines(for:maximumLineLength:)`` decodes it, one per unit of demand; see
    /// ``linesPublisher(for:maximumLineLength:)``.
    public func jsonLinesPublisher<Element: Sendable>(
        for request: Request<Element>, maximumLineLength: Int = 1 << 20
    ) -> AnyPublisher<Element, any Error> {
        AsyncSequencePublisher(sequence: jsonLines(for: request, maximumLineLength: maximumLineLength))
            .eraseToAnyPublisher()
    }

    /// A publisher of the Server-Sent Events of `request`'s response, each decoded as
    /// ``events(for:eventType:reconnectionDelay:clock:)`` decodes it and resumed as it resumes them, one per unit of
    /// demand; see ``linesPublisher(for:maximumLineLength:)``.
    public func eventsPublisher<Element: Sendable>(
        for request: Request<Element>,
        eventType: String? = nil,
        reconnectionDelay: Duration = .seconds(3)
    ) -> AnyPublisher<Element, any Error> {
        AsyncSequencePublisher(
            sequence: events(for: request, eventType: eventType, reconnectionDelay: reconnectionDelay)
        ).eraseToAnyPublisher()
    }
}

/// Publishes the elements of an async sequence, iterated once per subscription, one element per unit of demand.
struct AsyncSequencePublisher<Sequence: AsyncSequence & Sendable>: Publisher where Sequence.Element: Sendable {
    typealias Output = Sequence.Element
    typealias Failure = any Error

    let sequence: Sequence

    func receive<Downstream: Subscriber>(subscriber: Downstream)
    where Downstream.Input == Output, Downstream.Failure == any Error {
        let subscription = AsyncSequenceSubscription(subscriber: AnySubscriber(subscriber), sequence: sequence)
        subscriber.receive(subscription: subscription)
    }
}

// Safety: the subscriber, the demand and the task live in `state`, behind a lock; the subscriber is called from
// the one task that iterates, after the lock is released, and never after a completion or a cancel.
final class AsyncSequenceSubscription<Sequence: AsyncSequence & Sendable>: Subscription, @unchecked Sendable
where Sequence.Element: Sendable {
    private typealias Downstream = AnySubscriber<Sequence.Element, any Error>

    private struct State {
        var subscriber: Downstream?
        var demand = Subscribers.Demand.none
        /// The iterating task, waiting for demand.
        var waiter: CheckedContinuation<Bool, Never>?
        var task: Task<Void, Never>?
    }

    private let state: Locked<State>
    private let sequence: Sequence

    init(subscriber: AnySubscriber<Sequence.Element, any Error>, sequence: Sequence) {
        state = Locked(State(subscriber: subscriber))
        self.sequence = sequence
    }

    func request(_ demand: Subscribers.Demand) {
        guard demand > 0 else { return }
        let (start, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Bool, Never>?) in
            guard state.subscriber != nil else { return (false, nil) }
            state.demand += demand
            defer { state.waiter = nil }
            return (state.task == nil, state.waiter)
        }
        waiter?.resume(returning: true)
        guard start else { return }
        let task = Task { await self.run() }
        let cancelledMeanwhile = state.withLock { state -> Bool in
            guard state.subscriber != nil else { return true }
            state.task = task
            return false
        }
        if cancelledMeanwhile { task.cancel() }
    }

    func cancel() {
        let (task, waiter) = state.withLock { state in
            state.subscriber = nil
            defer { state.waiter = nil }
            return (state.task, state.waiter)
        }
        task?.cancel()
        waiter?.resume(returning: false)
    }

    /// Iterates the sequence, taking one unit of demand per element and waiting when there is none.
    private func run() async {
        var iterator = sequence.makeAsyncIterator()
        do {
            while await takeDemand() {
                guard let element = try await iterator.next() else {
                    finish(.finished)
                    return
                }
                guard let subscriber = state.withLock({ $0.subscriber }) else { return }
                let more = subscriber.receive(element)
                state.withLock { state in if state.subscriber != nil { state.demand += more } }
            }
        } catch {
            finish(.failure(error))
        }
    }

    /// Takes a unit of demand, waiting for one; `false` once the subscription is cancelled.
    private func takeDemand() async -> Bool {
        while true {
            let taken = state.withLock { state -> Bool? in
                guard state.subscriber != nil else { return false }
                guard state.demand > 0 else { return nil }
                state.demand -= 1
                return true
            }
            if let taken { return taken }
            // Woken with `true` by new demand (look again), with `false` by a cancel.
            let goesOn = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let parked = state.withLock { state -> Bool in
                    guard state.subscriber != nil, state.demand == 0 else { return false }
                    state.waiter = continuation
                    return true
                }
                if !parked { continuation.resume(returning: true) }
            }
            if !goesOn { return false }
        }
    }

    private func finish(_ completion: Subscribers.Completion<any Error>) {
        let subscriber = state.withLock { state -> Downstream? in
            defer { state.subscriber = nil }
            return state.subscriber
        }
        subscriber?.receive(completion: completion)
    }
}

/// Sends one request per subscription.
struct RequestPublisher<Output: Sendable>: Publisher {
    typealias Failure = any Error

    let connection: Connection
    let request: Request<Output>

    func receive<Downstream: Subscriber>(subscriber: Downstream)
    where Downstream.Input == Output, Downstream.Failure == any Error {
        let subscription = RequestSubscription(
            subscriber: AnySubscriber(subscriber),
            connection: connection,
            request: request
        )
        subscriber.receive(subscription: subscription)
    }
}

// Safety: the subscriber and the task live in `state`, behind a lock; the subscriber is called after the
// lock is released, at most once with a value and once with a completion, as Combine requires.
final class RequestSubscription<Output: Sendable>: Subscription, @unchecked Sendable {
    private typealias Downstream = AnySubscriber<Output, any Error>

    private enum State {
        case idle(Downstream)
        case running(Downstream, HTTPTask?)
        case finished
    }

    private let state: Locked<State>
    private let connection: Connection
    private let request: Request<Output>

    init(subscriber: AnySubscriber<Output, any Error>, connection: Connection, request: Request<Output>) {
        self.state = Locked(.idle(subscriber))
        self.connection = connection
        self.request = request
    }

    func request(_ demand: Subscribers.Demand) {
        guard demand > 0 else { return }
        let starts = state.withLock { state -> Bool in
            guard case .idle(let subscriber) = state else { return false }
            state = .running(subscriber, nil)
            return true
        }
        guard starts else { return }
        let task = connection.request(request) { [weak self] result in self?.deliver(result) }
        let cancelledMeanwhile = state.withLock { state -> Bool in
            guard case .running(let subscriber, nil) = state else { return true }
            state = .running(subscriber, task)
            return false
        }
        if cancelledMeanwhile { task.cancel() }
    }

    private func deliver(_ result: Result<Output, any Error>) {
        let subscriber = state.withLock { state -> Downstream? in
            guard case .running(let subscriber, _) = state else { return nil }
            state = .finished
            return subscriber
        }
        guard let subscriber else { return }
        switch result {
        case .success(let value):
            _ = subscriber.receive(value)
            subscriber.receive(completion: .finished)
        case .failure(let error):
            subscriber.receive(completion: .failure(error))
        }
    }

    func cancel() {
        let task = state.withLock { state -> HTTPTask? in
            defer { state = .finished }
            if case .running(_, let task) = state { return task }
            return nil
        }
        task?.cancel()
    }
}
#endif

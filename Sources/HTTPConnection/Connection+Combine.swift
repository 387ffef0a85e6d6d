#if canImport(Combine)
public import Combine
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

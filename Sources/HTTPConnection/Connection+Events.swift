public import Foundation
public import HTTP

extension Connection {
    /// The Server-Sent Events of `request`'s response, resumed through the chain with `Last-Event-ID` when the
    /// connection ends, until you stop iterating or the server answers `204` (see `HTTPLoader.events(for:reconnectionDelay:clock:)`).
    ///
    /// ```swift
    /// for try await event in connection.events(for: HTTPRequest(path: "/notifications")) {
    ///     print(event.type, event.data)
    /// }
    /// ```
    ///
    /// A ``reset(mode:)`` of the connection — a logout — ends the stream with `HTTPError.Code.resetInProgress`, in
    /// either mode: the body being read stops at once (what arrived and was not read is dropped), and the stream is
    /// not resumed, so no event of the old session reaches the app after it. A reset while the stream waits to
    /// reconnect ends it when the wait is over, without reconnecting.
    public func events(
        for request: HTTPRequest,
        reconnectionDelay: Duration = .seconds(3),
        clock: any Clock<Duration> = ContinuousClock()
    ) -> EventStream {
        EventStream(connection: self, request: request, reconnectionDelay: reconnectionDelay, clock: clock)
    }

    /// The Server-Sent Events of `request`'s response, each event's `data` decoded as `Element` with `decoder` (JSON by
    /// default): for APIs that send one JSON value per event, as streaming APIs of language models and live feeds do.
    ///
    /// ```swift
    /// struct Price: Decodable, Sendable { var symbol: String; var price: Double }
    ///
    /// for try await price in connection.events(of: Price.self, for: HTTPRequest(path: "/prices")) {
    ///     print(price.symbol, price.price)
    /// }
    /// ```
    ///
    /// With `eventType`, only the events of that type are decoded and the others skipped; without it (the default),
    /// every event is. An event whose data does not decode ends the stream with the decoder's error. A reset ends it
    /// as it ends ``events(for:reconnectionDelay:clock:)``.
    public func events<Element: Decodable & Sendable>(
        of type: Element.Type,
        for request: HTTPRequest,
        eventType: String? = nil,
        decoder: some DataDecoder = JSONDecoder(),
        reconnectionDelay: Duration = .seconds(3),
        clock: any Clock<Duration> = ContinuousClock()
    ) -> AsyncThrowingCompactMapSequence<EventStream, Element> {
        events(for: request, reconnectionDelay: reconnectionDelay, clock: clock).compactMap { @Sendable event in
            if let eventType, event.type != eventType { return nil }
            return try decoder.decode(Element.self, from: Data(event.data.utf8))
        }
    }
}

/// The Server-Sent Events of a response read through a ``Connection``: see
/// ``Connection/events(for:reconnectionDelay:clock:)``. They are `ServerSentEvents` that a reset of the connection
/// ends.
///
/// Each iteration opens its own connection to the server; iterate it once.
public struct EventStream: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent

    let connection: Connection
    let request: HTTPRequest
    let reconnectionDelay: Duration
    let clock: any Clock<Duration>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Reads events, connecting and reconnecting through the connection's chain, until the end, an error or a reset.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var events: ServerSentEvents.AsyncIterator
        private let watch: ResetWatch
        private let request: HTTPRequest
        private var isFinished = false

        init(stream: EventStream) {
            let watch = ResetWatch(stream.connection.openTransfers)
            self.watch = watch
            request = stream.request
            events = WatchedChain(connection: stream.connection, watch: watch)
                .events(for: stream.request, reconnectionDelay: stream.reconnectionDelay, clock: stream.clock)
                .makeAsyncIterator()
        }

        public mutating func next() async throws -> ServerSentEvent? {
            if isFinished { return nil }
            if watch.isReset { throw finishing(with: resetFailure) }
            do {
                guard let event = try await events.next() else {
                    isFinished = true
                    return nil
                }
                // An event that arrived as the reset began is the old session's: it is not handed over.
                if watch.isReset { throw resetFailure }
                return event
            } catch {
                // A reset stops the body (its reader sees it cancelled) and refuses reconnections: either way, the
                // stream ends because of the reset, and says so.
                throw finishing(with: watch.isReset ? resetFailure : error)
            }
        }

        private mutating func finishing(with error: any Error) -> any Error {
            isFinished = true
            return error
        }

        private var resetFailure: HTTPError {
            HTTPError(
                .resetInProgress, request: request,
                message: "the connection was reset, which ends its event streams; the stream was not resumed")
        }
    }
}

/// The chain an event stream opened through a connection sends its requests to: the connection's, with each
/// streamed body stopped when the connection is reset, and no reconnection once it has been.
// Safety: no state of its own beyond `let`s (the watch is `Sendable`); it only forwards to the connection's chain.
private final class WatchedChain: HTTPLoader, @unchecked Sendable {
    private let connection: Connection
    private let watch: ResetWatch

    init(connection: Connection, watch: ResetWatch) {
        self.connection = connection
        self.watch = watch
    }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        if watch.isReset {
            return .failure(
                HTTPError(
                    .resetInProgress, request: request,
                    message: "the connection was reset, which ends its event streams; the stream was not resumed"))
        }
        let result = await connection.loader.load(request)
        if case .success(let response) = result, let body = response.bodyStream {
            watch.onReset { body.cancel() }  // at once when a reset began while the head was on its way
        }
        return result
    }
}

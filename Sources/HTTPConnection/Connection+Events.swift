import Foundation
public import HTTP

extension Connection {
    /// The Server-Sent Events of `request`'s response, each event's `data` decoded as the request decodes a body,
    /// resumed through the chain with `Last-Event-ID` when the connection ends, until you stop iterating or the server
    /// answers `204` (see `HTTPLoader.events(for:reconnectionDelay:clock:)`).
    ///
    /// ```swift
    /// struct Price: Decodable, Sendable { var symbol: String; var price: Double }
    ///
    /// let prices = Request<Price>(underlyingRequest: HTTPRequest(path: "/prices"))
    /// for try await price in connection.events(for: prices) {
    ///     print(price.symbol, price.price)
    /// }
    /// ```
    ///
    /// The request describes one event: a `Request<Price>` made with `init(underlyingRequest:decoder:)` decodes each
    /// event's data with its decoder, a `Request<String>` hands it over as text, and a `Request<ServerSentEvent>`
    /// hands over the events themselves, with their type and ID. With `eventType`, only the events of that type are
    /// handed over and the others skipped; without it (the default), every event is. An event whose data does not
    /// decode ends the stream with a ``ResponseError`` of kind ``ResponseError/Kind/undecodable`` whose response has
    /// the head and the event's data as its body.
    ///
    /// The request's status rule and error decoding apply to each response's head, before any event, as
    /// ``stream(_:)`` applies them: a status it does not accept ends the stream with a ``ServerError`` or a
    /// ``ResponseError`` and is not resumed.
    ///
    /// A ``reset(mode:)`` of the connection — a logout — ends the stream with `HTTPError.Code.resetInProgress`, in
    /// either mode: the body being read stops at once (what arrived and was not read is dropped), and the stream is
    /// not resumed, so no event of the old session reaches the app after it. A reset while the stream waits to
    /// reconnect ends it when the wait is over, without reconnecting.
    ///
    /// - Parameters:
    ///   - request: The request to send, decoding one event's data.
    ///   - eventType: The type of the events to hand over (their `event` field); all of them when `nil`.
    ///   - reconnectionDelay: How long to wait before reconnecting when the server has not said (`retry`); 3 s by
    ///     default.
    ///   - clock: The clock the wait is measured on; a manual one in tests.
    public func events<Element: Sendable>(
        for request: Request<Element>,
        eventType: String? = nil,
        reconnectionDelay: Duration = .seconds(3),
        clock: any Clock<Duration> = ContinuousClock()
    ) -> EventStream<Element> {
        EventStream(
            connection: self, request: request, eventType: eventType, reconnectionDelay: reconnectionDelay,
            clock: clock)
    }
}

extension Request where Response == ServerSentEvent {
    /// A request for Server-Sent Events that hands over the events as they are, with their type and ID: see
    /// ``Connection/events(for:eventType:reconnectionDelay:clock:)``.
    ///
    /// ```swift
    /// let notifications = Request<ServerSentEvent>(underlyingRequest: HTTPRequest(path: "/notifications"))
    /// for try await event in connection.events(for: notifications) {
    ///     print(event.type, event.lastEventID, event.data)
    /// }
    /// ```
    ///
    /// Loaded whole with ``Connection/request(_:)``, its value is the body's first event; a body without one is an
    /// ``ResponseError/Kind/undecodable`` error.
    public init(underlyingRequest: HTTPRequest) {
        self.init(underlyingRequest: underlyingRequest) { response in
            var parser = ServerSentEventParser()
            guard let event = parser.parse(response.body).first else { throw NoEventFailure() }
            return event
        }
    }
}

/// A whole body held no complete Server-Sent Event.
struct NoEventFailure: Error, CustomStringConvertible {
    var description: String { "the body holds no complete event (an event ends with an empty line)" }
}

/// The Server-Sent Events of a response read through a ``Connection``, decoded as its request decodes one: see
/// ``Connection/events(for:eventType:reconnectionDelay:clock:)``. They are `ServerSentEvents` whose heads the request
/// checks and whose events it decodes, and that a reset of the connection ends.
///
/// Each iteration opens its own connection to the server; iterate it once.
public struct EventStream<Element: Sendable>: AsyncSequence, Sendable {
    let connection: Connection
    let request: Request<Element>
    let eventType: String?
    let reconnectionDelay: Duration
    let clock: any Clock<Duration>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Reads events, connecting and reconnecting through the connection's chain, until the end, an error or a reset.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var events: ServerSentEvents.AsyncIterator
        private let watch: ResetWatch
        private let request: Request<Element>
        private let eventType: String?
        private var isFinished = false

        init(stream: EventStream) {
            let watch = ResetWatch(stream.connection.openTransfers)
            self.watch = watch
            request = stream.request
            eventType = stream.eventType
            let (loader, request) = (stream.connection.loader, stream.request)
            events = ServerSentEvents(
                request: request.underlyingRequest, reconnectionDelay: stream.reconnectionDelay, clock: stream.clock
            ) { attempt in
                // No request leaves once a reset has begun; a body that arrives is stopped by the next one.
                if watch.isReset { return .failure(Self.resetFailure(attempt)) }
                let result = await loader.stream(attempt)
                guard case .success(let streamed) = result else { return result }
                watch.onReset { streamed.body.cancel() }  // at once when a reset began while the head was on its way
                try await request.checkHead(of: streamed)
                return result
            }.makeAsyncIterator()
        }

        public mutating func next() async throws -> Element? {
            if isFinished { return nil }
            if watch.isReset { throw finishing(with: Self.resetFailure(request.underlyingRequest)) }
            do {
                while let event = try await events.next() {
                    // An event that arrived as the reset began is the old session's: it is not handed over.
                    if watch.isReset { throw Self.resetFailure(request.underlyingRequest) }
                    if let eventType, event.type != eventType { continue }
                    return try decode(event)
                }
                isFinished = true
                return nil
            } catch {
                // A reset stops the body (its reader sees it cancelled) and refuses reconnections: either way, the
                // stream ends because of the reset, and says so.
                throw finishing(with: watch.isReset ? Self.resetFailure(request.underlyingRequest) : error)
            }
        }

        /// The event as the request decodes it: its data as the body of a response with the head.
        private func decode(_ event: ServerSentEvent) throws -> Element {
            if Element.self == ServerSentEvent.self, let event = event as? Element { return event }
            var response = events.head ?? HTTPResponse(request: request.underlyingRequest)
            response.body = Data(event.data.utf8)
            do {
                return try request.decodeBody(response)
            } catch {
                response.body = response.body.prefix(ResponseStream.excerptLimit)
                throw ResponseError(
                    kind: .undecodable, response: response, expectedType: Element.self, underlyingError: error)
            }
        }

        private mutating func finishing(with error: any Error) -> any Error {
            isFinished = true
            return error
        }

        private static func resetFailure(_ request: HTTPRequest) -> HTTPError {
            HTTPError(
                .resetInProgress, request: request,
                message: "the connection was reset, which ends its event streams; the stream was not resumed")
        }
    }
}

import Foundation

extension HTTPLoader {
    /// The Server-Sent Events of `request`'s response, read as the WHATWG HTML specification says (§9.2) and resumed
    /// through the chain when the connection ends.
    ///
    /// ```swift
    /// for try await event in chain.events(for: HTTPRequest(path: "/notifications")) {
    ///     print(event.type, event.data)
    /// }
    /// ```
    ///
    /// The request goes through the whole chain — authentication, retries, throttling — with `Accept:
    /// text/event-stream`. Events are read as the body arrives, one `next()` at a time: a slow consumer holds the
    /// transfer back. When the body ends or the connection fails (the server closed it, the network went away), the
    /// stream waits `reconnectionDelay` — or what the server's last `retry` field asked — on `clock`, and sends the
    /// request again with `Last-Event-ID` set to the last event ID, so the server can resume where it stopped; a
    /// token refreshed meanwhile is used, since the request passes the chain again.
    ///
    /// It ends when the consumer stops iterating (the transfer stops), when the server answers `204 No Content`
    /// (the specification's way to say "do not reconnect"), or with an error that cannot be resumed: a status other
    /// than 200 or a `Content-Type` other than `text/event-stream` (`HTTPError.Code.invalidResponse`, with the
    /// response), or a failure that another attempt would not change — cancelled, a reset, no credentials, an
    /// invalid request, an insecure connection.
    ///
    /// - Parameters:
    ///   - request: The request; its `Accept` is set to `text/event-stream`.
    ///   - reconnectionDelay: How long to wait before reconnecting when the server has not said (`retry`); 3 s by
    ///     default.
    ///   - clock: The clock the wait is measured on; a manual one in tests.
    public func events(
        for request: HTTPRequest,
        reconnectionDelay: Duration = .seconds(3),
        clock: any Clock<Duration> = ContinuousClock()
    ) -> ServerSentEvents {
        ServerSentEvents(request: request, reconnectionDelay: reconnectionDelay, clock: clock) { [self] attempt in
            await stream(attempt)
        }
    }
}

/// The Server-Sent Events of a response, resumed through the chain: see `HTTPLoader.events(for:reconnectionDelay:clock:)`.
///
/// Each iteration opens its own connection; iterate it once.
public struct ServerSentEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent

    /// Opens one connection: the chain's `stream(_:)`. A failure it returns ends the stream or is resumed, as the
    /// chain's would be; an error it throws ends the stream, never resumed (a layer above that checks heads).
    package typealias Open = @Sendable (HTTPRequest) async throws -> Result<StreamedResponse, HTTPError>

    let request: HTTPRequest
    let reconnectionDelay: Duration
    let clock: any Clock<Duration>
    let open: Open

    /// Events whose connections `open` opens.
    package init(request: HTTPRequest, reconnectionDelay: Duration, clock: any Clock<Duration>, open: @escaping Open) {
        self.request = request
        self.reconnectionDelay = reconnectionDelay
        self.clock = clock
        self.open = open
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(events: self)
    }

    /// Reads events, connecting and reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let events: ServerSentEvents
        private var parser = ServerSentEventParser()
        private var body: HTTPBodyStream?
        private var pending: [ServerSentEvent] = []
        private var hasConnected = false
        private var isFinished = false

        init(events: ServerSentEvents) {
            self.events = events
        }

        /// How many connections the iterator has opened: for tests of reconnection.
        package private(set) var connectionCount = 0
        /// The head of the response being read, or of the last one.
        package private(set) var head: HTTPResponse?

        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                if !pending.isEmpty { return pending.removeFirst() }
                if isFinished { return nil }
                guard let body else {
                    if hasConnected {
                        let delay = parser.reconnectionDelay ?? events.reconnectionDelay
                        do {
                            try await events.clock.sleep(for: delay)
                        } catch {
                            isFinished = true
                            throw HTTPError(
                                .cancelled, request: events.request,
                                message: "cancelled while waiting to reconnect to the event stream")
                        }
                    }
                    try await connect()
                    continue
                }
                let chunk: Data?
                do {
                    chunk = try await body.next()
                } catch {
                    // A body cut off by the network is resumed; one the consumer cancelled is not.
                    guard error.code != .cancelled, !Task.isCancelled else {
                        isFinished = true
                        throw error
                    }
                    endConnection()
                    continue
                }
                guard let chunk else {
                    endConnection()
                    continue
                }
                pending += parser.parse(chunk)
            }
        }

        /// The body ended: an unterminated event is discarded, and the next `next()` reconnects after the delay.
        private mutating func endConnection() {
            parser.finish()
            body?.cancel()
            body = nil
        }

        private mutating func connect() async throws {
            var request = events.request
            request.headers["Accept"] = "text/event-stream"
            if request.headers["Cache-Control"] == nil { request.headers["Cache-Control"] = "no-store" }
            if !parser.lastEventID.isEmpty { request.headers["Last-Event-ID"] = parser.lastEventID }
            hasConnected = true
            connectionCount += 1
            let opened: Result<StreamedResponse, HTTPError>
            do {
                opened = try await events.open(request)
            } catch {
                isFinished = true
                throw error
            }
            switch opened {
            case .failure(let error):
                if Self.isResumable(error), !Task.isCancelled { return }  // body stays nil: wait, then try again
                isFinished = true
                throw error
            case .success(let streamed):
                let head = streamed.head
                self.head = head
                if head.status == .noContent {
                    streamed.body.cancel()
                    isFinished = true
                    return
                }
                let mediaType = head.headers["Content-Type"]?.split(separator: ";").first?
                    .trimmingCharacters(in: .whitespaces).lowercased()
                guard head.status == .ok, mediaType == "text/event-stream" else {
                    streamed.body.cancel()
                    isFinished = true
                    throw HTTPError(
                        .invalidResponse, request: request,
                        message: "the server answered \(head.status) with \(mediaType ?? "no Content-Type"), not a "
                            + "200 text/event-stream, so the event stream cannot be read or resumed",
                        response: head)
                }
                body = streamed.body
            }
        }

        /// Whether another connection could go differently: the network failed, the server timed out or broke the
        /// response off. Not a cancellation, a reset, missing credentials, an invalid request or an insecure server.
        private static func isResumable(_ error: HTTPError) -> Bool {
            [.cannotConnect, .timedOut, .invalidResponse].contains(error.code)
        }
    }
}

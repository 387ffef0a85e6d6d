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
    public func events(
        for request: HTTPRequest,
        reconnectionDelay: Duration = .seconds(3),
        clock: any Clock<Duration> = ContinuousClock()
    ) -> ServerSentEvents {
        loader.events(for: request, reconnectionDelay: reconnectionDelay, clock: clock)
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
    /// every event is. An event whose data does not decode ends the stream with the decoder's error.
    public func events<Element: Decodable & Sendable>(
        of type: Element.Type,
        for request: HTTPRequest,
        eventType: String? = nil,
        decoder: some DataDecoder = JSONDecoder(),
        reconnectionDelay: Duration = .seconds(3),
        clock: any Clock<Duration> = ContinuousClock()
    ) -> AsyncThrowingCompactMapSequence<ServerSentEvents, Element> {
        events(for: request, reconnectionDelay: reconnectionDelay, clock: clock).compactMap { @Sendable event in
            if let eventType, event.type != eventType { return nil }
            return try decoder.decode(Element.self, from: Data(event.data.utf8))
        }
    }
}

import Foundation
public import HTTP
import HTTPAsyncHTTPClient
public import HTTPConnection

// What issue 24's stream budgets run: JSON Lines and lines through `Connection` over a terminal that answers with a
// body in memory (the chain streams it in 64 KiB chunks, as it streams a terminal's body that cannot stream), the
// Server-Sent Events parser over a body in memory, and a 1 GiB body streamed through `Connection` from nginx.

/// A terminal that answers every request with the same `200` and `body`, without a network; the chain's `stream`
/// hands the body over as a stream of 64 KiB chunks.
public final class CannedBody: HTTPLoader, @unchecked Sendable {  // Sendable: only `let` properties
    private let body: Data
    private let headers: HTTPHeaders

    public init(_ body: Data, contentType: String) {
        self.body = body
        headers = ["Content-Type": contentType]
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        .success(HTTPResponse(request: request, status: .ok, headers: headers, body: body))
    }
}

/// The person of ``personJSON`` as an app decodes it (the date kept as its text, so that the decoder's date strategy
/// is not what is measured).
public struct StreamedPerson: Decodable, Sendable {
    public struct Address: Decodable, Sendable {
        public var street: String
        public var city: String
        public var zip: String
    }

    public var id: Int
    public var name: String
    public var email: String
    public var age: Int
    public var verified: Bool
    public var roles: [String]
    public var address: Address
    public var createdAt: String
}

/// `count` lines of JSON Lines, each the person (213 bytes and a line feed).
public func personJSONLines(count: Int) -> Data {
    var body = Data(capacity: count * (personJSON.utf8.count + 1))
    let line = Data((personJSON + "\n").utf8)
    for _ in 0..<count { body.append(line) }
    return body
}

/// How a JSON Lines body is read through `Connection`, for the JSON Lines budget.
public enum JSONLinesReading: String, CaseIterable, Sendable {
    /// `Connection.jsonLines(for:)`: the product's JSON Lines decoding, each line decoded by a `Request<StreamedPerson>`.
    case jsonLines = "Connection.jsonLines(for:)"
    /// `Connection.lines(for:)` and a plain loop that decodes each non-empty line with a `JSONDecoder`: the
    /// baseline the budget names.
    case plainLoop = "Connection.lines(for:) + JSONDecoder in a loop"
    /// `Connection.lines(for:)` alone, nothing decoded: what the line stream itself costs.
    case linesOnly = "Connection.lines(for:) alone (no decoding)"
}

/// A `Connection` over the default chain over a ``CannedBody`` of JSON Lines, and the request the chain answers
/// with it.
public struct JSONLinesSubject: Sendable {
    public let connection: Connection
    public let byteCount: Int
    public let lineCount: Int

    public init(lines: Int) {
        let body = personJSONLines(count: lines)
        byteCount = body.count
        lineCount = lines
        connection = Connection(loader: makeDefaultChain(terminal: CannedBody(body, contentType: "application/jsonl")))
    }

    /// Reads the whole body once, as `reading` says; returns the number of values (or lines) read.
    public func read(_ reading: JSONLinesReading) async throws -> Int {
        let request = makeDefaultChainRequest()
        var count = 0
        switch reading {
        case .jsonLines:
            for try await person in connection.jsonLines(for: Request<StreamedPerson>(underlyingRequest: request)) {
                count &+= person.id == 42 ? 1 : 0
            }
        case .plainLoop:
            let decoder = JSONDecoder()
            for try await line in connection.lines(for: Request<String>(underlyingRequest: request)) {
                if line.isEmpty { continue }
                let person = try decoder.decode(StreamedPerson.self, from: Data(line.utf8))
                count &+= person.id == 42 ? 1 : 0
            }
        case .linesOnly:
            for try await line in connection.lines(for: Request<String>(underlyingRequest: request)) where !line.isEmpty
            {
                count &+= 1
            }
        }
        guard count == lineCount else { throw LoopbackError.unexpectedResponse }
        return count
    }
}

/// The kinds of event stream the Server-Sent Events budget parses.
public enum EventStreamShape: String, CaseIterable, Sendable {
    /// `id`, `event` and one `data` line holding the 213-byte JSON person, then a blank line: 262 bytes an event.
    case jsonEvents = "id + event + 213-byte JSON data (262 B/event)"
    /// A language model's token stream: one short `data` line of JSON per token (about 60 bytes an event).
    case tokens = "token stream: one ~45-byte data line (58 B/event)"
    /// Long events: 16 `data` lines of 1 KiB each, joined by the parser.
    case longData = "16 data lines of 1 KiB each (16.5 KiB/event)"

    /// An event stream of this shape of about `bytes` bytes, and the number of events in it.
    public func body(bytes: Int) -> (body: [UInt8], events: Int) {
        var body: [UInt8] = []
        body.reserveCapacity(bytes + 20_000)
        var events = 0
        let kilobyte = String(repeating: "x", count: 1_024)
        while body.count < bytes {
            let event: String
            switch self {
            case .jsonEvents: event = "id: \(100_000 + events)\nevent: person\ndata: \(personJSON)\n\n"
            case .tokens: event = #"data: {"choices":[{"delta":{"content":" word\#(events % 10)"}}]}"# + "\n\n"
            case .longData: event = String(repeating: "data: \(kilobyte)\n", count: 16) + "\n"
            }
            body.append(contentsOf: event.utf8)
            events += 1
        }
        return (body, events)
    }
}

/// `body` cut into chunks of `chunkSize` bytes, as a transport delivers a body (`Data`, as `HTTPBodyStream` yields it).
public func chunked(_ body: [UInt8], chunkSize: Int = 64 * 1_024) -> [Data] {
    stride(from: 0, to: body.count, by: chunkSize).map { Data(body[$0..<min($0 + chunkSize, body.count)]) }
}

/// Parses `chunks` with a new `ServerSentEventParser`, as `HTTPLoader.events(for:)` feeds it; returns the number of
/// events.
public func parseEventStream(_ chunks: [Data]) -> Int {
    var parser = ServerSentEventParser()
    var events = 0
    for chunk in chunks { events &+= parser.parse(chunk).count }
    parser.finish()
    return events
}

/// Streams the body of `url` through a `Connection` over the default chain over `URLSessionLoader` (or
/// `AsyncHTTPClientLoader`), reading its chunks and dropping them: what issue 24's 1 GiB budget measures. `warmUp` is
/// called once the connection has made one request and before the stream starts; returns the bytes read.
public func streamThroughConnection(
    _ url: URL, asyncHTTPClient: Bool, warmUp: () -> Void
) async throws -> Int64 {
    var origin = URLComponents(url: url, resolvingAgainstBaseURL: false)!
    origin.path = ""
    let environment = ServerEnvironment(baseURL: origin.url!)!
    let ahc = asyncHTTPClient ? AsyncHTTPClientLoader() : nil
    let terminal: HTTPLoader = ahc.map { $0 as HTTPLoader } ?? URLSessionLoader()
    let connection = Connection(loader: makeDefaultChain(terminal: terminal, environment: environment))
    var person = makeDefaultChainRequest()
    person.path = personPath
    _ = try await connection.stream(Request<Data>(underlyingRequest: person)).chunks.reduce(0) { $0 + $1.count }
    warmUp()
    var request = makeDefaultChainRequest()
    request.path = url.path
    let stream = try await connection.stream(Request<Data>(underlyingRequest: request))
    var bytes: Int64 = 0
    for try await chunk in stream.chunks { bytes += Int64(chunk.count) }
    if let ahc { await ahc.shutdown() }
    return bytes
}

/// A `Connection` over the default chain over a ``CannedBody`` of an event stream: the parser as the product runs
/// it, in `Connection.events(for:)`, behind the chain and the body stream.
public struct EventStreamSubject: Sendable {
    public let connection: Connection
    public let byteCount: Int
    public let eventCount: Int

    public init(_ shape: EventStreamShape, bytes: Int) {
        let (body, events) = shape.body(bytes: bytes)
        byteCount = body.count
        eventCount = events
        connection = Connection(
            loader: makeDefaultChain(terminal: CannedBody(Data(body), contentType: "text/event-stream")))
    }

    /// Reads every event of the body once (the stream would reconnect at its end: the iteration stops at the last
    /// event); returns their number.
    public func read() async throws -> Int {
        var count = 0
        let events = Request<ServerSentEvent>(underlyingRequest: makeDefaultChainRequest())
        for try await event in connection.events(for: events) {
            count &+= event.data.isEmpty ? 0 : 1
            if count == eventCount { break }
        }
        return count
    }
}

public import Foundation
public import HTTP

extension Connection {
    /// Sends `request` through the chain and returns as soon as an accepted response's head arrives; its body
    /// follows as a stream, read as raw chunks, lines or JSON Lines, with backpressure: the transfer goes only as
    /// fast as you read.
    ///
    /// ```swift
    /// let export = try await connection.stream(Request<Data>(underlyingRequest: HTTPRequest(path: "/export")))
    /// print(export.status, export.headers["Content-Type"] ?? "")
    /// for try await person in export.jsonLines(of: Person.self) {
    ///     print(person.name)
    /// }
    /// ```
    ///
    /// The request's status rule and error decoding apply to the head, before any byte of the body is handed over:
    /// a status it does not accept throws what ``request(_:)`` throws for it — a ``ServerError`` when the request
    /// decodes error bodies (``Request/decodingErrors(as:decoder:)``) and the body decodes, a ``ResponseError`` of
    /// kind ``ResponseError/Kind/unacceptableStatus`` otherwise — made from the head and the first 4 KiB of the
    /// body (the rest is not read). The request's decode closure is not used: the body is yours to read. A failure
    /// before the head arrives throws the chain's `HTTPError`. Cancelling the task that reads the body, or dropping
    /// the stream, stops the transfer; ``reset(mode:)`` ends the body with `HTTPError.Code.resetInProgress`.
    public func stream(_ request: Request<some Any>) async throws -> ResponseStream {
        ResponseStream(reader: try await openBody(of: request))
    }

    /// The lines of `request`'s response body as they arrive, without their terminators (LF, CR or CRLF), each
    /// decoded as the request decodes a body — as text in the `charset` of the response's `Content-Type`, UTF-8
    /// when none is given, for a `Request<String>(underlyingRequest:)`; a last line without a terminator is a line
    /// too.
    ///
    /// ```swift
    /// let tail = Request<String>(underlyingRequest: HTTPRequest(path: "/logs/tail"))
    /// for try await line in connection.lines(for: tail) {
    ///     print(line)
    /// }
    /// ```
    ///
    /// The request is sent when the iteration begins, and its head is checked as ``stream(_:)`` checks it, before
    /// any line. A line longer than `maximumLineLength` bytes ends the iteration with
    /// `HTTPError.Code.invalidResponse` rather than grow without bound; a line that does not decode with a
    /// ``ResponseError`` naming the line.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - maximumLineLength: The most bytes a line may have; 1 MiB by default.
    public func lines(for request: Request<String>, maximumLineLength: Int = 1 << 20) -> ResponseLines {
        ResponseLines(
            lines: LineSequence(
                source: .request { try await self.openBody(of: request) }, maximumLineLength: maximumLineLength,
                skipsEmptyLines: false, decode: Self.decodeLine(with: request)))
    }

    /// The values of a JSON Lines (NDJSON) response, each line decoded as the request decodes a body, as the body
    /// arrives: for exports, logs and the streaming APIs of language models.
    ///
    /// ```swift
    /// struct Reading: Decodable, Sendable { var sensor: String; var value: Double }
    ///
    /// let readings = Request<Reading>(underlyingRequest: HTTPRequest(path: "/readings"))
    /// for try await reading in connection.jsonLines(for: readings) {
    ///     print(reading.sensor, reading.value)
    /// }
    /// ```
    ///
    /// The request describes one line: a `Request<Reading>` made with `init(underlyingRequest:decoder:)` decodes each
    /// line with its decoder, and its status rule and error decoding apply to the head, before any value, as
    /// ``stream(_:)`` applies them. Empty lines are skipped. A line that does not decode ends the iteration with a
    /// ``ResponseError`` of kind ``ResponseError/Kind/undecodable`` whose ``ResponseError/line`` is its number;
    /// otherwise it throws as ``lines(for:maximumLineLength:)`` does.
    ///
    /// - Parameters:
    ///   - request: The request to send, decoding one line.
    ///   - maximumLineLength: The most bytes a line may have; 1 MiB by default.
    public func jsonLines<Element: Sendable>(
        for request: Request<Element>, maximumLineLength: Int = 1 << 20
    ) -> JSONLines<Element> {
        JSONLines(
            lines: LineSequence(
                source: .request { try await self.openBody(of: request) }, maximumLineLength: maximumLineLength,
                skipsEmptyLines: true, decode: Self.decodeLine(with: request)))
    }

    /// Sends `request` and returns the reader of its response's body once the head has arrived and the request
    /// accepts its status.
    func openBody<Response>(of request: Request<Response>) async throws -> BodyReader {
        switch await loader.stream(request.underlyingRequest) {
        case .failure(let error):
            throw error
        case .success(let streamed):
            try await request.checkHead(of: streamed)
            return BodyReader(streamed, watch: ResetWatch(openTransfers))
        }
    }

    /// Decodes one line with `request`'s decode closure, given a response with the head and the line as its body.
    static func decodeLine<Element>(with request: Request<Element>) -> LineSequence<Element>.Decode {
        let decodeBody = request.decodeBody
        return { line, head in
            var response = head
            response.body = Data(line)
            return try decodeBody(response)
        }
    }
}

extension Request {
    /// Checks a streamed response's head as ``decode(_:)`` checks a status, before any of its body is handed over:
    /// for a status the request does not accept, reads up to 4 KiB of the body (the rest is not read), stops the
    /// transfer and throws the request's error for that response.
    func checkHead(of streamed: StreamedResponse) async throws {
        guard !isAcceptable(streamed.head.status) else { return }
        var response = streamed.head
        response.body = await Self.excerpt(of: streamed.body)
        if Task.isCancelled { throw HTTPError(.cancelled, request: response.request, response: response) }
        try checkStatus(of: response)
    }

    /// Up to 4 KiB of a body, for the error of a status that is not accepted; the rest is not read.
    private static func excerpt(of body: HTTPBodyStream) async -> Data {
        var excerpt = Data()
        do {
            for try await chunk in body {
                excerpt.append(chunk)
                if excerpt.count >= ResponseStream.excerptLimit { break }
            }
        } catch {
            // What arrived before the failure is the excerpt.
        }
        body.cancel()
        return excerpt.prefix(ResponseStream.excerptLimit)
    }
}

/// An accepted response whose body is read as it arrives: see ``Connection/stream(_:)``.
///
/// Read the body once, in one of its forms: ``chunks``, ``lines(maximumLength:)`` or ``jsonLines(of:decoder:maximumLineLength:)``.
/// Dropping the stream, and every sequence made from it, stops the transfer.
public struct ResponseStream: Sendable {
    /// The most bytes of a body an error keeps.
    static let excerptLimit = 4_096

    let reader: BodyReader

    /// The response's head: status, header fields, URL, the request as sent. Its body is empty.
    public var head: HTTPResponse { reader.head }
    /// The response's status.
    public var status: HTTPStatus { reader.head.status }
    /// The response's header fields.
    public var headers: HTTPHeaders { reader.head.headers }

    /// The body's bytes, in the chunks the transport delivers.
    public var chunks: ResponseChunks { ResponseChunks(source: .open(reader)) }

    /// The body's lines, as ``Connection/lines(for:maximumLineLength:)`` reads them, decoded as UTF-8.
    public func lines(maximumLength: Int = 1 << 20) -> ResponseLines {
        ResponseLines(
            lines: LineSequence(
                source: .open(reader), maximumLineLength: maximumLength, skipsEmptyLines: false,
                decode: { line, _ in
                    guard let text = String(validating: line, as: UTF8.self) else {
                        throw TextDecodingFailure(encoding: .utf8)
                    }
                    return text
                }))
    }

    /// The body's JSON Lines values, as ``Connection/jsonLines(for:maximumLineLength:)`` reads them, each line
    /// decoded as `Element` with `decoder`.
    public func jsonLines<Element: Decodable & Sendable>(
        of type: Element.Type, decoder: some DataDecoder = JSONDecoder(), maximumLineLength: Int = 1 << 20
    ) -> JSONLines<Element> {
        JSONLines(
            lines: LineSequence(
                source: .open(reader), maximumLineLength: maximumLineLength, skipsEmptyLines: true,
                decode: { line, _ in try decoder.decode(Element.self, from: Data(line)) }))
    }

    /// Stops the transfer; reading the body then throws `HTTPError.Code.cancelled`.
    public func cancel() {
        reader.body.cancel()
    }
}

/// A response body's chunks: see ``ResponseStream/chunks``.
public struct ResponseChunks: AsyncSequence, Sendable {
    public typealias Element = Data

    let source: StreamSource

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: source)
    }

    /// Reads the next chunk per `next()`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var body: BodyCursor

        init(source: StreamSource) {
            body = BodyCursor(source: source)
        }

        public mutating func next() async throws -> Data? {
            try await body.next()
        }
    }
}

/// A response body's lines: see ``Connection/lines(for:maximumLineLength:)``.
public struct ResponseLines: AsyncSequence, Sendable {
    public typealias Element = String

    let lines: LineSequence<String>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lines: lines.makeCursor())
    }

    /// Reads as many chunks as the next line needs per `next()`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var lines: DecodedLineCursor<String>

        public mutating func next() async throws -> String? {
            try await lines.next()
        }
    }
}

/// The values of a JSON Lines body: see ``Connection/jsonLines(for:maximumLineLength:)``.
public struct JSONLines<Element: Sendable>: AsyncSequence, Sendable {
    let lines: LineSequence<Element>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lines: lines.makeCursor())
    }

    /// Decodes the next non-empty line per `next()`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var lines: DecodedLineCursor<Element>

        public mutating func next() async throws -> Element? {
            try await lines.next()
        }
    }
}

/// A body read line by line, each line decoded: what ``ResponseLines`` and ``JSONLines`` iterate.
struct LineSequence<Element>: Sendable {
    /// Decodes a line, given the response's head.
    typealias Decode = @Sendable (ArraySlice<UInt8>, HTTPResponse) throws -> Element

    let source: StreamSource
    let maximumLineLength: Int
    let skipsEmptyLines: Bool
    let decode: Decode

    func makeCursor() -> DecodedLineCursor<Element> {
        DecodedLineCursor(
            lines: LineCursor(source: source, maximumLineLength: maximumLineLength), skipsEmptyLines: skipsEmptyLines,
            decode: decode)
    }
}

/// Decodes a body's lines one per `next()`; throws once, then ends.
struct DecodedLineCursor<Element> {
    var lines: LineCursor
    let skipsEmptyLines: Bool
    let decode: LineSequence<Element>.Decode

    mutating func next() async throws -> Element? {
        while let line = try await lines.next() {
            if skipsEmptyLines, line.isEmpty { continue }
            do {
                return try decode(line, lines.head ?? HTTPResponse(request: HTTPRequest()))
            } catch {
                throw lines.failure(line: line, expectedType: Element.self, underlyingError: error)
            }
        }
        return nil
    }
}

/// Where a body comes from: a stream already open, or a request sent when the iteration begins.
enum StreamSource: Sendable {
    case open(BodyReader)
    /// Sends the request and checks its head.
    case request(@Sendable () async throws -> BodyReader)
}

/// One accepted response's body being read, and its part in its connection's resets.
final class BodyReader: Sendable {
    let head: HTTPResponse
    let body: HTTPBodyStream
    private let watch: ResetWatch

    init(_ streamed: StreamedResponse, watch: ResetWatch) {
        head = streamed.head
        body = streamed.body
        self.watch = watch
        watch.onReset { [body] in body.cancel() }
    }

    deinit {
        body.cancel()
    }

    /// The next chunk; `nil` at the end of the body.
    func next() async throws(HTTPError) -> Data? {
        if watch.isReset { throw resetFailure }
        var chunks = body.makeAsyncIterator()
        do {
            return try await chunks.next()
        } catch {
            if watch.isReset { throw resetFailure }
            throw error
        }
    }

    private var resetFailure: HTTPError {
        HTTPError(
            .resetInProgress, request: head.request,
            message: "the connection was reset while the response's body was being read", response: head)
    }
}

/// Reads a body chunk by chunk, opening it first when it comes from a request; throws once, then ends.
struct BodyCursor {
    private var source: StreamSource?
    private(set) var reader: BodyReader?

    init(source: StreamSource) {
        switch source {
        case .open(let reader): self.reader = reader
        case .request: self.source = source
        }
    }

    mutating func next() async throws -> Data? {
        if reader == nil, case .request(let open) = source {
            source = nil
            reader = try await open()
        }
        guard let reader else { return nil }
        do {
            guard let chunk = try await reader.next() else {
                self.reader = nil
                return nil
            }
            return chunk
        } catch {
            self.reader = nil
            throw error
        }
    }
}

/// Reads a body line by line; throws once, then ends.
struct LineCursor {
    private var body: BodyCursor
    private var splitter: LineSplitter
    private var isFinished = false
    /// The head, for decoding and errors; set once the body is open.
    private(set) var head: HTTPResponse?

    init(source: StreamSource, maximumLineLength: Int) {
        body = BodyCursor(source: source)
        splitter = LineSplitter(maximumLength: maximumLineLength)
    }

    mutating func next() async throws -> ArraySlice<UInt8>? {
        while !isFinished {
            do {
                if let line = try splitter.nextLine() { return line }
            } catch {
                isFinished = true
                body.reader?.body.cancel()
                let head = body.reader?.head
                throw HTTPError(
                    .invalidResponse, request: head?.request ?? HTTPRequest(),
                    message: "line \(error.lineNumber) of the response's body is longer than "
                        + "\(splitter.maximumLength) bytes, the most the stream takes", response: head)
            }
            let chunk: Data?
            do {
                chunk = try await body.next()
                if head == nil { head = body.reader?.head }
            } catch {
                isFinished = true
                throw error
            }
            guard let chunk else {
                isFinished = true
                return splitter.finish()
            }
            splitter.append(chunk)
        }
        return nil
    }

    /// The error for `line`, the last one returned, that does not decode as `expectedType`; the iteration ends.
    mutating func failure(line: ArraySlice<UInt8>, expectedType: Any.Type, underlyingError: any Error) -> ResponseError
    {
        isFinished = true
        body.reader?.body.cancel()
        var response = head ?? HTTPResponse(request: HTTPRequest())
        response.body = Data(line.prefix(ResponseStream.excerptLimit))
        var error = ResponseError(
            kind: .undecodable, response: response, expectedType: expectedType, underlyingError: underlyingError)
        error.line = splitter.lineNumber
        return error
    }
}

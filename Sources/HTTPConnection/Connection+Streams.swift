public import Foundation
public import HTTP

extension Connection {
    /// Sends `request` through the chain and returns as soon as an accepted response's head arrives; its body
    /// follows as a stream, read as raw chunks, lines or JSON Lines, with backpressure: the transfer goes only as
    /// fast as you read.
    ///
    /// ```swift
    /// let export = try await connection.stream(HTTPRequest(path: "/export"))
    /// print(export.status, export.headers["Content-Type"] ?? "")
    /// for try await person in export.jsonLines(of: Person.self) {
    ///     print(person.name)
    /// }
    /// ```
    ///
    /// A status other than 2xx throws a ``ResponseError`` of kind ``ResponseError/Kind/unacceptableStatus`` whose
    /// response has the head and the first 4 KiB of the body (the rest is not read), as ``request(_:)`` throws for
    /// the same status; a failure before the head arrives throws the chain's `HTTPError`. Cancelling the task that
    /// reads the body, or dropping the stream, stops the transfer; ``reset(mode:)`` ends the body with
    /// `HTTPError.Code.resetInProgress`.
    public func stream(_ request: HTTPRequest) async throws -> ResponseStream {
        switch await loader.stream(request) {
        case .failure(let error):
            throw error
        case .success(let streamed):
            guard streamed.head.status.isSuccess else {
                var response = streamed.head
                response.body = await Self.excerpt(of: streamed.body)
                if Task.isCancelled { throw HTTPError(.cancelled, request: response.request, response: response) }
                throw ResponseError(kind: .unacceptableStatus, response: response, expectedType: ResponseStream.self)
            }
            return ResponseStream(reader: BodyReader(streamed, watch: ResetWatch(openTransfers)))
        }
    }

    /// The lines of `request`'s response body as they arrive, decoded as UTF-8, without their terminators (LF, CR
    /// or CRLF); a last line without a terminator is a line too.
    ///
    /// ```swift
    /// for try await line in connection.lines(for: HTTPRequest(path: "/logs/tail")) {
    ///     print(line)
    /// }
    /// ```
    ///
    /// The request is sent when the iteration begins, and throws as ``stream(_:)`` does. A line longer than
    /// `maximumLineLength` bytes ends the iteration with `HTTPError.Code.invalidResponse` rather than grow without
    /// bound; a line that is not UTF-8 with a ``ResponseError`` naming the line.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - maximumLineLength: The most bytes a line may have; 1 MiB by default.
    public func lines(for request: HTTPRequest, maximumLineLength: Int = 1 << 20) -> ResponseLines {
        ResponseLines(source: .request(self, request), maximumLineLength: maximumLineLength)
    }

    /// The values of a JSON Lines (NDJSON) response, decoded one line at a time as `Element` as the body arrives:
    /// for exports, logs and the streaming APIs of language models.
    ///
    /// ```swift
    /// struct Reading: Decodable, Sendable { var sensor: String; var value: Double }
    ///
    /// for try await reading in connection.jsonLines(of: Reading.self, for: HTTPRequest(path: "/readings")) {
    ///     print(reading.sensor, reading.value)
    /// }
    /// ```
    ///
    /// Empty lines are skipped. A line that does not decode ends the iteration with a ``ResponseError`` of kind
    /// ``ResponseError/Kind/undecodable`` whose ``ResponseError/line`` is its number; otherwise it throws as
    /// ``lines(for:maximumLineLength:)`` does.
    ///
    /// - Parameters:
    ///   - type: The type of each line's value.
    ///   - request: The request to send.
    ///   - decoder: Decodes each line; a `JSONDecoder` by default.
    ///   - maximumLineLength: The most bytes a line may have; 1 MiB by default.
    public func jsonLines<Element: Decodable & Sendable>(
        of type: Element.Type,
        for request: HTTPRequest,
        decoder: some DataDecoder = JSONDecoder(),
        maximumLineLength: Int = 1 << 20
    ) -> JSONLines<Element> {
        JSONLines(source: .request(self, request), decoder: decoder, maximumLineLength: maximumLineLength)
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

    /// The body's lines, as ``Connection/lines(for:maximumLineLength:)`` reads them.
    public func lines(maximumLength: Int = 1 << 20) -> ResponseLines {
        ResponseLines(source: .open(reader), maximumLineLength: maximumLength)
    }

    /// The body's JSON Lines values, as ``Connection/jsonLines(of:for:decoder:maximumLineLength:)`` reads them.
    public func jsonLines<Element: Decodable & Sendable>(
        of type: Element.Type, decoder: some DataDecoder = JSONDecoder(), maximumLineLength: Int = 1 << 20
    ) -> JSONLines<Element> {
        JSONLines(source: .open(reader), decoder: decoder, maximumLineLength: maximumLineLength)
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

    let source: StreamSource
    let maximumLineLength: Int

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lines: LineCursor(source: source, maximumLineLength: maximumLineLength))
    }

    /// Reads as many chunks as the next line needs per `next()`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var lines: LineCursor

        public mutating func next() async throws -> String? {
            guard let line = try await lines.next() else { return nil }
            if let text = String(validating: line, as: UTF8.self) { return text }
            throw lines.failure(
                line: line, expectedType: String.self,
                underlyingError: TextDecodingFailure(encoding: .utf8))
        }
    }
}

/// The values of a JSON Lines body: see ``Connection/jsonLines(of:for:decoder:maximumLineLength:)``.
public struct JSONLines<Element: Decodable & Sendable>: AsyncSequence, Sendable {
    let source: StreamSource
    let decoder: any DataDecoder
    let maximumLineLength: Int

    init(source: StreamSource, decoder: some DataDecoder, maximumLineLength: Int) {
        self.source = source
        self.decoder = decoder
        self.maximumLineLength = maximumLineLength
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lines: LineCursor(source: source, maximumLineLength: maximumLineLength), decoder: decoder)
    }

    /// Decodes the next non-empty line per `next()`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var lines: LineCursor
        let decoder: any DataDecoder

        public mutating func next() async throws -> Element? {
            while let line = try await lines.next() {
                if line.isEmpty { continue }
                do {
                    return try decoder.decode(Element.self, from: Data(line))
                } catch {
                    throw lines.failure(line: line, expectedType: Element.self, underlyingError: error)
                }
            }
            return nil
        }
    }
}

/// Where a body comes from: a stream already open, or a request sent when the iteration begins.
enum StreamSource: Sendable {
    case open(BodyReader)
    case request(Connection, HTTPRequest)
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
        if reader == nil, case .request(let connection, let request) = source {
            source = nil
            reader = try await connection.stream(request).reader
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
    /// The head, for errors; set once the body is open.
    private var head: HTTPResponse?

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

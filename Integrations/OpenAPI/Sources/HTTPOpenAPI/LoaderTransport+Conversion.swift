import Foundation
import HTTP
import HTTPTypes
import OpenAPIRuntime
import Synchronization

extension HTTP.HTTPRequest {
    /// The chain's request for an OpenAPI operation's request: its method, header fields and body, at `server`'s URL
    /// followed by the request's path and query.
    ///
    /// Nothing is validated here: a request whose URL cannot be sent fails in the chain's terminal with
    /// `HTTPError.Code.invalidRequest`, like any other.
    init(
        _ request: HTTPTypes.HTTPRequest, body: OpenAPIRuntime.HTTPBody?, server: ServerURL, operationID: String
    ) {
        let headers = HTTPHeaders(
            request.headerFields.map { HTTPHeaders.Field(name: $0.name.rawName, value: $0.value) })
        let loaderBody: any HTTP.HTTPBody = body.map(StreamBody.init(openAPIBody:)) ?? EmptyBody()
        let method = HTTPMethod(rawValue: request.method.rawValue)
        let basePath: String
        if let parts = server.parts {
            self.init(
                method: method, scheme: parts.scheme, host: parts.host, port: parts.port, path: "", headers: headers,
                body: loaderBody)
            basePath = parts.percentEncodedPath
        } else {
            // A server URL that cannot be sent: taken apart again, so that the terminal's error names it.
            self.init(method: method, url: server.url, headers: headers, body: loaderBody)
            fragment = nil
            basePath = percentEncodedPath
        }
        // The operation's path follows the server URL's path, and its query replaces the server URL's, as
        // swift-openapi-urlsession composes them; a server URL ending in `/` does not double the slash.
        let target = request.path ?? ""
        let queryStart = target.firstIndex(of: "?")
        let path = target[..<(queryStart ?? target.endIndex)]
        var joined = basePath
        if joined.hasSuffix("/"), path.hasPrefix("/") { joined.removeLast() }
        joined += path
        percentEncodedPath = joined
        percentEncodedQuery = queryStart.map { String(target[target.index(after: $0)...]) }
        openAPIOperationID = operationID
    }
}

/// A server URL taken apart once into the parts every request to it shares.
struct ServerURL: Sendable {
    /// The parts of a URL that every request at it shares.
    struct Parts: Sendable {
        var scheme: String
        var host: String?
        var port: Int?
        var percentEncodedPath: String
    }

    /// The URL.
    let url: URL
    /// Its parts; `nil` for a URL that cannot be sent (unparsable, without a host, a scheme other than `http` or
    /// `https`), whose requests are made from the URL itself, so that they fail as the chain fails such a URL.
    let parts: Parts?

    init(_ url: URL) {
        self.url = url
        let request = HTTP.HTTPRequest(url: url)
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        // A relative URL (no scheme, not even an empty one) is usable when it parses; an absolute one when its
        // request's URL passes the checks a terminal makes, which a URL that cannot be sent never does.
        let isRelative = components != nil && components?.scheme == nil && url.scheme == nil
        let isUsable = isRelative || request.url != nil
        parts =
            isUsable
            ? Parts(
                scheme: request.scheme, host: request.host, port: request.port,
                percentEncodedPath: request.percentEncodedPath) : nil
    }
}

/// The first server URL a transport sent to, taken apart: a generated client sends every operation to the one it was
/// made with, so its URL is parsed once, not per request. Another URL is taken apart for each request, as the first
/// one stays.
final class ServerURLCache: Sendable {
    /// A ``ServerURL`` in a reference, as the atomic reference needs.
    private final class Entry: Sendable {
        let server: ServerURL
        init(_ server: ServerURL) { self.server = server }
    }

    // An atomic reference rather than a lock: reading it is one atomic load, and ThreadSanitizer sees it.
    private let first = AtomicLazyReference<Entry>()

    /// `url` taken apart: the kept parts when it is the first URL.
    func server(for url: URL) -> ServerURL {
        if let kept = first.load() {
            return kept.server.url == url ? kept.server : ServerURL(url)
        }
        let server = ServerURL(url)
        _ = first.storeIfNil(Entry(server))  // unless another request stored its URL first
        return server
    }
}

extension StreamBody {
    /// A body that streams an OpenAPI body's chunks as the transport sends them: sent again as often as a loader
    /// needs when the body can be iterated more than once, and once only otherwise.
    init(openAPIBody body: OpenAPIRuntime.HTTPBody) {
        let length: Int64? = if case .known(let count) = body.length { count } else { nil }
        switch body.iterationBehavior {
        case .multiple:
            self.init(length: length) { OpenAPIBodyChunks(body: body) }
        case .single:
            self.init(length: length, OpenAPIBodyChunks(body: body))
        }
    }
}

/// An OpenAPI body's chunks as `Data`, iterated as the consumer asks for them.
struct OpenAPIBodyChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let body: OpenAPIRuntime.HTTPBody

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: OpenAPIRuntime.HTTPBody.Iterator

        mutating func next() async throws -> Data? {
            guard let chunk = try await base.next() else { return nil }
            return Data(chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator())
    }
}

/// A streamed response body's chunks as an OpenAPI body's byte chunks, taken from the stream as the consumer asks
/// for them: the stream's backpressure reaches the transport.
struct ResponseBodyChunks: AsyncSequence, Sendable {
    typealias Element = OpenAPIRuntime.HTTPBody.ByteChunk

    let stream: HTTPBodyStream

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: HTTPBodyStream.AsyncIterator

        mutating func next() async throws -> OpenAPIRuntime.HTTPBody.ByteChunk? {
            guard let chunk = try await base.next() else { return nil }
            return ArraySlice(chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }
}

extension HTTPTypes.HTTPResponse {
    /// The OpenAPI response for the chain's response to a request whose delivery is
    /// `ResponseDelivery.stream`: the head at once, the body as it arrives — from the response's stream, or from
    /// memory when the terminal could not stream it, as `HTTPLoader.stream(_:)` hands it over (none for a `HEAD` or
    /// `CONNECT` request, whose stream is stopped).
    static func converting(
        streamed response: HTTP.HTTPResponse, method: HTTPTypes.HTTPRequest.Method
    ) throws(HTTPError) -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?) {
        let stream = response.bodyStream ?? HTTPBodyStream(request: response.request, completeBody: response.body)
        let head: HTTPTypes.HTTPResponse
        do {
            head = try HTTPTypes.HTTPResponse(response)
        } catch {
            stream.cancel()
            // The error's response is the head alone, as `HTTPLoader.stream(_:)` hands it over.
            var failure = error
            failure.response?.bodyStream = nil
            failure.response?.body = Data()
            throw failure
        }
        guard hasBody(method) else {
            stream.cancel()
            return (head, nil)
        }
        let body = OpenAPIRuntime.HTTPBody(
            ResponseBodyChunks(stream: stream), length: bodyLength(of: response), iterationBehavior: .single)
        return (head, body)
    }

    /// The OpenAPI response for a buffered response of the chain.
    static func converting(
        _ response: HTTP.HTTPResponse, method: HTTPTypes.HTTPRequest.Method
    ) throws(HTTPError) -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?) {
        (try HTTPTypes.HTTPResponse(response), hasBody(method) ? OpenAPIRuntime.HTTPBody(response.body) : nil)
    }

    /// The head of `response`: its status and the header fields whose names are valid (values are legalized, as
    /// `HTTPField` does). A status outside 0...999, which `HTTPTypes` cannot represent, fails the response with
    /// `HTTPError.Code.invalidResponse` rather than trap.
    init(_ response: HTTP.HTTPResponse) throws(HTTPError) {
        let code = response.status.rawValue
        guard (0...999).contains(code) else {
            throw HTTPError(
                .invalidResponse, request: response.request,
                message: "LoaderTransport cannot hand a response with status \(code) to OpenAPI code, which takes "
                    + "0...999",
                response: response)
        }
        let headers = response.headers
        var converted: [HTTPField] = []
        converted.reserveCapacity(headers.count)
        for field in headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            converted.append(HTTPField(name: name, value: field.value))
        }
        // One call that adds them all: `HTTPFields` appends one field through the generic `replaceSubrange`.
        var fields = HTTPFields()
        fields.replaceSubrange(fields.endIndex..<fields.endIndex, with: converted)
        self.init(status: .init(code: code), headerFields: fields)
    }

    private static func hasBody(_ method: HTTPTypes.HTTPRequest.Method) -> Bool {
        method != .head && method != .connect
    }

    /// The body's length when the head states it: `Content-Length`, unless a `Content-Encoding` the transport
    /// decoded makes it the length of other bytes; none for the statuses that have no body.
    private static func bodyLength(of head: HTTP.HTTPResponse) -> OpenAPIRuntime.HTTPBody.Length {
        let status = head.status.rawValue
        if status < 200 || status == 204 || status == 304 { return .known(0) }
        if let encoding = head.headers["Content-Encoding"], encoding.lowercased() != "identity" { return .unknown }
        guard let text = head.headers["Content-Length"], let length = Int64(text), length >= 0 else {
            return .unknown
        }
        return .known(length)
    }
}

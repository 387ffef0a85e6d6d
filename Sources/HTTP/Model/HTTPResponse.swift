public import Foundation
import Synchronization

/// What a server answered: the status, header fields and body, together with the request that produced it.
///
/// Every status is a response, `404` included; see ``HTTPStatus``.
public struct HTTPResponse: Sendable {
    /// The response's fields, shared by copies until one of them changes (copy on write).
    ///
    /// A result travels back up a chain through every loader's async frame: one reference keeps
    /// ``HTTPResult`` a single word, so those frames stay small and passing a result on is a retain, not a
    /// copy of five fields.
    // Safety: a `Storage`'s `var`s are mutated only through `uniqueStorage()`, when this response is its only
    // owner; shared instances are never written to, except for the header cache, which is atomic.
    //
    // Its `var`s skip the runtime's exclusivity check (a thread-local lookup per access): a `Storage` is
    // private to the response that owns it, so every access to it is inside an access to that response,
    // which Swift checks already.
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var request: HTTPRequest
        @exclusivity(unchecked) var status: HTTPStatus
        @exclusivity(unchecked) var body: Data
        @exclusivity(unchecked) var explicitURL: URL?
        /// The header fields when they were given (or set).
        @exclusivity(unchecked) var givenHeaders: HTTPHeaders?
        /// The transfer's metrics, boxed: one word in every response, whether or not it has them.
        @exclusivity(unchecked) var metrics: MetricsBox?
        /// The transport's header fields, converted to `HTTPHeaders` on first use (see ``HeaderSource``).
        let source: (any HeaderSource)?
        /// The body as it arrives, for a streamed response.
        @exclusivity(unchecked) var bodyStream: HTTPBodyStream?
        /// The file the body was written to, for a download.
        @exclusivity(unchecked) var fileURL: URL?
        private let converted = AtomicLazyReference<HeaderBox>()

        init(
            request: HTTPRequest, status: HTTPStatus, body: Data, explicitURL: URL?, givenHeaders: HTTPHeaders?,
            source: (any HeaderSource)?
        ) {
            self.request = request
            self.status = status
            self.body = body
            self.explicitURL = explicitURL
            self.givenHeaders = givenHeaders
            self.source = source
        }

        var headers: HTTPHeaders {
            if let givenHeaders { return givenHeaders }
            guard let source else { return HTTPHeaders() }
            if let box = converted.load() { return box.headers }
            return converted.storeIfNil(HeaderBox(headers: source.headerFields())).headers
        }

        func copy() -> Storage {
            let copy = Storage(
                request: request, status: status, body: body, explicitURL: explicitURL, givenHeaders: headers,
                source: nil)
            copy.bodyStream = bodyStream
            copy.fileURL = fileURL
            copy.metrics = metrics
            return copy
        }
    }

    private final class MetricsBox: Sendable {
        let metrics: HTTPMetrics
        init(_ metrics: HTTPMetrics) { self.metrics = metrics }
    }

    private final class HeaderBox: Sendable {
        let headers: HTTPHeaders
        init(headers: HTTPHeaders) { self.headers = headers }
    }

    private var storage: Storage

    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// The request this response answers (the copy that was actually sent).
    public var request: HTTPRequest {
        get { storage.request }
        set { uniqueStorage().request = newValue }
    }
    /// The status code.
    public var status: HTTPStatus {
        get { storage.status }
        set { uniqueStorage().status = newValue }
    }
    /// The response header fields, in the order received.
    public var headers: HTTPHeaders {
        get { storage.headers }
        set { uniqueStorage().givenHeaders = newValue }
    }
    /// The body, already decoded from any `Content-Encoding` by the transport. Empty for a streamed response
    /// (see ``bodyStream``) and for a download written to a file (see ``fileURL``).
    public var body: Data {
        get { storage.body }
        set { uniqueStorage().body = newValue }
    }

    /// The body as it arrives, when the request asked for a stream (``ResponseDelivery/stream``; see
    /// ``HTTPLoader/stream(_:)``); `nil` otherwise.
    public var bodyStream: HTTPBodyStream? {
        get { storage.bodyStream }
        set { uniqueStorage().bodyStream = newValue }
    }

    /// The file the body was written to, when the request asked for that (``ResponseDelivery/file(_:resumingAt:)``;
    /// see ``HTTPLoader/download(_:to:resumeAttempts:)``); `nil` otherwise.
    public var fileURL: URL? {
        get { storage.fileURL }
        set { uniqueStorage().fileURL = newValue }
    }

    /// Stops this response's streamed body, if it has one: for a loader that drops a response to send the
    /// request again (a retry, a replay after a `401`), so the transfer does not go on for nobody.
    package func discardBody() {
        bodyStream?.cancel()
    }
    /// The URL the response came from; differs from the request's URL after a redirect. Unless the transport
    /// set it, it is the request's URL, computed when first asked for (building a URL is not free).
    public var url: URL? {
        get { storage.explicitURL ?? storage.request.url }
        set { uniqueStorage().explicitURL = newValue }
    }

    /// What the transfer that produced this response took, as the terminal measured it: timings, bytes, redirects;
    /// `nil` when the terminal measures nothing (a ``MockLoader`` handler's response gets the handler's run).
    public var metrics: HTTPMetrics? {
        get { storage.metrics?.metrics }
        set { uniqueStorage().metrics = newValue.map(MetricsBox.init) }
    }
    /// The URL the transport set, or `nil` when ``url`` is the request's: what a cache keeps, without building
    /// the request's URL.
    var explicitURL: URL? { storage.explicitURL }

    public init(
        request: HTTPRequest,
        status: HTTPStatus = .ok,
        headers: HTTPHeaders = [:],
        body: Data = Data(),
        url: URL? = nil
    ) {
        storage = Storage(
            request: request, status: status, body: body, explicitURL: url, givenHeaders: headers, source: nil)
    }

    /// A response whose header fields are converted from `source` only when someone reads them: most
    /// responses are decoded from their body and their header fields never looked at.
    init(request: HTTPRequest, status: HTTPStatus, headers source: any HeaderSource, body: Data, url: URL?) {
        storage = Storage(
            request: request, status: status, body: body, explicitURL: url, givenHeaders: nil, source: source)
    }

    /// The value of a response header field, ignoring case.
    public subscript(header name: String) -> String? {
        headers[name]
    }
}

extension HTTPResponse: CustomStringConvertible {
    public var description: String {
        "\(status) for \(request) (\(body.count) bytes)"
    }
}

/// Header fields as a transport delivered them, to be converted to ``HTTPHeaders`` on demand.
protocol HeaderSource: Sendable {
    /// The fields, converted. Called at most once per response, from any thread.
    func headerFields() -> HTTPHeaders
}

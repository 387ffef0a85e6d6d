public import Foundation
import Synchronization

/// What a server answered: the status, header fields and body, together with the request that produced it.
///
/// Every status is a response, `404` included; see ``HTTPStatus``.
public struct HTTPResponse: Sendable {
    /// The response's fields, in one ``CopyOnWriteBox`` shared by copies until one of them changes. A result
    /// travels back up a chain through every loader's async frame: one reference keeps ``HTTPResult`` a single
    /// word.
    private struct Fields: Sendable {
        var request: HTTPRequest
        var status: HTTPStatus
        var body: Data
        var explicitURL: URL?
        /// The header fields when they were given (or set); otherwise the transport's, converted on first use.
        var givenHeaders: HTTPHeaders?
        var transportHeaders: TransportHeaders?
        /// The transfer's metrics, boxed: one word in every response, whether or not it has them.
        var metrics: MetricsBox?
        /// The body as it arrives, for a streamed response.
        var bodyStream: HTTPBodyStream?
        /// The file the body was written to, for a download.
        var fileURL: URL?

        var headers: HTTPHeaders { givenHeaders ?? transportHeaders?.headers ?? HTTPHeaders() }
    }

    private var storage: CopyOnWriteBox<Fields>

    private mutating func uniqueStorage() -> CopyOnWriteBox<Fields> {
        CopyOnWriteBox.unique(&storage)
    }

    /// The request this response answers (the copy that was actually sent).
    public var request: HTTPRequest {
        get { storage.value.request }
        set { uniqueStorage().value.request = newValue }
    }
    /// The status code.
    public var status: HTTPStatus {
        get { storage.value.status }
        set { uniqueStorage().value.status = newValue }
    }
    /// The response header fields, in the order received.
    public var headers: HTTPHeaders {
        get { storage.value.headers }
        set { uniqueStorage().value.givenHeaders = newValue }
    }
    /// The body, already decoded from any `Content-Encoding` by the transport. Empty for a streamed response
    /// (see ``bodyStream``) and for a download written to a file (see ``fileURL``).
    public var body: Data {
        get { storage.value.body }
        set { uniqueStorage().value.body = newValue }
    }

    /// The body as it arrives, when the request asked for a stream (``ResponseDelivery/stream``; see
    /// ``HTTPLoader/stream(_:)``); `nil` otherwise.
    public var bodyStream: HTTPBodyStream? {
        get { storage.value.bodyStream }
        set { uniqueStorage().value.bodyStream = newValue }
    }

    /// The file the body was written to, when the request asked for that (``ResponseDelivery/file(_:resumingAt:)``;
    /// see ``HTTPLoader/download(_:to:resumeAttempts:)``); `nil` otherwise.
    public var fileURL: URL? {
        get { storage.value.fileURL }
        set { uniqueStorage().value.fileURL = newValue }
    }

    /// Stops this response's streamed body, if it has one: for a loader that drops a response to send the
    /// request again (a retry, a replay after a `401`), so the transfer does not go on for nobody.
    package func discardBody() {
        bodyStream?.cancel()
    }
    /// The redirects ``FollowRedirects`` followed on the way to this response, in order: for each, the URL that
    /// answered with the redirect, its status and where it led. Empty when the request was not redirected (or no
    /// ``FollowRedirects`` is in the chain). It is the ``request``'s ``HTTPRequest/redirects``; when the response has
    /// ``metrics``, their ``HTTPMetrics/redirects`` are the same.
    public var redirects: [HTTPMetrics.Redirect] {
        storage.value.request.redirects
    }

    /// The URL the response came from; differs from the request's URL after a redirect. Unless the transport
    /// set it, it is the request's URL, computed when first asked for (building a URL is not free).
    public var url: URL? {
        get { storage.value.explicitURL ?? storage.value.request.url }
        set { uniqueStorage().value.explicitURL = newValue }
    }

    /// What the transfer that produced this response took, as the terminal measured it: timings, bytes, redirects;
    /// `nil` when the terminal measures nothing (a ``MockLoader`` handler's response gets the handler's run).
    public var metrics: HTTPMetrics? {
        get { storage.value.metrics?.metrics }
        set { uniqueStorage().value.metrics = newValue.map(MetricsBox.init) }
    }
    /// The identity of the storage this response shares with its copies: for tests that check a change made no copy.
    package var storageIdentifier: ObjectIdentifier { ObjectIdentifier(storage) }
    /// The URL the transport set, or `nil` when ``url`` is the request's: what a cache keeps, without building
    /// the request's URL.
    var explicitURL: URL? { storage.value.explicitURL }

    public init(
        request: HTTPRequest,
        status: HTTPStatus = .ok,
        headers: HTTPHeaders = [:],
        body: Data = Data(),
        url: URL? = nil
    ) {
        storage = CopyOnWriteBox(
            Fields(request: request, status: status, body: body, explicitURL: url, givenHeaders: headers))
    }

    /// A response whose header fields are converted from `source` only when someone reads them: most
    /// responses are decoded from their body and their header fields never looked at.
    init(request: HTTPRequest, status: HTTPStatus, headers source: any HeaderSource, body: Data, url: URL?) {
        storage = CopyOnWriteBox(
            Fields(
                request: request, status: status, body: body, explicitURL: url,
                transportHeaders: TransportHeaders(source)))
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

/// A transport's header fields, converted to ``HTTPHeaders`` when first read, once, by whichever thread reads them
/// first; copies of the response share the conversion.
private final class TransportHeaders: Sendable {
    private let source: any HeaderSource
    private let converted = AtomicLazyReference<Converted>()

    private final class Converted: Sendable {
        let headers: HTTPHeaders
        init(_ headers: HTTPHeaders) { self.headers = headers }
    }

    init(_ source: any HeaderSource) { self.source = source }

    var headers: HTTPHeaders {
        if let converted = converted.load() { return converted.headers }
        return converted.storeIfNil(Converted(source.headerFields())).headers
    }
}

/// Header fields as a transport delivered them, to be converted to ``HTTPHeaders`` on demand.
protocol HeaderSource: Sendable {
    /// The fields, converted. Called at most once per response, from any thread.
    func headerFields() -> HTTPHeaders
}

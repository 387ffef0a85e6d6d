public import Foundation

/// What a server answered: the status, header fields and body, together with the request that produced it.
///
/// Every status is a response, `404` included; see ``HTTPStatus``.
public struct HTTPResponse: Sendable {
    /// The request this response answers (the copy that was actually sent).
    public var request: HTTPRequest
    /// The status code.
    public var status: HTTPStatus
    /// The response header fields, in the order received.
    public var headers: HTTPHeaders
    /// The body, already decoded from any `Content-Encoding` by the transport.
    public var body: Data
    /// The URL the response came from; differs from the request's URL after a redirect. Unless the transport
    /// set it, it is the request's URL, computed when first asked for (building a URL is not free).
    public var url: URL? {
        get { explicitURL ?? request.url }
        set { explicitURL = newValue }
    }

    private var explicitURL: URL?

    public init(
        request: HTTPRequest,
        status: HTTPStatus = .ok,
        headers: HTTPHeaders = [:],
        body: Data = Data(),
        url: URL? = nil
    ) {
        self.request = request
        self.status = status
        self.headers = headers
        self.body = body
        self.explicitURL = url
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

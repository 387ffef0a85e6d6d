import Foundation
public import HTTPTypes
@_spi(Generated) public import OpenAPIRuntime

/// swift-openapi-runtime's counterpart of ``CannedResponse``: a transport that answers every request at once
/// with a canned `200` and the person as its body.
public struct CannedTransport: ClientTransport {
    private let response = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"])
    private let body = Array(personJSON.utf8)

    public init() {}

    public func send(
        _ request: HTTPRequest, body: OpenAPIRuntime.HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, OpenAPIRuntime.HTTPBody?) {
        (response, OpenAPIRuntime.HTTPBody(self.body))
    }
}

/// A middleware that calls the next one and does nothing else: the runtime's counterpart of a pass-through
/// loader.
public struct PassThroughMiddleware: ClientMiddleware {
    public init() {}

    public func intercept(
        _ request: HTTPRequest,
        body: OpenAPIRuntime.HTTPBody?,
        baseURL: URL,
        operationID: String,
        next:
            @Sendable (HTTPRequest, OpenAPIRuntime.HTTPBody?, URL) async throws -> (
                HTTPResponse, OpenAPIRuntime.HTTPBody?
            )
    ) async throws -> (HTTPResponse, OpenAPIRuntime.HTTPBody?) {
        try await next(request, body, baseURL)
    }
}

/// A middleware that sets one header field, as an authentication middleware sets `Authorization`.
public struct HeaderMiddleware: ClientMiddleware {
    let name: HTTPField.Name
    let value: String

    public init(name: HTTPField.Name, value: String) {
        self.name = name
        self.value = value
    }

    public func intercept(
        _ request: HTTPRequest,
        body: OpenAPIRuntime.HTTPBody?,
        baseURL: URL,
        operationID: String,
        next:
            @Sendable (HTTPRequest, OpenAPIRuntime.HTTPBody?, URL) async throws -> (
                HTTPResponse, OpenAPIRuntime.HTTPBody?
            )
    ) async throws -> (HTTPResponse, OpenAPIRuntime.HTTPBody?) {
        var request = request
        request.headerFields[name] = value
        return try await next(request, body, baseURL)
    }
}

/// What a generated client does for one operation, with the operation itself reduced to nothing: the
/// runtime's `UniversalClient` serializes the input (here: returns a prepared request), folds the
/// middlewares around the transport, sends, and deserializes the output (here: returns the status).
public struct OpenAPIClient: Sendable {
    private struct Input: Sendable {}

    private let client: UniversalClient
    private let request: HTTPRequest
    private let collectsBody: Bool

    /// - Parameters:
    ///   - serverURL: The base URL requests are sent to.
    ///   - transport: The transport at the end of the fold.
    ///   - middlewares: The middlewares, outermost first.
    ///   - collectsBody: Whether the output waits for the whole response body (over a network), or only
    ///     looks at the status (in process, as the loaders' benchmarks do).
    public init(
        serverURL: URL = URL(string: "https://api.example.com")!,
        transport: any ClientTransport,
        middlewares: [any ClientMiddleware],
        collectsBody: Bool = false
    ) {
        self.client = UniversalClient(serverURL: serverURL, transport: transport, middlewares: middlewares)
        self.request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: personPath)
        self.collectsBody = collectsBody
    }

    /// A client with `count` pass-through middlewares over a ``CannedTransport``.
    public static func passThrough(count: Int) -> OpenAPIClient {
        OpenAPIClient(
            transport: CannedTransport(),
            middlewares: Array(repeating: PassThroughMiddleware(), count: count)
        )
    }

    /// Sends the request through the middlewares and the transport; returns the status code and the number
    /// of body bytes collected.
    public func send() async throws -> (status: Int, bodyCount: Int) {
        let request = self.request
        let collectsBody = self.collectsBody
        return try await client.send(
            input: Input(),
            forOperation: "getPerson",
            serializer: { _ in (request, nil) },
            deserializer: { response, body in
                guard collectsBody, let body else { return (response.status.code, 0) }
                let bytes = try await [UInt8](collecting: body, upTo: 1 << 20)
                return (response.status.code, bytes.count)
            }
        )
    }
}

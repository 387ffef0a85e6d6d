import AsyncHTTPClient
import Foundation
import HTTP
import HTTPAsyncHTTPClient
import HTTPAuth
import HTTPOpenAPI
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import OpenAPIURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The loopback clients of issue 25's OpenAPI budgets: one generated client (``PersonAPI/Client``, the person as a
// decoded `Person`), sent over Integrations/OpenAPI's `LoaderTransport` in front of the default chain, or over the
// OpenAPI transports of the two transports' own projects (swift-openapi-urlsession, swift-openapi-async-http-client)
// behind the middleware stack that stands for the default chain's four loaders (``openAPIMiddlewareStack()``).

/// The four middlewares that stand for the default chain's four loaders, as in ``OpenAPIURLSessionClient``: one sets
/// `Authorization` (Auth), three pass the request on (the environment is the client's server URL; Retry and Throttle
/// have no built-in middleware to stand for them).
func openAPIMiddlewareStack() -> [any ClientMiddleware] {
    [
        HeaderMiddleware(name: .authorization, value: validBenchmarkCredentials().authorizationHeaderValue),
        PassThroughMiddleware(),
        PassThroughMiddleware(),
        PassThroughMiddleware(),
    ]
}

/// The default chain as an OpenAPI user puts it behind `LoaderTransport` (the HTTPOpenAPI article's shape): a
/// `ModifyRequest` that reads the operation ID and asks for OAuth for `getPerson`, then
/// ``makeDefaultChain(terminal:environment:)``.
func makeOpenAPIDefaultChain(terminal: HTTPLoader, baseURL: URL) -> HTTPLoader {
    let policies = ModifyRequest { request in
        var request = request
        if request.openAPIOperationID == PersonAPI.Operations.GetPerson.id { request.authenticationMethod = .oauth }
        return request
    }
    return policies --> makeDefaultChain(terminal: terminal, environment: ServerEnvironment(baseURL: baseURL)!)
}

/// Fetches the person with `client` and returns its name's length (the body is decoded, as generated code does).
private func fetchDecodedPerson(_ client: PersonAPI.Client) async throws -> Int {
    switch try await client.getPerson() {
    case .ok(let ok):
        return try ok.body.json.name.utf8.count
    case .undocumented:
        throw LoopbackError.unexpectedResponse
    }
}

/// The generated client over `LoaderTransport` in front of the default chain over `URLSessionLoader`.
public struct GeneratedOverLoaderTransportClient: LoopbackClient {
    public let name: String
    private let client: PersonAPI.Client
    private let terminal: URLSessionLoader

    /// - Parameter buffered: Whether the transport hands bodies over buffered (`.buffered`) instead of streamed (its
    ///   default).
    public init(baseURL: URL, buffered: Bool = false) {
        terminal = URLSessionLoader(configuration: loopbackConfiguration())
        let chain = makeOpenAPIDefaultChain(terminal: terminal, baseURL: baseURL)
        let transport = LoaderTransport(
            configuration: .init(loader: chain, httpBodyProcessingMode: buffered ? .buffered : .streamed))
        client = PersonAPI.Client(serverURL: baseURL, transport: transport)
        name = "generated client, LoaderTransport\(buffered ? " (buffered)" : "") → default chain → URLSessionLoader"
    }

    public func close() { terminal.session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int { try await fetchDecodedPerson(client) }
}

/// The generated client over swift-openapi-urlsession's `URLSessionTransport` behind ``openAPIMiddlewareStack()``.
public struct GeneratedOverURLSessionTransportClient: LoopbackClient {
    public let name = "generated client, swift-openapi-urlsession + 4 middlewares"
    private let client: PersonAPI.Client
    private let session: URLSession

    public init(baseURL: URL) {
        session = URLSession(configuration: loopbackConfiguration())
        client = PersonAPI.Client(
            serverURL: baseURL, transport: URLSessionTransport(configuration: .init(session: session)),
            middlewares: openAPIMiddlewareStack())
    }

    public func close() { session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int { try await fetchDecodedPerson(client) }
}

/// The generated client over `LoaderTransport` in front of the default chain over `AsyncHTTPClientLoader`.
public struct GeneratedOverLoaderTransportAHCClient: LoopbackClient {
    public let name: String
    private let client: PersonAPI.Client
    private let terminal: AsyncHTTPClientLoader

    /// - Parameter buffered: Whether the transport hands bodies over buffered (`.buffered`) instead of streamed (its
    ///   default).
    public init(baseURL: URL, buffered: Bool = false) {
        terminal = AsyncHTTPClientLoader()
        let chain = makeOpenAPIDefaultChain(terminal: terminal, baseURL: baseURL)
        client = PersonAPI.Client(
            serverURL: baseURL,
            transport: LoaderTransport(
                configuration: .init(loader: chain, httpBodyProcessingMode: buffered ? .buffered : .streamed)))
        name =
            "generated client, LoaderTransport\(buffered ? " (buffered)" : "") → default chain → AsyncHTTPClientLoader"
    }

    public func close() {
        let terminal = terminal
        Task { await terminal.shutdown() }
    }

    public func fetchPerson() async throws -> Int { try await fetchDecodedPerson(client) }
}

/// The generated client over swift-openapi-async-http-client's `AsyncHTTPClientTransport` behind
/// ``openAPIMiddlewareStack()``, with an `HTTPClient` of its own configured as `AsyncHTTPClientLoader`'s (as
/// ``RawAsyncHTTPClientClient``'s is).
public struct GeneratedOverAsyncHTTPClientTransportClient: LoopbackClient {
    public let name = "generated client, swift-openapi-async-http-client + 4 middlewares"
    private let client: PersonAPI.Client
    private let httpClient: HTTPClient

    public init(baseURL: URL) {
        httpClient = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: AsyncHTTPClientLoader.defaultConfiguration)
        client = PersonAPI.Client(
            serverURL: baseURL, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient)),
            middlewares: openAPIMiddlewareStack())
    }

    public func close() { _ = httpClient.shutdown() }

    public func fetchPerson() async throws -> Int { try await fetchDecodedPerson(client) }
}

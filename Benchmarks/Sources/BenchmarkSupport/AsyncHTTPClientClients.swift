import AsyncHTTPClient
import Foundation
import HTTP
import HTTPAsyncHTTPClient
import HTTPAuth
import NIOCore
import NIOHTTP1
import OpenAPIAsyncHTTPClient

// The loopback clients over AsyncHTTPClient: raw AsyncHTTPClient, and the chain over the package's
// AsyncHTTPClientLoader. Every client makes its own HTTPClient with the loader's default configuration (redirects
// not followed, no retried connection attempts, decompression on) on the shared event loop group, so that they
// differ only in how they use the client.

/// Raw AsyncHTTPClient: the baseline of the transport's budget. Like ``RawURLSessionClient`` with
/// ``RawURLSessionClient/Request/madePerCall``, it makes the chain's request afresh for every call — the person's
/// URL and the chain's `Authorization` field — and collects the body in memory.
public struct RawAsyncHTTPClientClient: LoopbackClient {
    /// Which of AsyncHTTPClient's APIs sends the request.
    public enum API: Sendable {
        /// `execute(_:timeout:)` with an `HTTPClientRequest`, the body collected with `collect(upTo:)`: the
        /// async/await API a new service writes.
        case async
        /// `execute(request:)` with an `HTTPClient.Request` (its response delegate collects the body): the API
        /// `AsyncHTTPClientLoader` builds on.
        case delegate
    }

    public let name: String
    private let client: HTTPClient
    private let api: API
    private let url: String
    private let authorization = validBenchmarkCredentials().authorizationHeaderValue

    public init(baseURL: URL, api: API = .async) {
        self.api = api
        name = api == .async ? "raw AsyncHTTPClient execute(_:timeout:)" : "raw AsyncHTTPClient execute(request:)"
        client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: AsyncHTTPClientLoader.defaultConfiguration)
        url = personURL(baseURL: baseURL).absoluteString
    }

    public func close() {
        _ = client.shutdown()
    }

    public func fetchPerson() async throws -> Int {
        switch api {
        case .async:
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Authorization", value: authorization)
            let response = try await client.execute(request, timeout: .seconds(60))
            guard response.status == .ok else { throw LoopbackError.unexpectedResponse }
            return try await response.body.collect(upTo: 1 << 20).readableBytes
        case .delegate:
            var headers = NIOHTTP1.HTTPHeaders()
            headers.add(name: "Authorization", value: authorization)
            let request = try HTTPClient.Request(url: url, method: .GET, headers: headers)
            let response = try await client.execute(request: request).get()
            guard response.status == .ok else { throw LoopbackError.unexpectedResponse }
            return response.body?.readableBytes ?? 0
        }
    }
}

/// The default chain (``makeDefaultChain(terminal:environment:)``) over an `AsyncHTTPClientLoader`; with
/// `chain: false`, the loader alone, sending the chain's request (with its `Authorization` field).
public struct AsyncHTTPClientChainClient: LoopbackClient {
    public let name: String
    private let head: HTTPLoader
    private let terminal: AsyncHTTPClientLoader
    private let request: HTTP.HTTPRequest

    public init(baseURL: URL, chain: Bool = true) {
        terminal = AsyncHTTPClientLoader()
        if chain {
            name = "default chain over AsyncHTTPClientLoader"
            head = makeDefaultChain(terminal: terminal, environment: ServerEnvironment(baseURL: baseURL)!)
            request = makeDefaultChainRequest()
        } else {
            name = "AsyncHTTPClientLoader alone"
            head = terminal
            request = personHTTPRequest(baseURL: baseURL)
        }
    }

    public func close() {
        let terminal = terminal
        Task { await terminal.shutdown() }
    }

    public func fetchPerson() async throws -> Int {
        try personBodyCount(await head.load(request))
    }
}

/// swift-openapi-async-http-client's `AsyncHTTPClientTransport` behind the four middlewares that stand for the
/// default chain (as ``OpenAPIURLSessionClient``'s), with an `HTTPClient` of its own configured as
/// `AsyncHTTPClientLoader`'s: the peer of the AsyncHTTPClient transport's budget.
public struct OpenAPIAsyncHTTPClientClient: LoopbackClient {
    public let name = "swift-openapi-async-http-client + 4 middlewares"
    private let client: OpenAPIClient
    private let httpClient: HTTPClient

    public init(baseURL: URL) {
        httpClient = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: AsyncHTTPClientLoader.defaultConfiguration)
        client = OpenAPIClient(
            serverURL: baseURL, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient)),
            middlewares: openAPIMiddlewareStack(), collectsBody: true)
    }

    public func close() { _ = httpClient.shutdown() }

    public func fetchPerson() async throws -> Int {
        let (status, count) = try await client.send()
        guard status == 200 else { throw LoopbackError.unexpectedResponse }
        return count
    }
}

/// The transfers of the 1 GiB budgets over AsyncHTTPClient: the default chain over an `AsyncHTTPClientLoader`
/// (`download(_:to:)`, or a `FileBody` upload), and raw AsyncHTTPClient's own `FileDownloadDelegate`.
public final class AsyncHTTPClientTransfers: Sendable {
    private let loader = AsyncHTTPClientLoader()
    private let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: AsyncHTTPClientLoader.defaultConfiguration)
    /// The default chain over the loader, for the server at `baseURL`.
    public let chain: HTTPLoader

    public init(baseURL: URL) {
        chain = makeDefaultChain(terminal: loader, environment: ServerEnvironment(baseURL: baseURL)!)
    }

    /// Raw AsyncHTTPClient downloads `url` to `file` with its `FileDownloadDelegate`; returns the status.
    public func rawDownload(_ url: URL, to file: URL) async throws -> Int {
        try? FileManager.default.removeItem(at: file)
        let delegate = try FileDownloadDelegate(path: file.path)
        let request = try HTTPClient.Request(url: url.absoluteString)
        _ = try await client.execute(request: request, delegate: delegate).get()
        return 200
    }

    /// Shuts the loader's and the raw client's `HTTPClient`s down.
    public func shutdown() async {
        await loader.shutdown()
        try? await client.shutdown()
    }
}

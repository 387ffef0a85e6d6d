import Foundation
import HTTP
import HTTPAuth
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One way of fetching the person from nginx over loopback, for the throughput comparisons.
public protocol LoopbackClient: Sendable {
    /// A short name for tables.
    var name: String { get }
    /// Fetches the person once; returns the number of body bytes received.
    func fetchPerson() async throws -> Int
    /// Lets the client's session go (its connections and its threads) once the client is no longer used.
    func close()
}

/// The URL of the nginx the benchmark script started (`NGINX_URL`, for example `http://127.0.0.1:8123`), or
/// `nil` when the benchmarks run without one.
public var nginxURL: URL? {
    guard let text = ProcessInfo.processInfo.environment["NGINX_URL"], !text.isEmpty else { return nil }
    return URL(string: text)
}

/// The session configuration every loopback client uses: `URLSessionLoader`'s default (ephemeral, no
/// cookies, no cache, no credential storage), so that the clients differ only in how they use the session.
public func loopbackConfiguration() -> URLSessionConfiguration {
    URLSessionLoader.defaultConfiguration
}

/// Raw `URLSession.data(for:)`: the baseline. It sends the request the chain sends — the same URL and the
/// same `Authorization` field — so that what the ratios measure is the chain's own cost, not the cost of
/// the extra field on the wire, in libcurl and in nginx (≈ 1% of a loopback request).
///
/// By default it reuses one `URLRequest` for every call. With `requestPerCall` it makes its `URLRequest` for
/// every call, as code that sends different requests must: that shows what building the request costs
/// URLSession itself, a cost the chain cannot avoid.
public struct RawURLSessionClient: LoopbackClient {
    public let name: String
    private let session: URLSession
    private let baseURL: URL
    private let authorization = validBenchmarkCredentials().authorizationHeaderValue
    /// The request every call sends, unless one is made per call.
    private let reused: URLRequest?

    public init(baseURL: URL, requestPerCall: Bool = false) {
        name = requestPerCall ? "raw URLSession data(for:), URLRequest made per call" : "raw URLSession data(for:)"
        session = URLSession(configuration: loopbackConfiguration())
        self.baseURL = baseURL
        reused = requestPerCall ? nil : Self.personRequest(baseURL: baseURL, authorization: authorization)
    }

    public func close() { session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int {
        let request = reused ?? Self.personRequest(baseURL: baseURL, authorization: authorization)
        let (data, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw LoopbackError.unexpectedResponse }
        return data.count
    }

    private static func personRequest(baseURL: URL, authorization: String) -> URLRequest {
        var request = URLRequest(url: baseURL.appendingPathComponent(String(personPath.dropFirst())))
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        return request
    }
}

/// The default chain (``makeDefaultChain(terminal:environment:)``) over a `URLSessionLoader`.
public struct ChainClient: LoopbackClient {
    public let name = "default chain over URLSessionLoader"
    private let chain: HTTPLoader
    private let terminal: URLSessionLoader
    private let request = makeDefaultChainRequest()

    public init(baseURL: URL) {
        let environment = ServerEnvironment(baseURL: baseURL)!
        terminal = URLSessionLoader(configuration: loopbackConfiguration())
        chain = makeDefaultChain(terminal: terminal, environment: environment)
    }

    public func close() { terminal.session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int {
        switch await chain.load(request) {
        case .success(let response) where response.status == .ok: return response.body.count
        case .success: throw LoopbackError.unexpectedResponse
        case .failure(let error): throw error
        }
    }
}

/// `URLSessionLoader` alone, without the chain, sending the chain's request (with its `Authorization`
/// field): tells the terminal's cost from the chain's.
public struct URLSessionLoaderClient: LoopbackClient {
    public let name = "URLSessionLoader alone"
    private let loader: URLSessionLoader
    private let request: HTTP.HTTPRequest

    public init(baseURL: URL) {
        loader = URLSessionLoader(configuration: loopbackConfiguration())
        var request = HTTP.HTTPRequest(url: baseURL.appendingPathComponent(String(personPath.dropFirst())))
        request.headers["Authorization"] = validBenchmarkCredentials().authorizationHeaderValue
        self.request = request
    }

    public func close() { loader.session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int {
        switch await loader.load(request) {
        case .success(let response) where response.status == .ok: return response.body.count
        case .success: throw LoopbackError.unexpectedResponse
        case .failure(let error): throw error
        }
    }
}

/// swift-openapi-urlsession's transport behind four middlewares, the counterpart of the default chain's four
/// loaders: one sets `Authorization` (Auth), three pass the request on (the environment is the client's
/// server URL; Retry and Throttle have no built-in middleware to stand for them).
public struct OpenAPIURLSessionClient: LoopbackClient {
    public let name = "swift-openapi-urlsession + 4 middlewares"
    private let client: OpenAPIClient
    private let session: URLSession

    public init(baseURL: URL) {
        let session = URLSession(configuration: loopbackConfiguration())
        self.session = session
        client = OpenAPIClient(
            serverURL: baseURL,
            transport: URLSessionTransport(configuration: .init(session: session)),
            middlewares: [
                HeaderMiddleware(name: .authorization, value: validBenchmarkCredentials().authorizationHeaderValue),
                PassThroughMiddleware(),
                PassThroughMiddleware(),
                PassThroughMiddleware(),
            ],
            collectsBody: true
        )
    }

    public func close() { session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int {
        let (status, count) = try await client.send()
        guard status == 200 else { throw LoopbackError.unexpectedResponse }
        return count
    }
}

/// Why a loopback request did not count.
public enum LoopbackError: Error {
    case unexpectedResponse
}

/// What one loopback run took.
public struct LoopbackRun: Sendable {
    /// From the first request sent until the last response.
    public let elapsed: Duration
    /// The CPU time (user and system) the whole process spent meanwhile: the client's cost, as nginx runs in
    /// a process of its own.
    public let cpu: Duration
}

/// Sends `count` requests with `client`, `concurrency` at a time, and returns the elapsed and CPU time.
///
/// Each of `concurrency` workers sends one request after another until `count` have been sent in all.
/// Throws the first failure: a benchmark that lost requests measured something else.
public func runLoopback(_ client: any LoopbackClient, count: Int, concurrency: Int) async throws -> LoopbackRun {
    let clock = ContinuousClock()
    let cpuBefore = processCPUTime()
    let start = clock.now
    if concurrency <= 1 {
        for _ in 0..<count { _ = try await client.fetchPerson() }
    } else {
        let next = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while next.take() < count { _ = try await client.fetchPerson() }
                }
            }
            try await group.waitForAll()
        }
    }
    return LoopbackRun(elapsed: clock.now - start, cpu: processCPUTime() - cpuBefore)
}

/// The CPU time, user and system, the process has used so far (`getrusage`).
public func processCPUTime() -> Duration {
    var usage = rusage()
    getrusage(rusageSelf, &usage)
    func duration(_ time: timeval) -> Duration { .seconds(time.tv_sec) + .microseconds(time.tv_usec) }
    return duration(usage.ru_utime) + duration(usage.ru_stime)
}

/// Hands out 0, 1, 2, … to concurrent workers.
final class Counter: Sendable {
    private let value = Mutex(0)

    func take() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

/// The number of TCP connections nginx has accepted so far, from its `stub_status` page at
/// `/nginx_status`, or `nil` when it has none.
public func nginxAcceptedConnections(baseURL: URL) async -> Int? {
    let url = baseURL.appendingPathComponent("nginx_status")
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    guard let (data, _) = try? await session.data(from: url), let text = String(data: data, encoding: .utf8) else {
        return nil
    }
    // "Active connections: 1 \nserver accepts handled requests\n 12 12 40 \nReading: …"
    let lines = text.split(separator: "\n")
    guard lines.count >= 3, let accepts = lines[2].split(separator: " ").first else { return nil }
    return Int(accepts)
}

#if canImport(Glibc)
/// `RUSAGE_SELF` as Glibc's `getrusage` takes it.
private let rusageSelf = __rusage_who_t(RUSAGE_SELF.rawValue)
#else
private let rusageSelf = RUSAGE_SELF
#endif

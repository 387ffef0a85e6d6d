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
/// By default it reuses one `URLRequest` for every call. The other ways of making the request (``Request``)
/// take apart what a request made per call costs URLSession itself, a cost the chain cannot avoid.
public struct RawURLSessionClient: LoopbackClient {
    /// How each call gets its `URLRequest`.
    public enum Request: Sendable {
        /// One `URLRequest`, made once and sent by every call.
        case reused
        /// A new `URLRequest` for every call, its URL made from the base URL each time, as code that sends
        /// different requests must.
        case madePerCall
        /// A new `URLRequest` for every call around one `URL` made once: tells the cost of a new request
        /// from the cost of a new URL.
        case madePerCallAroundOneURL
        /// `HTTPRequest.urlRequest()` for every call, from one `HTTPRequest` (the chain's request after
        /// `ApplyEnvironment` and `Auth`): the conversion `URLSessionLoader` makes, without the loader.
        case convertedPerCall
    }

    public let name: String
    private let session: URLSession
    private let request: Request
    private let baseURL: URL
    /// The person's URL, made once.
    private let url: URL
    private let authorization = validBenchmarkCredentials().authorizationHeaderValue
    private let reused: URLRequest
    private let converted: HTTP.HTTPRequest

    public init(baseURL: URL, request: Request = .reused) {
        switch request {
        case .reused: name = "raw URLSession data(for:)"
        case .madePerCall: name = "raw URLSession data(for:), URLRequest made per call"
        case .madePerCallAroundOneURL: name = "raw URLSession data(for:), URLRequest made per call, one URL"
        case .convertedPerCall: name = "raw URLSession data(for:), HTTPRequest.urlRequest() per call"
        }
        session = URLSession(configuration: loopbackConfiguration())
        self.request = request
        self.baseURL = baseURL
        url = personURL(baseURL: baseURL)
        reused = personURLRequest(url: url, authorization: authorization)
        converted = personHTTPRequest(baseURL: baseURL)
    }

    public func close() { session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int {
        let urlRequest: URLRequest
        switch request {
        case .reused: urlRequest = reused
        case .madePerCall:
            urlRequest = personURLRequest(url: personURL(baseURL: baseURL), authorization: authorization)
        case .madePerCallAroundOneURL: urlRequest = personURLRequest(url: url, authorization: authorization)
        case .convertedPerCall: urlRequest = try converted.urlRequest()
        }
        let (data, response) = try await session.data(for: urlRequest)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw LoopbackError.unexpectedResponse }
        return data.count
    }
}

/// `URLSession.dataTask(with:completionHandler:)` awaited through a continuation, with one reused
/// `URLRequest`: the transport path `URLSessionLoader` takes on Linux, without the loader.
///
/// With `immediateDelegateQueue`, its session has a delegate (that does nothing) and a delegate queue that
/// runs each callback at once on the thread that delivers it, as `URLSessionLoader`'s session does; without,
/// the session has no delegate and URLSession's own `OperationQueue`, which runs each completion handler on
/// a thread of its own.
public struct CompletionHandlerClient: LoopbackClient {
    public let name: String
    private let session: URLSession
    private let request: URLRequest

    public init(baseURL: URL, immediateDelegateQueue: Bool) {
        if immediateDelegateQueue {
            name = "raw URLSession dataTask + completion handler, immediate delegate queue"
            session = URLSession(
                configuration: loopbackConfiguration(), delegate: IdleDelegate(), delegateQueue: ImmediateQueue())
        } else {
            name = "raw URLSession dataTask + completion handler, OperationQueue"
            session = URLSession(configuration: loopbackConfiguration())
        }
        request = personURLRequest(
            url: personURL(baseURL: baseURL), authorization: validBenchmarkCredentials().authorizationHeaderValue)
    }

    public func close() { session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int {
        let session = session
        let request = request
        let (data, response) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(Data, URLResponse?), any Error>) in
            let task = session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: (data ?? Data(), response))
                }
            }
            task.resume()
        }
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw LoopbackError.unexpectedResponse }
        return data.count
    }
}

/// A session delegate that implements nothing.
private final class IdleDelegate: NSObject, URLSessionDataDelegate, Sendable {}

/// A delegate queue that runs each operation at once, on the thread that adds it — the kind
/// `URLSessionLoader` gives its session on Linux.
// Safety: it has no state of its own; `OperationQueue` is thread-safe.
private final class ImmediateQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ operation: Operation) { operation.start() }
    override func addOperation(_ block: @escaping @Sendable () -> Void) { block() }
}

/// The URL of the person under `baseURL`.
func personURL(baseURL: URL) -> URL {
    baseURL.appendingPathComponent(String(personPath.dropFirst()))
}

/// The chain's request as a `URLRequest`: `url` and `authorization` as its `Authorization` field.
func personURLRequest(url: URL, authorization: String) -> URLRequest {
    var request = URLRequest(url: url)
    request.setValue(authorization, forHTTPHeaderField: "Authorization")
    return request
}

/// The request the chain sends, as `URLSessionLoader` receives it: the person's URL and the OAuth
/// `Authorization` field.
func personHTTPRequest(baseURL: URL) -> HTTP.HTTPRequest {
    var request = HTTP.HTTPRequest(url: personURL(baseURL: baseURL))
    request.headers["Authorization"] = validBenchmarkCredentials().authorizationHeaderValue
    return request
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
        try personBodyCount(await chain.load(request))
    }
}

/// One link of the default chain (``DefaultChainLink``) alone in front of a `URLSessionLoader`, sending what
/// that link receives in the chain: tells each link's share of the chain's cost over loopback, as the
/// in-process benchmarks do over a canned terminal. Every link's request reaches nginx with the chain's
/// `Authorization` field: `Auth` sets it; for the other links the request carries it already.
public struct ChainLinkClient: LoopbackClient {
    public let name: String
    private let chain: HTTPLoader
    private let terminal: URLSessionLoader
    private let request: HTTP.HTTPRequest

    public init(link: DefaultChainLink, baseURL: URL) {
        let environment = ServerEnvironment(baseURL: baseURL)!
        name = "\(link.rawValue) → URLSessionLoader"
        terminal = URLSessionLoader(configuration: loopbackConfiguration())
        chain = link.makeLoader(environment: environment) --> terminal
        var request: HTTP.HTTPRequest
        switch link {
        case .applyEnvironment:  // relative, as the chain's request reaches it
            request = makeDefaultChainRequest()
            request.headers["Authorization"] = validBenchmarkCredentials().authorizationHeaderValue
        case .auth:  // absolute, without the field Auth sets
            request = personHTTPRequest(baseURL: baseURL)
            request.headers["Authorization"] = nil
            request.authenticationMethod = .oauth
        case .retry, .throttle:
            request = personHTTPRequest(baseURL: baseURL)
            request.authenticationMethod = .oauth
        }
        self.request = request
    }

    public func close() { terminal.session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int {
        try personBodyCount(await chain.load(request))
    }
}

/// `URLSessionLoader` alone, without the chain, sending the chain's request (with its `Authorization`
/// field): tells the terminal's cost from the chain's. With pass-through loaders in front of it, it tells
/// what the depth of a chain costs over loopback, where the terminal suspends every load.
public struct URLSessionLoaderClient: LoopbackClient {
    public let name: String
    private let loader: URLSessionLoader
    private let head: HTTPLoader
    private let request: HTTP.HTTPRequest

    public init(baseURL: URL, passThroughLoaders: Int = 0) {
        name =
            passThroughLoaders == 0
            ? "URLSessionLoader alone" : "\(passThroughLoaders) pass-through loaders → URLSessionLoader"
        loader = URLSessionLoader(configuration: loopbackConfiguration())
        head = makePassThroughChain(count: passThroughLoaders, terminal: loader)
        request = personHTTPRequest(baseURL: baseURL)
    }

    public func close() { loader.session.finishTasksAndInvalidate() }

    public func fetchPerson() async throws -> Int {
        try personBodyCount(await head.load(request))
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

/// The body size of a loader's `200` response; throws for any other outcome.
func personBodyCount(_ result: HTTPResult) throws -> Int {
    switch result {
    case .success(let response) where response.status == .ok: return response.body.count
    case .success: throw LoopbackError.unexpectedResponse
    case .failure(let error): throw error
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

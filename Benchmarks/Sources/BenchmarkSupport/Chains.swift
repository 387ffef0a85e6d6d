import Foundation
public import HTTP
import HTTPAuth

/// A terminal loader that answers every request at once with the same canned `200` (a 213-byte JSON
/// person), without a network.
///
/// The in-process benchmarks use it instead of ``MockLoader``, which answers from a queue of handlers (one
/// per load, consumed) and records every request it receives: over millions of loads that queue and that
/// record would grow without bound, and their cost would be part of what is measured. This terminal does the
/// least a terminal can — build an `HTTPResponse` around the request — so what the benchmarks see is the
/// chain's own cost. swift-openapi-runtime's side gets the same kind of terminal: ``CannedTransport``.
public final class CannedResponse: HTTPLoader, @unchecked Sendable {  // Sendable: only `let` properties
    private let headers: HTTPHeaders
    private let body = Data(personJSON.utf8)

    /// - Parameter headers: The response's header fields; `Content-Type: application/json` by default.
    public init(headers: HTTPHeaders = ["Content-Type": "application/json"]) {
        self.headers = headers
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        .success(HTTPResponse(request: request, status: .ok, headers: headers, body: body))
    }
}

/// ``CannedResponse`` measuring each load as a terminal does — ``HTTPMetrics`` from when it starts until it
/// answers, on the response — and reporting it to the load's observers (`attemptStarted`, `attemptFinished`): what
/// a terminal that fills in metrics pays per request, observed or not.
public final class MeasuringCannedResponse: HTTPLoader, @unchecked Sendable {  // Sendable: only `let` properties
    private let headers: HTTPHeaders = ["Content-Type": "application/json"]
    private let body = Data(personJSON.utf8)

    public override init() {}

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        var metrics = HTTPMetrics(startingNowFor: request)
        request.emit(.attemptStarted)
        var response = HTTPResponse(request: request, status: .ok, headers: headers, body: body)
        metrics.end = .now
        metrics.responseBodyBytesReceived = Int64(body.count)
        response.metrics = metrics
        request.emit(.attemptFinished, result: .success(response))
        return .success(response)
    }
}

/// An observer that ignores every event: what observation costs the chain, without the observer's own work.
public struct IgnoringObserver: HTTPEventObserver {
    public init() {}
    public func handle(_ event: HTTPEvent) {}
}

/// The JSON person nginx serves at `/person.json` (213 bytes of UTF-8), and the canned terminals answer with.
public let personJSON =
    #"{"id":42,"name":"Zoë Example","email":"zoe@example.com","age":34,"verified":true,"roles":["admin","editor"],"#
    + #""address":{"street":"12 Main St","city":"Springfield","zip":"12345"},"createdAt":"2024-01-15T09:30:00Z"}"#

/// The path every benchmark request asks for.
public let personPath = "/person.json"

extension ServerEnvironment {
    /// The server the in-process benchmarks' relative requests are sent to (no request leaves the process).
    public static let inProcess = ServerEnvironment(host: "api.example.com")
}

/// An OAuth configuration for `environment`'s origin, with endpoints that are never contacted: the benchmarks'
/// loaders start with valid credentials.
func benchmarkOAuthConfiguration(environment: ServerEnvironment) -> OAuthConfiguration {
    OAuthConfiguration(
        endpoints: .known(
            OAuthEndpoints(
                authorization: URL(string: "https://id.example.com/authorize")!,
                token: URL(string: "https://id.example.com/token")!
            )),
        clientID: "benchmarks",
        redirectURI: URL(string: "com.example.benchmarks:/callback")!,
        resourceOrigins: [Origin(scheme: environment.scheme, host: environment.host, port: environment.port)]
    )
}

/// Credentials that stay valid for the whole run: an hour.
func validBenchmarkCredentials() -> OAuthCredentials {
    OAuthCredentials(
        accessToken: "benchmark-access-token-0123456789abcdef",
        refreshToken: "benchmark-refresh-token",
        expirationDate: Date().addingTimeInterval(3_600),
        issuedAt: Date()
    )
}

/// The default chain of DESIGN.md, in front of `terminal`:
///
/// ```
/// ApplyEnvironment --> Auth --> Retry --> Throttle --> terminal
///                      └─ .oauth: OAuth (a valid token already held)
/// ```
///
/// This is the one place the benchmarks build it (its links are made by ``DefaultChainLink``). Auth's loader
/// is an `OAuth` loader that already holds a valid token for `environment`'s host, so no request waits for
/// one; requests made by ``makeDefaultChainRequest()`` ask for that method. The throttle allows 16 requests at
/// once: enough for the loopback benchmarks' concurrency, so that it measures the cost of the throttle and
/// not of a queue.
///
/// - Parameters:
///   - terminal: The loader at the end: ``CannedResponse`` in process, `URLSessionLoader` over loopback.
///   - environment: Where relative requests go; also the one host the credentials are sent to.
/// - Returns: The head of the chain.
public func makeDefaultChain(terminal: HTTPLoader, environment: ServerEnvironment = .inProcess) -> HTTPLoader {
    makeDefaultChain(terminal: terminal, environment: environment, auth: nil)
}

/// The default chain with a given `OAuth` loader in its `Auth` (the refresh storm's, whose token expired).
func makeDefaultChain(
    terminal: HTTPLoader, environment: ServerEnvironment = .inProcess, auth oauth: OAuth?
)
    -> HTTPLoader
{
    DefaultChainLink.applyEnvironment.makeLoader(environment: environment)
        --> (oauth.map { Auth(loaders: [.oauth: $0]) } ?? DefaultChainLink.auth.makeLoader(environment: environment))
        --> DefaultChainLink.retry.makeLoader(environment: environment)
        --> DefaultChainLink.throttle.makeLoader(environment: environment)
        --> terminal
}

/// The links of the default chain, each of which the in-process benchmarks also time alone in front of the
/// terminal, to show where the chain's time goes.
public enum DefaultChainLink: String, CaseIterable, Sendable {
    case applyEnvironment = "ApplyEnvironment"
    case auth = "Auth(.oauth: OAuth, valid token)"
    case retry = "Retry"
    case throttle = "Throttle(16)"

    /// A new loader for this link.
    public func makeLoader(environment: ServerEnvironment = .inProcess) -> HTTPLoader {
        switch self {
        case .applyEnvironment:
            ApplyEnvironment(environment: environment)
        case .auth:
            Auth(loaders: [
                .oauth: OAuth(
                    configuration: benchmarkOAuthConfiguration(environment: environment),
                    credentials: validBenchmarkCredentials()
                )
            ])
        case .retry:
            Retry()
        case .throttle:
            Throttle(maximumNumberOfRequests: 16)
        }
    }

    /// The request this link receives in the default chain: relative before ``ApplyEnvironment``, absolute
    /// after it; asking for OAuth throughout.
    public var request: HTTPRequest {
        var request = makeDefaultChainRequest()
        if self != .applyEnvironment { request.host = ServerEnvironment.inProcess.host }
        return request
    }
}

/// A relative request for the person, asking for the authentication the default chain applies.
public func makeDefaultChainRequest() -> HTTPRequest {
    var request = HTTPRequest(path: personPath)
    request.authenticationMethod = .oauth
    return request
}

/// An absolute request for the person, for chains without ``ApplyEnvironment``.
public func makeAbsoluteRequest() -> HTTPRequest {
    HTTPRequest(host: ServerEnvironment.inProcess.host, path: personPath)
}

/// `count` pass-through loaders in front of `terminal`; with `count == 0`, `terminal` itself.
///
/// A pass-through loader is a plain `HTTPLoader`, whose default `load` forwards to its next loader: the
/// cheapest loader there is, and the one every loader that overrides `load` and calls `super` pays for.
public func makePassThroughChain(count: Int, terminal: HTTPLoader) -> HTTPLoader {
    var head = terminal
    for _ in 0..<count { head = HTTPLoader() --> head }
    return head
}

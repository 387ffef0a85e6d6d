import Foundation
public import HTTP
import HTTPTypes

/// One thing the in-process benchmarks time: something that turns a request into a canned response without
/// leaving the process.
public enum InProcessSubject: Sendable {
    /// A chain of loaders (or a terminal alone), sent `request`.
    case loaders(HTTPLoader, request: HTTP.HTTPRequest)
    /// swift-openapi-runtime's `UniversalClient` with its middlewares over ``CannedTransport``.
    case openAPI(OpenAPIClient)
    /// ``CannedTransport`` called directly, without `UniversalClient`.
    case openAPITransport(CannedTransport)
    /// A chain that refuses `request` at once with `circuitOpen` (an open `CircuitBreaker`).
    case refusals(HTTPLoader, request: HTTP.HTTPRequest)

    /// The terminal alone: the baseline of the default chain.
    public static func terminal() -> InProcessSubject {
        .loaders(CannedResponse(), request: makeDefaultChainRequest())
    }

    /// ``makeDefaultChain(terminal:environment:)`` over ``CannedResponse``.
    public static func defaultChain() -> InProcessSubject {
        .loaders(makeDefaultChain(terminal: CannedResponse()), request: makeDefaultChainRequest())
    }

    /// One link of the default chain alone over ``CannedResponse``.
    public static func link(_ link: DefaultChainLink) -> InProcessSubject {
        .loaders(link.makeLoader() --> CannedResponse(), request: link.request)
    }

    /// A pass-through loader over ``MeasuringCannedResponse``: the baseline is `passThroughLoaders(1)`.
    public static func measuringTerminal() -> InProcessSubject {
        .loaders(HTTPLoader() --> MeasuringCannedResponse(), request: makeAbsoluteRequest())
    }

    /// `Observe(IgnoringObserver())` over ``CannedResponse``, or over ``MeasuringCannedResponse``.
    public static func observed(measuringTerminal: Bool = false) -> InProcessSubject {
        let terminal: HTTPLoader = measuringTerminal ? MeasuringCannedResponse() : CannedResponse()
        return .loaders(Observe(IgnoringObserver()) --> terminal, request: makeAbsoluteRequest())
    }

    /// `Observe(IgnoringObserver())` in front of the default chain over ``CannedResponse``.
    public static func observedDefaultChain() -> InProcessSubject {
        .loaders(
            Observe(IgnoringObserver()) --> makeDefaultChain(terminal: CannedResponse()),
            request: makeDefaultChainRequest())
    }

    /// ``PropagateTraceContext`` over ``CannedResponse``.
    public static func traced() -> InProcessSubject {
        .loaders(PropagateTraceContext() --> CannedResponse(), request: makeAbsoluteRequest())
    }

    /// ``PrintLoader`` with a sink that drops its lines, over ``CannedResponse``.
    public static func printed() -> InProcessSubject {
        .loaders(PrintLoader(sink: { _ in }) --> CannedResponse(), request: makeAbsoluteRequest())
    }

    /// ``FollowRedirects`` over ``CannedResponse``, which answers `200`: the cost of a load that is not redirected.
    public static func followingRedirects() -> InProcessSubject {
        .loaders(FollowRedirects() --> CannedResponse(), request: makeAbsoluteRequest())
    }

    /// `count` pass-through loaders over ``CannedResponse``.
    public static func passThroughLoaders(_ count: Int) -> InProcessSubject {
        .loaders(makePassThroughChain(count: count, terminal: CannedResponse()), request: makeAbsoluteRequest())
    }

    /// `count` pass-through middlewares in swift-openapi-runtime's fold over ``CannedTransport``.
    public static func passThroughMiddlewares(_ count: Int) -> InProcessSubject {
        .openAPI(.passThrough(count: count))
    }

    /// Sends one request after another, `iterations` times, and returns a checksum of the statuses (so that
    /// nothing can be optimized away). Traps if a request fails: the benchmark would measure something else.
    public func run(iterations: Int) async -> Int {
        var checksum = 0
        switch self {
        case .loaders(let chain, let request):
            for _ in 0..<iterations {
                switch await chain.load(request) {
                case .success(let response): checksum &+= response.status.rawValue
                case .failure(let error): preconditionFailure("the in-process chain failed: \(error)")
                }
            }
        case .refusals(let chain, let request):
            for _ in 0..<iterations {
                switch await chain.load(request) {
                case .failure(let error) where error.code == .circuitOpen: checksum &+= 1
                case let result: preconditionFailure("the open circuit breaker did not refuse: \(result)")
                }
            }
        case .openAPI(let client):
            for _ in 0..<iterations {
                do {
                    checksum &+= try await client.send().status
                } catch {
                    preconditionFailure("the in-process OpenAPI client failed: \(error)")
                }
            }
        case .openAPITransport(let transport):
            let request = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: personPath)
            let baseURL = URL(string: "https://api.example.com")!
            for _ in 0..<iterations {
                do {
                    let (response, _) = try await transport.send(
                        request, body: nil, baseURL: baseURL, operationID: "getPerson")
                    checksum &+= response.status.code
                } catch {
                    preconditionFailure("the canned transport failed: \(error)")
                }
            }
        }
        return checksum
    }
}

import Foundation

/// A loader that sends relative requests to a ``ServerEnvironment``.
///
/// A request with no host is *relative*: it gets the scheme, host, port and path prefix of its own
/// ``HTTPRequest/serverEnvironment`` if it has one, or else of this loader's environment, plus that
/// environment's header fields and query items (see ``ServerEnvironment/apply(to:)``). A request that
/// already names a host is *absolute* and passes through untouched — in particular it never receives the
/// environment's header fields, which often hold API keys meant only for that server. A request made from a
/// URL that cannot be sent (`file:///etc/passwd`, `https:///path`) is not relative either: it passes through
/// and fails validation at the terminal, rather than being sent to the environment's host.
///
/// ```swift
/// let chain = ApplyEnvironment(environment: .production) --> URLSessionLoader()
/// await chain.load(HTTPRequest(path: "/people/42"))   // https://api.example.com/v1/people/42
/// ```
// Safety: configuration is immutable (`let`); mutable state, if any, is behind one lock (`Locked`).
public final class ApplyEnvironment: HTTPLoader, @unchecked Sendable {
    /// The environment relative requests go to when they carry none of their own.
    public let environment: ServerEnvironment

    public init(environment: ServerEnvironment) {
        self.environment = environment
    }

    /// The environment's base URL, and the names (never the values) of the header fields and query items it adds.
    public override var configurationDescription: String {
        var parts = ["environment: \(environment.baseURLText)"]
        if !environment.headers.isEmpty {
            parts.append("headers: " + environment.headers.map(\.name).joined(separator: ", "))
        }
        if !environment.query.isEmpty {
            parts.append("query: " + environment.query.map(\.name).joined(separator: ", "))
        }
        return parts.joined(separator: ", ")
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        guard request.host == nil else { return await loadNext(request) }
        return await loadNext(applyingEnvironment(to: request))
    }

    /// The request aimed at its own environment or the loader's. Out of line, so that the environment's
    /// copy stays out of the async frame a waiting request holds.
    @inline(never)
    private func applyingEnvironment(to request: HTTPRequest) -> HTTPRequest {
        guard request.unusableURL == nil else { return request }
        if let own = request.serverEnvironment { return own.apply(to: request) }
        return environment.apply(to: request)
    }
}

/// Whether ``FollowRedirects`` follows a request's redirects, set per request: follow them (the default), don't
/// (the `3xx` comes back as the response), or decide each hop in a closure.
///
/// ```swift
/// var login = HTTPRequest(method: .post, path: "/login", body: FormBody(["user": "alice"]))
/// login.redirectPolicy = .doNotFollow  // the 302 and its Location come back as the response
/// ```
///
/// A closure sees each redirect before it is followed — the `3xx` response and the request ``FollowRedirects``
/// would send next, after RFC 9110's rules and with credentials already removed for another origin — and returns
/// the request to send, changed or not, or stops:
///
/// ```swift
/// var report = HTTPRequest(path: "/reports/latest")
/// report.redirectPolicy = .decide { hop in
///     guard hop.nextRequest.host?.hasSuffix(".example.com") == true else { return .stop }
///     var next = hop.nextRequest
///     next.headers["X-Redirected-From"] = hop.response.url?.path
///     return .follow(next)
/// }
/// ```
///
/// The closure runs on the load's task, once per hop; it must not block. The hop limit and loop detection of
/// ``FollowRedirects`` still apply to the request it returns, and so does the rule that credentials the caller set
/// do not go to another origin: an `Authorization`, `Proxy-Authorization` or `Cookie` field, or one its
/// ``FollowRedirects/redaction`` hides, carried over unchanged from the request that was redirected is removed when
/// the closure sends the next hop to another origin.
///
/// Policies are equal when they are the same case; two ``decide(_:)`` policies are equal only when they are the same
/// value (copies of one policy), as closures cannot be compared.
public struct RedirectPolicy: Sendable, Hashable, HTTPRequestOption {
    private enum Kind: Hashable {
        case follow
        case doNotFollow
        case decide(Decider)
    }

    /// A closure, compared by identity.
    private final class Decider: Hashable, Sendable {
        let decide: @Sendable (Hop) -> Decision
        init(_ decide: @escaping @Sendable (Hop) -> Decision) { self.decide = decide }
        static func == (lhs: Decider, rhs: Decider) -> Bool { lhs === rhs }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    private let kind: Kind

    /// Follow redirects (the default), within ``FollowRedirects``' hop limit.
    public static let follow = RedirectPolicy(kind: .follow)
    /// Don't follow redirects: the `3xx` response, with its `Location`, is the result.
    public static let doNotFollow = RedirectPolicy(kind: .doNotFollow)

    /// Decide each redirect in `decide`: return ``Decision/follow(_:)`` with the request to send next (the one
    /// proposed, or a changed copy), or ``Decision/stop`` to make the `3xx` the result.
    public static func decide(_ decide: @escaping @Sendable (Hop) -> Decision) -> RedirectPolicy {
        RedirectPolicy(kind: .decide(Decider(decide)))
    }

    public static let defaultOptionValue = RedirectPolicy.follow

    /// Whether the policy is ``doNotFollow``.
    var isDoNotFollow: Bool { kind == .doNotFollow }

    /// The closure of a ``decide(_:)`` policy.
    var decider: (@Sendable (Hop) -> Decision)? {
        if case .decide(let decider) = kind { return decider.decide }
        return nil
    }

    /// A redirect ``FollowRedirects`` is about to follow, for a ``RedirectPolicy/decide(_:)`` closure.
    public struct Hop: Sendable {
        /// The redirect: a `301`, `302`, `303`, `307` or `308` with a usable `Location`.
        public var response: HTTPResponse
        /// The request that would be sent next: the `Location` resolved against the URL that answered, the method
        /// and body as RFC 9110 §15.4 says for the status, the fragment inherited, and the secret header fields
        /// removed when the origin changes.
        public var nextRequest: HTTPRequest
        /// The redirects followed before this one, in order.
        public var redirects: [HTTPMetrics.Redirect]

        public init(response: HTTPResponse, nextRequest: HTTPRequest, redirects: [HTTPMetrics.Redirect]) {
            self.response = response
            self.nextRequest = nextRequest
            self.redirects = redirects
        }
    }

    /// What a ``RedirectPolicy/decide(_:)`` closure decides for one redirect.
    @frozen
    public enum Decision: Sendable {
        /// Send this request next: ``Hop/nextRequest``, or a copy changed as you need.
        case follow(HTTPRequest)
        /// Don't follow: the `3xx` response is the result of the load.
        case stop
    }
}

/// The redirects followed before a request was sent; see ``HTTPRequest/redirects``.
enum RedirectHistory: HTTPRequestOption {
    static let defaultOptionValue: [HTTPMetrics.Redirect] = []
}

extension HTTPRequest {
    /// The redirects followed before this request, in order: empty for a request the caller makes; set by
    /// ``FollowRedirects`` on each hop it sends, so that the loaders below can tell a hop from the caller's own
    /// request.
    ///
    /// Authentication loaders read it to keep credentials to the origin the caller asked for: on a hop to another
    /// origin they send none of the request's own credentials, and their own only where those belong. The first
    /// redirect's ``HTTPMetrics/Redirect/url`` is the URL of the caller's request.
    public var redirects: [HTTPMetrics.Redirect] {
        get { self[option: RedirectHistory.self] }
        set { self[option: RedirectHistory.self] = newValue }
    }

    /// Whether this request is a hop of a redirected load (``redirects`` is not empty) to another origin than the
    /// request the caller made: the caller's credentials were meant for that one, not for this.
    public var isRedirectedToAnotherOrigin: Bool {
        guard let first = redirects.first?.url else { return false }
        return origin != Origin(first)
    }

    /// Whether ``FollowRedirects`` follows this request's redirects; ``RedirectPolicy/follow`` by default.
    ///
    /// The transport never follows redirects: without ``FollowRedirects`` in the chain, every `3xx` is the result
    /// whatever the policy.
    public var redirectPolicy: RedirectPolicy {
        get { self[option: RedirectPolicy.self] }
        set { self[option: RedirectPolicy.self] = newValue }
    }
}

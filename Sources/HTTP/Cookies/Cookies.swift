public import Foundation

/// A loader that keeps the cookies servers set and sends them back, as a browser does (RFC 6265bis), in a
/// ``CookieJar``.
///
/// ```swift
/// let cookies = Cookies()
/// let chain =
///     ApplyEnvironment(environment: .production)
///     --> FollowRedirects()
///     --> cookies
///     --> Cache()
///     --> URLSessionLoader()
/// ```
///
/// Each request gets a `Cookie` field with the jar's cookies for its URL (see ``CookieJar`` for which, and in what
/// order); each response's `Set-Cookie` fields are stored in the jar — also those of a redirect, and of a response
/// that comes back inside an error. A request that already carries a `Cookie` field keeps it: the jar's cookies are
/// added after it, but for names it sets itself.
///
/// ## Where it goes in the chain
///
/// - **Below ``FollowRedirects``**, so that it sees every hop: the cookies a redirect sets are stored before the next
///   hop is sent, and each hop gets the cookies for its own URL (``FollowRedirects`` removes the `Cookie` field from a
///   hop to another origin; this loader then adds that origin's own). Above ``FollowRedirects`` it would see only
///   the first request and the last response.
/// - **Above ``Cache``**, so that the cache sees the `Cookie` field a request is sent with: a response that says
///   `Vary: Cookie` is then selected by the cookies sent. The cache never stores `Set-Cookie`, so a response served
///   from the store sets no cookie again.
/// - **Below ``ApplyEnvironment``**: a request needs its host before its cookies can be chosen; one without passes
///   untouched.
///
/// ```
/// ResetGuard --> ApplyEnvironment --> FollowRedirects --> Cookies --> Cache --> Auth --> Retry --> URLSessionLoader
/// ```
///
/// ``URLSessionLoader``'s ``URLSessionLoader/defaultConfiguration`` turns URLSession's own cookie handling off, so
/// this loader is the chain's only cookie store and a reset forgets every cookie; the AsyncHTTPClient transport has
/// no cookie handling of its own.
///
/// ## Secrets
///
/// Cookie values are credentials. ``Redaction/standard`` hides `Cookie` and `Set-Cookie` in logs, cURL commands,
/// recordings and error descriptions, and ``Cookie/description`` leaves the value out. The jar lives in memory only:
/// to keep cookies across launches, save ``jar``'s persistent cookies (``Cookie/isPersistent``) where you keep
/// secrets and pass them to ``init(jar:now:)``.
///
/// ## Reset
///
/// A reset (``HTTPLoader/reset(mode:)``, a logout) empties the jar once the loads in flight have completed, so the
/// next user never sends the last one's cookies. The loader holds no requests.
// Safety: configuration is immutable (`let`); the jar is behind one lock.
public final class Cookies: HTTPLoader, @unchecked Sendable {
    private let state: Locked<CookieJar>
    private let now: @Sendable () -> Date

    /// Creates the loader.
    ///
    /// - Parameters:
    ///   - jar: The cookies to start with; an empty jar by default.
    ///   - now: The current time, for expiry; the system clock by default, a manual one in tests.
    public init(jar: CookieJar = CookieJar(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.state = Locked(jar)
        self.now = now
    }

    /// The jar as it is now: every cookie stored and not yet evicted.
    public var jar: CookieJar { state.withLock { $0 } }

    /// Changes the jar under the loader's lock: to store a cookie of your own, or remove some.
    ///
    /// ```swift
    /// cookies.withJar { $0.removeAll { $0.domain.hasSuffix("tracker.example") } }
    /// ```
    public func withJar<Result>(_ body: (inout CookieJar) throws -> Result) rethrows -> Result {
        try state.withLock(body)
    }

    public override var configurationDescription: String {
        "cookies: \(state.withLock { $0.cookies.count })"
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        let sentAt = now()
        let field = state.withLock { $0.cookieField(for: request, now: sentAt) }
        var sent = request
        if let field { sent.headers["Cookie"] = Self.merging(field, into: request.headers.values(for: "Cookie")) }
        let result = await loadNext(sent)
        let response: HTTPResponse?
        switch result {
        case .success(let received): response = received
        case .failure(let error): response = error.response
        }
        if let response {
            let lines = response.headers.values(for: "Set-Cookie")
            if !lines.isEmpty {
                let receivedAt = now()
                state.withLock { _ = $0.receive(lines, for: request, now: receivedAt) }
            }
        }
        return result
    }

    /// The request's own `Cookie` lines, then the jar's cookies whose names they do not set.
    private static func merging(_ jarField: String, into own: [String]) -> String {
        guard !own.isEmpty else { return jarField }
        let ownField = own.joined(separator: "; ")
        var ownNames: Set<Substring> = []
        for pair in ownField.split(separator: ";") {
            let trimmed = pair.drop { $0 == " " || $0 == "\t" }
            ownNames.insert(trimmed.prefix { $0 != "=" })
        }
        let added = jarField.split(separator: ";").map { $0.drop { $0 == " " } }.filter { pair in
            !ownNames.contains(pair.prefix { $0 != "=" })
        }
        return ([ownField[...]] + added).joined(separator: "; ")
    }

    /// Forgets every cookie: they belong to the user the chain served until now.
    public override func forgetState() async {
        state.withLock { $0.removeAll() }
    }
}

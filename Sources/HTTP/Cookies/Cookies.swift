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
/// recordings and error descriptions, and ``Cookie/description`` leaves the value out.
///
/// ## Keeping cookies across launches
///
/// With a ``CookieStore`` the jar's persistent cookies (those with `Max-Age` or `Expires`, ``Cookie/isPersistent``)
/// outlive the process: the loader reads the store before its first load (or when ``restore()`` is called), adding
/// the unexpired cookies it holds, and saves the persistent cookies again whenever a response or ``withJar(_:)``
/// changes them — in the background, one save at a time, the latest jar last (``waitUntilSaved()`` waits for it).
/// Session cookies are never saved.
///
/// ```swift
/// let cookies = Cookies(store: FileCookieStore(file: supportDirectory.appending(path: "cookies.json")))
/// ```
///
/// ## Reset
///
/// A reset (``HTTPLoader/reset(mode:)``, a logout) empties the jar and the store once the loads in flight and the
/// saves under way have completed, so the next user never sends the last one's cookies, and the next launch does
/// not restore them. The loader holds no requests.
// Safety: configuration is immutable (`let`); the jar and the saves' bookkeeping are behind one lock.
public final class Cookies: HTTPLoader, @unchecked Sendable {
    private enum Restoration {
        case pending
        case running(Task<Void, Never>)
        case done
    }

    private struct State {
        var jar: CookieJar
        var restoration: Restoration
        /// The persistent cookies waiting to be saved, when they changed since the last save began.
        var pendingSave: [Cookie]?
        /// The task saving, while one runs; it saves ``pendingSave`` until there is none.
        var saver: Task<Void, Never>?
    }

    private let state: Locked<State>
    /// Where persistent cookies are kept across launches, if anywhere.
    public let store: (any CookieStore)?
    private let now: @Sendable () -> Date

    /// Creates the loader.
    ///
    /// - Parameters:
    ///   - jar: The cookies to start with; an empty jar by default.
    ///   - store: Where persistent cookies are kept across launches; none by default (the jar lives in memory).
    ///   - now: The current time, for expiry; the system clock by default, a manual one in tests.
    public init(
        jar: CookieJar = CookieJar(), store: (any CookieStore)? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.state = Locked(State(jar: jar, restoration: store == nil ? .done : .pending))
        self.store = store
        self.now = now
    }

    /// The jar as it is now: every cookie stored and not yet evicted (and, before ``restore()`` or the first load,
    /// without the store's cookies).
    public var jar: CookieJar { state.withLock { $0.jar } }

    /// Changes the jar under the loader's lock: to store a cookie of your own, or remove some. A change to the
    /// persistent cookies is saved to the ``store``.
    ///
    /// ```swift
    /// cookies.withJar { $0.removeAll { $0.domain.hasSuffix("tracker.example") } }
    /// ```
    public func withJar<Result>(_ body: (inout CookieJar) throws -> Result) rethrows -> Result {
        let (result, save) = try state.withLock { state -> (Result, Bool) in
            let before = Self.persistentCookies(of: state.jar)
            let result = try body(&state.jar)
            return (result, scheduleSaveIfChanged(from: before, in: &state))
        }
        if save { startSaver() }
        return result
    }

    /// Reads the ``store``'s cookies into the jar, unless that is done already; the first load does it too. An
    /// unexpired cookie is added unless the jar holds the same one; an expired one is dropped.
    public func restore() async {
        guard let store else { return }
        let task = state.withLock { state -> Task<Void, Never>? in
            switch state.restoration {
            case .done: return nil
            case .running(let task): return task
            case .pending:
                let task = Task { await self.finishRestoring(from: store) }
                state.restoration = .running(task)
                return task
            }
        }
        await task?.value
    }

    private func finishRestoring(from store: any CookieStore) async {
        let saved = await store.savedCookies()
        let restoredAt = now()
        state.withLock { state in
            guard case .running = state.restoration else { return }  // a reset came first: nothing to restore
            state.restoration = .done
            for cookie in saved where cookie.isPersistent {
                guard !state.jar.cookies.contains(where: { $0.isSameCookie(as: cookie) }) else { continue }
                state.jar.store(cookie, now: restoredAt)
            }
        }
    }

    /// Waits until the persistent cookies as they are now are saved to the ``store``.
    public func waitUntilSaved() async {
        while let saver = state.withLock({ $0.saver }) { await saver.value }
    }

    public override var configurationDescription: String {
        "cookies: \(state.withLock { $0.jar.cookies.count })" + (store.map { ", store: \(type(of: $0))" } ?? "")
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        if store != nil { await restore() }
        let sentAt = now()
        let field = state.withLock { $0.jar.cookieField(for: request, now: sentAt) }
        var sent = request
        if let field { sent.headers["Cookie"] = Self.merging(field, into: request.headers.values(for: "Cookie")) }
        let result = await loadNext(sent)
        receiveCookies(of: result, for: request)
        return result
    }

    /// Stores the cookies the response to `request` sets, and starts saving them if that changed the persistent ones.
    @inline(never)  // one copy, not one in each of load(_:)'s async pieces
    private func receiveCookies(of result: HTTPResult, for request: HTTPRequest) {
        let response: HTTPResponse?
        switch result {
        case .success(let received): response = received
        case .failure(let error): response = error.response
        }
        guard let lines = response?.headers.values(for: "Set-Cookie"), !lines.isEmpty else { return }
        let receivedAt = now()
        let save = state.withLock { state -> Bool in
            let before = Self.persistentCookies(of: state.jar)
            guard state.jar.receive(lines, for: request, now: receivedAt) > 0 else { return false }
            return scheduleSaveIfChanged(from: before, in: &state)
        }
        if save { startSaver() }
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

    // MARK: Saving

    /// The cookies a ``CookieStore`` keeps: the persistent ones.
    private static func persistentCookies(of jar: CookieJar) -> [Cookie] {
        jar.cookies.filter(\.isPersistent)
    }

    /// Under the lock: when the persistent cookies differ from `before`, records them to be saved; whether a saver
    /// must be started.
    private func scheduleSaveIfChanged(from before: [Cookie], in state: inout State) -> Bool {
        guard store != nil else { return false }
        let after = Self.persistentCookies(of: state.jar)
        guard after != before else { return false }
        state.pendingSave = after
        return state.saver == nil
    }

    /// Starts the task that saves the pending cookies, one save at a time, until none is pending; counted as a load
    /// in flight, so that a reset waits for it before it empties the store.
    private func startSaver() {
        guard let store else { return }
        participation.inFlight.begin()
        let started = state.withLock { state -> Bool in
            guard state.saver == nil, state.pendingSave != nil else { return false }
            state.saver = Task {
                while let cookies = self.state.withLock({ state -> [Cookie]? in
                    defer { state.pendingSave = nil }
                    if state.pendingSave == nil { state.saver = nil }
                    return state.pendingSave
                }) {
                    await store.save(cookies)
                }
                self.participation.inFlight.end()
            }
            return true
        }
        if !started { participation.inFlight.end() }
    }

    /// Forgets every cookie, in the jar and in the store: they belong to the user the chain served until now.
    public override func forgetState() async {
        state.withLock { state in
            state.jar.removeAll()
            state.pendingSave = nil
            state.restoration = .done
        }
        await waitUntilSaved()
        await store?.removeAll()
    }
}

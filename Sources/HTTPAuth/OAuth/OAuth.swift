public import Foundation
public import HTTP

/// A loader that authorizes requests with OAuth 2 bearer tokens, logging in, refreshing and logging out
/// through an ``OAuthStateMachine`` (the series' parts 14–15).
///
/// ```swift
/// let oauth = OAuth(configuration: configuration, delegate: sessionController)
/// let chain = ApplyEnvironment(environment: .production) --> oauth --> Retry() --> Throttle() --> URLSessionLoader()
///
/// var request = HTTPRequest(path: "/me")
/// request.authenticationMethod = .oauth
/// ```
///
/// ## Which requests, and where tokens go
/// A request whose `HTTPRequest.authenticationMethod` is not `.oauth` passes through untouched. A request
/// for an origin outside ``OAuthConfiguration/resourceOrigins`` — another scheme, host or port; a host name
/// alone means `https` on port 443 — fails with `HTTPError.Code.cannotAuthenticate` rather than carry the
/// token there (RFC 6750 §5.3: bearer tokens go over plain `http` only to an `http` origin the app lists). A
/// redirect `FollowRedirects` follows to such an origin (`HTTPRequest.redirects`) goes on without a token instead;
/// one to a resource origin gets the token. The loader's own requests — discovery, token, revocation — go down the
/// chain unauthenticated, bypass `Throttle`, and never come back through `OAuth`, so they cannot trigger a
/// refresh themselves.
///
/// ## The four situations
/// - **Idle** (no credentials): the first request starts a flow — saved credentials, else a login.
/// - **Authorizing** (a flow runs — a login, or a refresh however it started): every request waits, and is
///   released together with the new token or failed together with the flow's error; none goes out with the
///   old token meanwhile. A waiting request whose task is cancelled completes `HTTPError.Code.cancelled` at once.
/// - **Authorized, valid**: requests go out with `Authorization: Bearer …` at once.
/// - **Authorized, expiring**: the token expires within ``OAuthConfiguration/refreshWindow`` (or half its
///   lifetime, if sooner). The first request starts a refresh; every request arriving meanwhile waits for it
///   instead of going out with a stale token — one token-endpoint call however many requests.
///
/// ## Refusals
/// A `401` for a request sent with the current token means the server revoked it: one refresh (shared with
/// every request that hit the same `401`, and which every new request waits for), then the request is replayed
/// once. When the loader gives up after a `401` — the refresh failed, the refresh-loop guard tripped, a reset —
/// the error carries that `401` as its `response`, with its `WWW-Authenticate`. ``setNeedsTokenRefresh()``
/// refreshes before the next request without waiting for a `401`. A `401` for a request sent
/// with an older token is replayed with the current one, without refreshing. A request is replayed at most
/// once; ``OAuthConfiguration/refreshLimit`` stops a server that rejects every fresh token from causing
/// refresh after refresh. A refresh answered `invalid_grant` deletes the credentials and logs in again, or
/// fails (``OAuthConfiguration/onInvalidGrant``).
///
/// ## Reset is logout
/// A reset (`reset()` or `reset(mode:)`, see `HTTPLoader`) fails waiting requests with
/// `HTTPError.Code.resetInProgress` at once and interrupts a running flow (a login in progress stops waiting for
/// the user); requests arriving during the reset fail with `.resetInProgress`, and a `401` for a request in
/// flight is not answered with a refresh. Once every load in flight has completed — finished with
/// `ResetMode.drain`, cancelled with `ResetMode.cancel` — it revokes the tokens when the server has a revocation
/// endpoint, deletes the saved credentials and ends the provider's session through the delegate. The revocation
/// requests are part of the reset: the loaders below let them through, and they are never cancelled.
///
/// Which mode for a logout: `.cancel` when the user asked to log out (nothing from the old session reaches the
/// app afterwards); `.drain`, the default, when the reset is routine and the responses on their way still
/// matter.
// Safety: the configuration is immutable; everything else lives in `state`, behind a lock.
public final class OAuth: HTTPLoader, @unchecked Sendable {
    /// The seed's four situations, as ``situation`` reports them.
    public enum Situation: Sendable, Hashable {
        /// No credentials and no flow running.
        case idle
        /// A flow is running; requests wait for it.
        case authorizing
        /// Credentials that are not about to expire.
        case authorized
        /// Credentials that expire within the refresh window; the next request refreshes them.
        case expired
    }

    /// What a waiting request is told. Boxed, so that it takes a word in the frames of waiting requests.
    private enum Answer: Sendable {
        case granted(Grant)
        case refused(Refusal)

        static func failed(_ code: HTTPError.Code, _ message: String, _ reason: OAuthError?) -> Answer {
            .refused(Refusal(code: code, message: message, reason: reason))
        }
    }

    /// Credentials ready to send: the access token, its `Authorization` value and when to refresh, computed
    /// once when the credentials change rather than per request. One reference is what the fast path reads
    /// under the lock and what waiters are answered with.
    private final class Grant: Sendable {
        let token: String
        let authorization: String
        /// When the credentials need refreshing (`nil`: never by the clock).
        let refreshDeadline: Date?

        init(_ credentials: OAuthCredentials, refreshWindow: Duration) {
            token = credentials.accessToken
            authorization = credentials.authorizationHeaderValue
            refreshDeadline = OAuth.refreshDeadline(of: credentials, window: refreshWindow)
        }
    }

    private final class Refusal: Sendable {
        let code: HTTPError.Code
        let message: String
        let reason: OAuthError?

        init(code: HTTPError.Code, message: String, reason: OAuthError?) {
            self.code = code
            self.message = message
            self.reason = reason
        }

        /// The failure of `request`; `response` is the `401` that led to it, if one did.
        func failure(of request: HTTPRequest, after response: HTTPResponse? = nil) -> HTTPResult {
            .failure(HTTPError(code, request: request, message: message, response: response, underlyingError: reason))
        }
    }

    private struct WeakDelegate {
        weak var value: (any OAuthDelegate)?
    }

    private struct Flow {
        var id: UInt64
        var task: Task<Void, Never>?
    }

    private struct State {
        /// The current credentials; set them with ``authorize(with:)`` or ``forgetCredentials()``, which keep
        /// ``grant`` in step.
        private(set) var credentials: OAuthCredentials?
        /// The current credentials, ready to send.
        private(set) var grant: Grant?

        /// Replaces the current credentials with `credentials`, and returns them ready to send.
        @discardableResult
        mutating func authorize(with credentials: OAuthCredentials) -> Grant {
            let grant = Grant(credentials, refreshWindow: refreshWindow)
            (self.credentials, self.grant, needsRefresh) = (credentials, grant, false)
            return grant
        }

        mutating func forgetCredentials() {
            (credentials, grant, needsRefresh) = (nil, nil, false)
        }

        /// Set by ``OAuth/setNeedsTokenRefresh()``: the current credentials are refreshed before their next use.
        private(set) var needsRefresh = false

        mutating func markNeedsRefresh() {
            if credentials != nil { needsRefresh = true }
        }

        /// Whether the current credentials need refreshing at `now`.
        func isExpiring(at now: Date) -> Bool {
            needsRefresh || (grant?.refreshDeadline.map { now >= $0 } ?? false)
        }
        let refreshWindow: Duration
        /// Whether the delegate's saved credentials were read (or replaced) already.
        var knowsSavedCredentials = false
        var endpoints: OAuthEndpoints?
        var flow: Flow?
        var nextFlowID: UInt64 = 0
        var resetsInProgress = 0
        /// Flows a reset interrupted, which it waits for before logging out.
        var interruptedFlows: [Flow] = []
        /// Requests waiting for a flow; a woken one takes its answer here, under the lock.
        var waiters = Waiters<Answer>()
        var refreshTimes: [Date] = []
        var observers: [UInt64: AsyncStream<OAuthSessionState>.Continuation] = [:]
        var nextObserverID: UInt64 = 0
        var delegate = WeakDelegate()
        var lastFlowPath: [OAuthStateMachine.State] = []
    }

    /// How the loader talks to its authorization server.
    public let configuration: OAuthConfiguration
    /// Where tokens may go.
    private let resourceOrigins: CredentialOrigins
    let now: @Sendable () -> Date
    private let state: Locked<State>
    /// The requests sent on with a token, which a reset waits for before it logs out.
    private let inFlight = InFlightLoads()

    /// - Parameters:
    ///   - configuration: The server, the client, and the refresh rules.
    ///   - credentials: Credentials to start with, if already known; otherwise the delegate's saved ones are
    ///     read on first use.
    ///   - delegate: Stores credentials and shows login and logout pages. Held weakly.
    ///   - now: The current time, for token expiry; tests pass a controllable one.
    public init(
        configuration: OAuthConfiguration,
        credentials: OAuthCredentials? = nil,
        delegate: (any OAuthDelegate)? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.configuration = configuration
        self.resourceOrigins = CredentialOrigins(configuration.resourceOrigins, holder: "OAuth's tokens")
        self.now = now
        self.state = Locked(State(refreshWindow: configuration.refreshWindow))
        super.init()
        state.withLock { state in
            if let credentials { state.authorize(with: credentials) }
            state.knowsSavedCredentials = credentials != nil
            if case .known(let endpoints) = configuration.endpoints { state.endpoints = endpoints }
            state.delegate.value = delegate
        }
    }

    /// Stores credentials and shows login and logout pages. Held weakly.
    public var delegate: (any OAuthDelegate)? {
        get { state.withLock { $0.delegate.value } }
        set { state.withLock { $0.delegate.value = newValue } }
    }

    /// The current credentials, if any.
    public var credentials: OAuthCredentials? { state.withLock { $0.credentials } }

    /// The client, the authorization server, the scopes and the origins tokens are sent to; never a secret.
    public override var configurationDescription: String {
        let server =
            switch configuration.endpoints {
            case .discover(let issuer): "issuer: \(issuer.absoluteString)"
            case .known(let endpoints): "server: \(Origin(endpoints.token).map(\.description) ?? "?")"
            }
        var parts = ["clientID: \(configuration.clientID)", server]
        if !configuration.scopes.isEmpty { parts.append("scopes: " + configuration.scopes.joined(separator: " ")) }
        parts.append(
            "resourceOrigins: " + configuration.resourceOrigins.map(\.description).sorted().joined(separator: ", "))
        return parts.joined(separator: ", ")
    }

    /// Which of the four situations the loader is in.
    public var situation: Situation {
        let now = now()
        return state.withLock { state in
            if state.flow != nil { return .authorizing }
            guard state.credentials != nil else { return .idle }
            return state.isExpiring(at: now) ? .expired : .authorized
        }
    }

    /// The number of requests waiting for a flow.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// The states the last finished flow went through (a reset's logout included).
    public var lastFlowPath: [OAuthStateMachine.State] { state.withLock { $0.lastFlowPath } }

    /// The session's state now, then every change: logged in, refreshed, logged out (with the error that
    /// caused it). Each call returns a new stream; it ends when the loader is deallocated or the consumer
    /// stops iterating.
    ///
    /// ```swift
    /// for await session in oauth.sessionStates() {
    ///     if case .loggedOut = session { showLogin() }
    /// }
    /// ```
    public func sessionStates() -> AsyncStream<OAuthSessionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: OAuthSessionState.self)
        let id = state.withLock { state -> UInt64 in
            state.nextObserverID += 1
            state.observers[state.nextObserverID] = continuation
            continuation.yield(state.credentials == nil ? .loggedOut(nil) : .loggedIn)
            return state.nextObserverID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    deinit {
        for observer in state.withLock({ $0.observers.values }) { observer.finish() }
    }

    private func publish(_ session: OAuthSessionState) {
        for observer in state.withLock({ Array($0.observers.values) }) { observer.yield(session) }
    }

    // MARK: - Loading

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        guard request.isForAuthenticatingLoader(self, nativeMethod: .oauth) else { return await loadNext(request) }
        if let refusal = refusalOfHost(request) {
            return isUnauthenticatedRedirect(request) ? await loadNext(request) : refusal
        }
        if let grant = usableCredentials() {
            // The common case: a valid token, no flow, no waiting.
            return await send(request, grant: grant)
        }
        // This frame stays small: it is what a request waiting for a flow holds, with `currentCredentials`.
        return await send(request, answer: await currentCredentials(rejecting: nil))
    }

    /// A failure for a request to an origin the tokens are not for, or `nil` for a resource origin.
    @inline(never)
    private func refusalOfHost(_ request: HTTPRequest) -> HTTPResult? {
        resourceOrigins.contains(request) ? nil : .failure(resourceOrigins.refusal(of: request))
    }

    /// A redirect elsewhere than a resource origin: it goes on without a token.
    @inline(never)
    private func isUnauthenticatedRedirect(_ request: HTTPRequest) -> Bool {
        request.isRedirectedToAnotherOrigin && !resourceOrigins.contains(request)
    }

    /// Sends a request that waited for a flow with the flow's answer.
    @inline(never)
    private func send(_ request: HTTPRequest, answer: Answer) async -> HTTPResult {
        switch answer {
        case .granted(let grant):
            return await send(request, grant: grant)
        case .refused(let refusal):
            return refusal.failure(of: request)
        }
    }

    /// Sends a request with a token. A `401` replays it once: after a refresh when `token` is still the current
    /// one, at once with the current token when it was replaced meanwhile.
    @inline(never)
    private func send(_ request: HTTPRequest, grant: Grant) async -> HTTPResult {
        inFlight.begin()
        defer { inFlight.end() }
        var authorized = request
        authorized.headers["Authorization"] = grant.authorization
        let result = await loadNext(authorized)
        guard case .success(let response) = result, response.status == .unauthorized else { return result }
        switch await currentCredentials(rejecting: grant) {
        case .granted(let current):
            guard request.body.isReplayable else { return .failure(Self.notReplayable(request, after: response)) }
            response.discardBody()
            var replay = request
            replay.headers["Authorization"] = current.authorization
            return await loadNext(replay)
        case .refused(let refusal):
            // The error keeps the 401: its WWW-Authenticate says why the server refused the token.
            return refusal.failure(of: request, after: response)
        }
    }

    /// The failure of a request that a `401` would have replayed, had its body been sendable twice.
    static func notReplayable(_ request: HTTPRequest, after response: HTTPResponse) -> HTTPError {
        HTTPError(
            .bodyNotReplayable, request: request,
            message: "the server answered 401, and the request's body (\(type(of: request.body))) can be sent only "
                + "once, so it cannot be replayed with a fresh token",
            response: response)
    }

    /// The current credentials and their header value when they can be used at once.
    private func usableCredentials() -> Grant? {
        let now = now()
        return state.withLock { state in
            guard state.resetsInProgress == 0, state.flow == nil, let grant = state.grant, !state.isExpiring(at: now)
            else { return nil }
            return grant
        }
    }

    /// Whether credentials should be refreshed before use: they expire within the refresh window, or within
    /// half their lifetime when that is shorter.
    func needsRefresh(_ credentials: OAuthCredentials) -> Bool {
        guard let deadline = Self.refreshDeadline(of: credentials, window: configuration.refreshWindow) else {
            return false
        }
        return now() >= deadline
    }

    /// When `credentials` need refreshing, by this device's clock: `window` before they expire, or half their
    /// lifetime if that is shorter; `nil` when they have no expiry. The expiry is in the server's clock when the
    /// credentials know the offset between the two (``OAuthCredentials/serverClockOffset``).
    static func refreshDeadline(of credentials: OAuthCredentials, window: Duration) -> Date? {
        guard let expirationDate = credentials.expirationDate else { return nil }
        var window = window
        if let lifetime = credentials.lifetime { window = min(window, lifetime / 2) }
        return expirationDate.addingTimeInterval(-window.seconds - (credentials.serverClockOffset ?? 0))
    }

    /// Credentials to send, waiting for a flow when there are none usable. `rejected` holds the token a
    /// server just refused with `401`: if it is still the current one, it is refreshed.
    ///
    /// Its frame and its closure's are what every waiting request holds, so they capture as little as
    /// possible and the work around the wait is out of line.
    private func currentCredentials(rejecting rejected: Grant?) async -> Answer {
        let id = state.withLock { $0.waiters.nextID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in enqueue(continuation, id: id, rejecting: rejected) }
        } onCancel: {
            cancelWaiter(id)
        }
        return takeAnswer(id)
    }

    /// The answer left for waiter `id` by whoever resumed it.
    @inline(never)
    private func takeAnswer(_ id: UInt64) -> Answer {
        guard let answer = state.withLock({ $0.waiters.takeAnswer(id) }) else {
            preconditionFailure("OAuth: waiter \(id) was resumed without an answer")
        }
        return answer
    }

    /// Answers a waiter whose task was cancelled, if it is still waiting.
    @inline(never)
    private func cancelWaiter(_ id: UInt64) {
        let waiter = state.withLock {
            $0.waiters.answer(id, with: .failed(.cancelled, "cancelled while waiting for authorization", nil))
        }
        waiter?.resume()
    }

    /// Answers a waiter at once (credentials usable after all, cancelled, logging out), or queues it and
    /// starts a flow if none runs. Out of line, so that the waiting closure's frame stays small.
    @inline(never)
    private func enqueue(
        _ continuation: CheckedContinuation<Void, Never>, id: UInt64, rejecting rejected: Grant?
    ) {
        let now = now()
        let decision = state.withLock { state -> (answered: Bool, start: (UInt64, OAuthStateMachine.State)?) in
            if Task.isCancelled {
                state.waiters.answerUnparked(
                    id, with: .failed(.cancelled, "cancelled while waiting for authorization", nil))
                return (true, nil)
            }
            if state.resetsInProgress > 0 {
                state.waiters.answerUnparked(
                    id, with: .failed(.resetInProgress, "the OAuth loader is logging out", nil))
                return (true, nil)
            }
            // While a flow runs (a login, or a refresh another request's 401 started), requests wait for it.
            if state.flow == nil, let grant = state.grant, grant.token != rejected?.token, !state.isExpiring(at: now) {
                state.waiters.answerUnparked(id, with: .granted(grant))
                return (true, nil)
            }
            state.waiters.park(id, continuation)
            guard state.flow == nil else { return (false, nil) }
            let start: OAuthStateMachine.State
            if let credentials = state.credentials {
                start = credentials.refreshToken == nil ? .logIn : .refreshTokens
            } else {
                start = state.knowsSavedCredentials ? .logIn : .getSavedCredentials
            }
            state.nextFlowID += 1
            state.flow = Flow(id: state.nextFlowID)
            return (false, (state.nextFlowID, start))
        }
        if decision.answered { continuation.resume() }
        if let (flowID, start) = decision.start { startFlow(flowID, from: start) }
    }

    private func startFlow(_ flowID: UInt64, from start: OAuthStateMachine.State) {
        let credentials = state.withLock { $0.credentials }
        let task = Task {
            let machine = OAuthStateMachine(loader: self)
            let outcome = await machine.run(from: start, credentials: credentials)
            self.finishFlow(flowID, outcome: outcome, path: machine.path)
        }
        let superseded = state.withLock { state -> Bool in
            guard state.flow?.id == flowID else { return true }
            state.flow?.task = task
            return false
        }
        if superseded { task.cancel() }  // a reset came first
    }

    private func finishFlow(_ flowID: UInt64, outcome: OAuthStateMachine.Outcome, path: [OAuthStateMachine.State]) {
        let (waiters, session) = state.withLock {
            state -> ([CheckedContinuation<Void, Never>], OAuthSessionState?) in
            guard state.flow?.id == flowID else { return ([], nil) }
            state.flow = nil
            state.lastFlowPath = path
            let answer: Answer
            var session: OAuthSessionState?
            switch outcome {
            case .authorized(let credentials, let newSession):
                answer = .granted(state.authorize(with: credentials))
                state.knowsSavedCredentials = true
                session = newSession
            case .failed(let error, let deletedCredentials):
                if deletedCredentials {
                    state.forgetCredentials()
                    state.knowsSavedCredentials = true
                    session = .loggedOut(error)
                }
                answer = .failed(.cannotAuthenticate, error.description, error)
            case .loggedOut(let problem):
                state.forgetCredentials()
                answer = .failed(.cannotAuthenticate, "logged out", problem)
                session = .loggedOut(problem)
            case .interrupted:
                answer = .failed(.resetInProgress, "the authorization flow was interrupted", nil)
            }
            return (state.waiters.answerAll(with: answer), session)
        }
        for waiter in waiters { waiter.resume() }
        if let session { publish(session) }
    }

    // MARK: - Reset

    /// Phase 1 of a reset: fails waiting requests with `HTTPError.Code.resetInProgress`, interrupts a running flow
    /// (a login in progress stops waiting for the user), and refuses to authorize requests until the reset ends.
    public override func beginReset(_ mode: ResetMode) {
        let (flow, waiters) = state.withLock { state -> (Flow?, [CheckedContinuation<Void, Never>]) in
            state.resetsInProgress += 1
            state.interruptedFlows += state.flow.map { [$0] } ?? []
            defer { state.flow = nil }
            let waiters = state.waiters.answerAll(
                with: .failed(.resetInProgress, "the OAuth loader logged out while this request waited", nil))
            return (state.flow, waiters)
        }
        for waiter in waiters { waiter.resume() }
        flow?.task?.cancel()
    }

    /// Phase 2 of a reset: returns once an interrupted flow has stopped and the requests sent with a token have
    /// completed (a `401` among them is not answered with a refresh).
    public override func waitUntilIdle() async {
        let flows = state.withLock { state in
            defer { state.interruptedFlows = [] }
            return state.interruptedFlows
        }
        for flow in flows { await flow.task?.value }
        await inFlight.waitUntilIdle()
    }

    /// Whether a reset has begun and not ended; for tests.
    var isResetting: Bool { state.withLock { $0.resetsInProgress > 0 } }

    /// Phase 3 of a reset, the logout: revokes the tokens when the server has a revocation endpoint, deletes the
    /// saved credentials and ends the provider's session through the delegate. Its requests go down the chain
    /// marked as part of the reset, so the loaders below, which refuse everything else, let them through.
    public override func reset() async {
        guard isTakingPartInReset else { return await super.reset() }
        let credentials = state.withLock { state in
            defer {
                state.forgetCredentials()
                state.knowsSavedCredentials = false
            }
            return state.credentials
        }
        let machine = OAuthStateMachine(loader: self)
        let outcome = await machine.run(from: .logOut, credentials: credentials)
        var problem: OAuthError?
        if case .loggedOut(let error) = outcome { problem = error }
        state.withLock { state in
            state.lastFlowPath = machine.path
            state.refreshTimes = []
        }
        publish(.loggedOut(problem))
    }

    public override func endReset() {
        state.withLock { $0.resetsInProgress -= 1 }
    }

    /// Marks the current credentials as needing a refresh: the next request that needs a token refreshes them
    /// first (or logs in, without a refresh token), and waits for it, as when they are about to expire. For a
    /// token you know is no longer good — the user's permissions changed, another device logged out. Does
    /// nothing without credentials.
    public func setNeedsTokenRefresh() {
        state.withLock { $0.markNeedsRefresh() }
    }

    // MARK: - For the state machine

    var knownEndpoints: OAuthEndpoints? { state.withLock { $0.endpoints } }

    func cache(_ endpoints: OAuthEndpoints) {
        state.withLock { $0.endpoints = endpoints }
    }

    /// Sends one of the loader's own requests (discovery, token, revocation) down the chain.
    func sendDownstream(_ request: HTTPRequest) async -> HTTPResult {
        await loadNext(request)
    }

    /// Refuses a refresh when the refresh limit's number of successful refreshes happened within its window:
    /// fresh tokens that the server keeps rejecting. Failed attempts (the network is down) do not count.
    func checkRefreshLimit() throws(OAuthError) {
        let limit = configuration.refreshLimit
        let now = now()
        let allowed = state.withLock { state -> Bool in
            state.refreshTimes.removeAll { now.timeIntervalSince($0) >= limit.window.seconds }
            return state.refreshTimes.count < limit.maximumRefreshes
        }
        if !allowed { throw .refreshLoop(refreshes: limit.maximumRefreshes, window: limit.window) }
    }

    /// Counts a successful refresh for the refresh limit.
    func recordRefresh() {
        let now = now()
        state.withLock { $0.refreshTimes.append(now) }
    }

    func loadSavedCredentials() async -> OAuthCredentials? {
        guard let delegate else { return nil }
        return try? await delegate.savedCredentials(for: self)
    }

    func saveCredentials(_ credentials: OAuthCredentials) async {
        try? await delegate?.save(credentials, for: self)
    }

    /// Deletes the saved credentials; returns the store's error, if any.
    func deleteSavedCredentials() async -> OAuthError? {
        do {
            try await delegate?.deleteCredentials(for: self)
            return nil
        } catch {
            return .credentialStore("deleting the saved credentials failed: \(error)")
        }
    }
}

// MARK: - The loader's own traffic

/// Marks requests that an authentication loader sends for itself (discovery, tokens, revocation).
enum AuthorizationServerTraffic: HTTPRequestOption {
    static let defaultOptionValue = false
}

extension HTTPRequest {
    /// Whether an authentication loader sent this request for itself.
    var isAuthorizationServerTraffic: Bool { self[option: AuthorizationServerTraffic.self] }

    /// Marks the request as an authentication loader's own: unauthenticated, not throttled, and let through
    /// by ``Auth`` while it resets (a logout's revocation request).
    mutating func markAsAuthorizationServerTraffic() {
        self[option: AuthorizationServerTraffic.self] = true
        authenticationMethod = nil
        throttle = .never
    }
}

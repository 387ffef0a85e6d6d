public import Foundation
public import HTTP

/// A loader that authorizes requests with OAuth 2 bearer tokens: it logs in, refreshes and logs out as the
/// authorization server requires, and sends each request with the current access token.
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
/// ## Situations
/// The loader is in one of four ``Situation``s:
/// - **Idle** (no credentials): the first request starts a flow — saved credentials, else a login.
/// - **Authorizing** (a flow runs — a login, or a refresh however it started): every request waits, and is
///   released together with the new token or failed together with the flow's error; none goes out with the
///   old token meanwhile. A waiting request whose task is cancelled completes `HTTPError.Code.cancelled` at once.
/// - **Authorized**: requests go out with `Authorization: Bearer …` at once.
/// - **Needs refresh**: the token expires within ``OAuthConfiguration/refreshWindow`` (or half its lifetime, if
///   sooner), or ``setNeedsTokenRefresh()`` marked it. The first request starts a refresh; every request arriving
///   meanwhile waits for it instead of going out with a stale token — one token-endpoint call however many
///   requests.
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
    /// Where the loader stands, as ``situation`` reports it.
    public enum Situation: Sendable, Hashable {
        /// No credentials and no flow running.
        case idle
        /// A flow is running; requests wait for it.
        case authorizing
        /// Credentials that can be used as they are.
        case authorized
        /// Credentials that must be refreshed before their next use: they expire within the refresh window, or
        /// ``OAuth/setNeedsTokenRefresh()`` marked them. The next request refreshes them.
        case needsRefresh
    }

    private typealias Machine = OAuthStateMachine
    private typealias Waiter = CheckedContinuation<Void, Never>

    private struct WeakDelegate {
        weak var value: (any OAuthDelegate)?
    }

    private struct State {
        /// The protocol: every decision about credentials, flows and resets.
        var machine: Machine
        /// Requests waiting for a flow; a woken one takes its answer here, under the lock.
        var waiters = Waiters<Machine.Answer>()
        /// Resets that reached their logout while another's ran, waiting for it to end.
        var resetsAwaitingLogout = Waiters<Void>()
        /// The task performing the running flow's actions.
        var flowTask: (run: Machine.RunID, task: Task<Void, Never>)?
        /// Flows a reset interrupted, which it waits for before logging out.
        var interruptedFlows: [Task<Void, Never>] = []
        var observers: [UInt64: AsyncStream<OAuthSessionState>.Continuation] = [:]
        var nextObserverID: UInt64 = 0
        var delegate = WeakDelegate()
    }

    /// How the loader talks to its authorization server.
    public let configuration: OAuthConfiguration
    /// Where tokens may go.
    private let resourceOrigins: CredentialOrigins
    private let now: @Sendable () -> Date
    private let state: Locked<State>
    /// The requests sent on with a token, counted with this loader's loads in flight: a reset waits for them (and
    /// their 401s) before it logs out, also when this loader heads the chain.
    private var inFlight: InFlightLoads { participation.inFlight }
    /// The interruptible operations of flows (token requests, login pages), counted until they end.
    private let operations = InFlightLoads()

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
        var initial = State(machine: OAuthStateMachine(configuration: configuration, credentials: credentials))
        initial.delegate.value = delegate
        self.state = Locked(initial)
        super.init()
    }

    /// Stores credentials and shows login and logout pages. Held weakly.
    public var delegate: (any OAuthDelegate)? {
        get { state.withLock { $0.delegate.value } }
        set { state.withLock { $0.delegate.value = newValue } }
    }

    /// The current credentials, if any.
    public var credentials: OAuthCredentials? { state.withLock { $0.machine.credentials } }

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

    /// Which of the four situations the loader is in: to show a signed-in state, or to know that the next request
    /// will wait for a refresh.
    public var situation: Situation {
        let now = now()
        return state.withLock { $0.machine.situation(at: now) }
    }

    /// How many requests are waiting for a flow (a login or a refresh) now: a gauge for metrics, as
    /// `Throttle.waitingCount` is for its queue.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// The states the last finished flow went through (a reset's logout included).
    package var lastFlowPath: [OAuthStateMachine.State] { state.withLock { $0.machine.lastPath } }

    /// How many resets wait for a logout another reset runs.
    package var resetsAwaitingLogoutCount: Int { state.withLock { $0.resetsAwaitingLogout.count } }

    /// What the loader is doing, for a test that gave up waiting: the situation, where the machine is, the requests
    /// waiting, whether a flow task runs, the flow operations and token requests still under way, and whether a
    /// delegate is set. Never a token.
    package var debugState: String {
        let now = now()
        let summary = state.withLock { state in
            "situation \(state.machine.situation(at: now)), at \(state.machine.position), "
                + "\(state.machine.currentRun.map { "\($0)" } ?? "no run"), "
                + "waiting \(state.waiters.count), flow task \(state.flowTask == nil ? "none" : "running"), "
                + "interrupted flows \(state.interruptedFlows.count), resetting \(state.machine.isResetting), "
                + "delegate \(state.delegate.value == nil ? "none" : "set"), last path \(state.machine.lastPath)"
        }
        return summary + ", operations under way \(operations.runningCount), sent with a token \(inFlight.runningCount)"
    }

    /// Returns once every interruptible operation a flow started has ended, also those a reset interrupted and
    /// left running (a token request whose answer comes late, a login page still open): for tests that check
    /// what such a late answer leaves behind.
    package func waitUntilInterruptedOperationsEnd() async { await operations.waitUntilIdle() }

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
            continuation.yield(state.machine.credentials == nil ? .loggedOut(nil) : .loggedIn)
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

    /// Marks the current credentials as needing a refresh: the next request that needs a token refreshes them
    /// first (or logs in, without a refresh token), and waits for it, as when they are about to expire. For a
    /// token you know is no longer good — the user's permissions changed, another device logged out. Does
    /// nothing without credentials.
    public func setNeedsTokenRefresh() {
        state.withLock { $0.machine.setNeedsRefresh() }
    }

    // MARK: - Loading

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        guard request.isForAuthenticatingLoader(self) else { return await loadNext(request) }
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
    /// Out of line: its locals stay out of the async frame of `load(_:)`, which every request waiting in or
    /// below this loader holds (BudgetReport's scale section measures a parked request's bytes).
    @inline(never)
    private func refusalOfHost(_ request: HTTPRequest) -> HTTPResult? {
        resourceOrigins.contains(request) ? nil : .failure(resourceOrigins.refusal(of: request))
    }

    /// A redirect elsewhere than a resource origin: it goes on without a token.
    /// Out of line: its locals stay out of the async frame of `load(_:)`, which every request waiting in or
    /// below this loader holds (BudgetReport's scale section measures a parked request's bytes).
    @inline(never)
    private func isUnauthenticatedRedirect(_ request: HTTPRequest) -> Bool {
        request.isRedirectedToAnotherOrigin && !resourceOrigins.contains(request)
    }

    /// The current credentials when they can be used at once.
    private func usableCredentials() -> Machine.Grant? {
        let now = now()
        return state.withLock { $0.machine.grant(usableAt: now) }
    }

    /// Sends a request that waited for a flow with the flow's answer.
    /// Out of line: its locals stay out of the async frame of `load(_:)`, which every request waiting in or
    /// below this loader holds (BudgetReport's scale section measures a parked request's bytes).
    @inline(never)
    private func send(_ request: HTTPRequest, answer: Machine.Answer) async -> HTTPResult {
        switch answer {
        case .granted(let grant): await send(request, grant: grant)
        case .refused(let refusal): refusal.failure(of: request)
        }
    }

    /// Sends a request with a token. A `401` replays it once: after a refresh when `token` is still the current
    /// one, at once with the current token when it was replaced meanwhile.
    /// Out of line: its locals stay out of the async frame of `load(_:)`, which every request waiting in or
    /// below this loader holds (BudgetReport's scale section measures a parked request's bytes).
    @inline(never)
    private func send(_ request: HTTPRequest, grant: Machine.Grant) async -> HTTPResult {
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
    private static func notReplayable(_ request: HTTPRequest, after response: HTTPResponse) -> HTTPError {
        HTTPError(
            .bodyNotReplayable, request: request,
            message: "the server answered 401, and the request's body (\(type(of: request.body))) can be sent only "
                + "once, so it cannot be replayed with a fresh token",
            response: response)
    }

    /// Credentials to send, waiting for a flow when there are none usable. `rejected` holds the token a
    /// server just refused with `401`: if it is still the current one, it is refreshed.
    ///
    /// Its frame and its closure's are what every waiting request holds, so they capture as little as
    /// possible and the work around the wait is out of line.
    private func currentCredentials(rejecting rejected: Machine.Grant?) async -> Machine.Answer {
        let id = state.withLock { $0.waiters.nextID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in enqueue(continuation, id: id, rejecting: rejected) }
        } onCancel: {
            cancelWaiter(id)
        }
        return takeAnswer(id)
    }

    /// The answer left for waiter `id` by whoever resumed it.
    /// Out of line: its locals stay out of the async frame of `load(_:)`, which every request waiting in or
    /// below this loader holds (BudgetReport's scale section measures a parked request's bytes).
    @inline(never)
    private func takeAnswer(_ id: UInt64) -> Machine.Answer {
        guard let answer = state.withLock({ $0.waiters.takeAnswer(id) }) else {
            preconditionFailure("OAuth: waiter \(id) was resumed without an answer")
        }
        return answer
    }

    /// Answers a waiter whose task was cancelled, if it is still waiting.
    /// Out of line: its locals stay out of the async frame of `load(_:)`, which every request waiting in or
    /// below this loader holds (BudgetReport's scale section measures a parked request's bytes).
    @inline(never)
    private func cancelWaiter(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.answer(id, with: Self.cancelled) }
        waiter?.resume()
    }

    private static let cancelled = Machine.Answer.refused(
        Machine.Refusal(code: .cancelled, message: "cancelled while waiting for authorization", reason: nil))

    /// Asks the machine what a request that needs a token does — go out, wait, start a flow and wait, or fail —
    /// and parks it when it waits. Out of line, so that the waiting closure's frame stays small.
    @inline(never)
    private func enqueue(_ continuation: Waiter, id: UInt64, rejecting rejected: Machine.Grant?) {
        let now = now()
        typealias Decision = (isAnswered: Bool, released: [Waiter], flow: (Machine.RunID, Machine.Action)?)
        let decision = state.withLock { state -> Decision in
            if Task.isCancelled {
                state.waiters.answerUnparked(id, with: Self.cancelled)
                return (true, [], nil)
            }
            switch state.machine.requestArrived(rejecting: rejected, at: now) {
            case .send(let grant):
                state.waiters.answerUnparked(id, with: .granted(grant))
                return (true, [], nil)
            case .refuse(let refusal):
                state.waiters.answerUnparked(id, with: .refused(refusal))
                return (true, [], nil)
            case .wait:
                state.waiters.park(id, continuation)
                return (false, [], nil)
            case .start(let run, let first):
                state.waiters.park(id, continuation)
                return (false, Self.settle(first, of: run, in: &state), (run, first))
            }
        }
        if decision.isAnswered { continuation.resume() }
        for waiter in decision.released { waiter.resume() }
        if let (run, first) = decision.flow { startFlow(run, from: first) }
    }

    // MARK: - Performing the machine's actions

    /// Under the lock, with the machine's `action` for `run`: the waiters it answers (a finished flow answers them
    /// all, a finished logout releases the resets waiting for it), to resume after the lock.
    private static func settle(_ action: Machine.Action, of run: Machine.RunID, in state: inout State) -> [Waiter] {
        switch action {
        case .finish(let answer, _):
            if state.flowTask?.run == run { state.flowTask = nil }
            return state.waiters.answerAll(with: answer)
        case .finishLogout:
            return state.resetsAwaitingLogout.answerAll(with: ())
        default:
            return []
        }
    }

    /// Performs a new flow's actions in a task of its own, which a reset can interrupt.
    private func startFlow(_ run: Machine.RunID, from first: Machine.Action) {
        if case .finish(_, let session) = first {  // finished at once (the refresh limit): nothing to perform
            if let session { publish(session) }
            return
        }
        let task = Task { await self.perform(run, from: first) }
        let isCurrent = state.withLock { state -> Bool in
            guard state.machine.currentRun == run else { return false }
            state.flowTask = (run, task)
            return true
        }
        if !isCurrent { task.cancel() }  // a reset came first (or the flow is over already)
    }

    /// Performs `run`'s actions one after the other, feeding each outcome back to the machine, until it ends.
    private func perform(_ run: Machine.RunID, from first: Machine.Action) async {
        var action = first
        while let event = await outcome(of: action) {
            let now = now()
            let resumed: [Waiter]
            (action, resumed) = state.withLock { state in
                let next = state.machine.handle(event, of: run, at: now)
                return (next, Self.settle(next, of: run, in: &state))
            }
            for waiter in resumed { waiter.resume() }
        }
        switch action {
        case .finish(_, let session?): publish(session)
        case .finishLogout(let problem): publish(.loggedOut(problem))
        default: break
        }
    }

    /// Performs an action and returns its outcome; `nil` for the actions that end a run. Waits on others — the
    /// login page, a flow's requests down the chain — are interruptible: a reset stops them at once, even when
    /// the delegate or the loaders below do not honour cancellation promptly, and the machine ignores what a run
    /// it dropped reports.
    private func outcome(of action: Machine.Action) async -> Machine.Event? {
        switch action {
        case .readSavedCredentials:
            return .savedCredentialsRead(try? await delegate?.savedCredentials(for: self))
        case .send(let request, let isInterruptible):
            guard isInterruptible else { return .responseReceived(await loadNext(request)) }
            // Not counted as in flight: a reset abandons an interrupted flow's request rather than wait for it.
            let result = await interruptible(counting: operations) { await self.loadNextUncounted(request) }
            return .responseReceived(
                result
                    ?? .failure(
                        HTTPError(.cancelled, request: request, message: "the authorization flow was interrupted")))
        case .showLogin(let url):
            guard let delegate else { return .loginAnswered(.noDelegate) }
            let answer = await interruptible(counting: operations) { () -> Result<URL?, any Error> in
                do {
                    return .success(try await delegate.logIn(at: url, for: self))
                } catch {
                    return .failure(error)
                }
            }
            switch answer {
            case .success(let callback?)?: return .loginAnswered(.redirected(callback))
            case .success(nil)?, nil: return .loginAnswered(.cancelled)  // closed, or interrupted by a reset
            case .failure(let error)? where error is CancellationError: return .loginAnswered(.cancelled)
            case .failure(let error)?: return .loginAnswered(.failed(.loginFailed(error)))
            }
        case .save(let credentials):
            try? await delegate?.save(credentials, for: self)
            return .credentialsSaved
        case .deleteSavedCredentials:
            do {
                try await delegate?.deleteCredentials(for: self)
                return .savedCredentialsDeleted(nil)
            } catch {
                return .savedCredentialsDeleted(.credentialStore("deleting the saved credentials failed: \(error)"))
            }
        case .showLogout(let url):
            await delegate?.logOut(at: url, for: self)
            return .logoutPageClosed
        case .finish, .finishLogout, .none:
            return nil
        }
    }

    // MARK: - Reset

    /// Phase 1 of a reset: fails waiting requests with `HTTPError.Code.resetInProgress`, interrupts a running flow
    /// (a login in progress stops waiting for the user), and refuses to authorize requests until the reset ends.
    public override func failHeldLoads(_ mode: ResetMode) {
        let (waiters, interrupted) = state.withLock { state -> ([Waiter], Task<Void, Never>?) in
            let interruption = state.machine.beginReset()
            var interrupted: Task<Void, Never>?
            if let run = interruption.interruptedRun, let flow = state.flowTask, flow.run == run {
                interrupted = flow.task
                state.interruptedFlows.append(flow.task)
                state.flowTask = nil
            }
            return (state.waiters.answerAll(with: .refused(interruption.refusal)), interrupted)
        }
        for waiter in waiters { waiter.resume() }
        interrupted?.cancel()
    }

    /// Phase 2 of a reset, once the requests sent with a token have completed (a `401` among them is not answered
    /// with a refresh): returns once an interrupted flow has stopped.
    public override func waitUntilIdle() async {
        let flows = state.withLock { state in
            defer { state.interruptedFlows = [] }
            return state.interruptedFlows
        }
        for flow in flows { await flow.value }
    }

    /// Phase 3 of a reset, the logout: revokes the tokens when the server has a revocation endpoint, deletes the
    /// saved credentials and ends the provider's session through the delegate. Its requests go down the chain
    /// marked as part of the reset, so the loaders below, which refuse everything else, let them through. A reset
    /// that gets here while another one logs out waits for that logout.
    public override func forgetState() async {
        let id = state.withLock { $0.resetsAwaitingLogout.nextID() }
        var logout: (Machine.RunID, Machine.Action)?
        await withCheckedContinuation { (continuation: Waiter) in
            let waiters = state.withLock { state -> [Waiter] in
                switch state.machine.logOut() {
                case .join:
                    state.resetsAwaitingLogout.park(id, continuation)
                    return []
                case .run(let run, let first):
                    logout = (run, first)
                    return [continuation] + state.waiters.answerAll(with: Self.loggingOut)
                }
            }
            for waiter in waiters { waiter.resume() }
        }
        state.withLock { _ = $0.resetsAwaitingLogout.takeAnswer(id) }
        if let (run, first) = logout { await perform(run, from: first) }
    }

    private static let loggingOut = Machine.Answer.refused(
        Machine.Refusal(code: .resetInProgress, message: "the OAuth loader is logging out", reason: nil))

    /// Phase 4 of a reset: authorizes requests again, once every reset that began has ended.
    public override func resetDidEnd() {
        state.withLock { $0.machine.endReset() }
    }
}

extension OAuth: NativelyAuthenticating {
    var nativeAuthenticationMethod: AuthenticationMethod { .oauth }
}

public import Foundation
public import HTTP

/// A loader that authenticates requests with a ``CredentialScheme`` — a key from an endpoint, a signature, a password —
/// and gives every scheme the same machinery: one flow at a time, waiting requests, one replay after a `401`, origin
/// binding, a refusal limit and the reset protocol. ``BasicAuth`` and ``OAuth`` are two; a scheme of your own is
/// another:
///
/// ```swift
/// extension AuthenticationMethod {
///     static let apiKey = AuthenticationMethod(rawValue: "apiKey")
/// }
///
/// let apiKey = CredentialLoader(scheme: APIKeyScheme(keyEndpoint: keys), method: .apiKey, origins: ["api.example.com"])
/// let chain = ApplyEnvironment(environment: .production) --> apiKey --> Retry() --> URLSessionLoader()
///
/// var request = HTTPRequest(path: "/reports")
/// request.authenticationMethod = .apiKey
/// ```
///
/// ## Which requests, and where credentials go
/// A request whose `HTTPRequest.authenticationMethod` is not the loader's ``method`` passes through untouched (``Auth``
/// routes a request to the loader registered for its method under any name). A request for an origin outside
/// ``origins`` — another scheme, host or port — fails with `HTTPError.Code.cannotAuthenticate` rather than carry the
/// credential there; a redirect that `FollowRedirects` followed to such an origin goes on without it. An origin
/// written as a host name, with or without a port (`"api.example.com"`, `"localhost:8443"`), means `https`; plain
/// `http` only for an `http` origin you list (`"http://127.0.0.1:8080"`).
///
/// ## Getting a credential
/// Without a usable credential — none yet, one the scheme says is due, one ``setNeedsRefresh()`` marked — the first
/// request starts a flow (``CredentialScheme/obtainCredential(_:)`` or ``CredentialScheme/refreshCredential(_:_:)``),
/// and every request arriving meanwhile waits for that one flow: released together with its credential, or failed
/// together with `HTTPError.Code.cannotAuthenticate` and the scheme's error. A waiting request whose task is cancelled
/// completes with `HTTPError.Code.cancelled` at once; the flow goes on for the others.
///
/// ## Refusals
/// A response the scheme calls a refusal (a `401` by default) for the current credential retires it (no request goes
/// out with it again; it is the input of the refresh), starts one flow to replace it, and replays the request once
/// with the new one; a refusal for a credential that has been replaced meanwhile replays the request with the current
/// one at once. A request is replayed at most once, and only when its body can be sent again. When the server refuses
/// fresh credentials more than ``refusalLimit`` allows, requests fail instead of starting flow after flow. When the
/// loader gives up after a refusal, the error carries that response.
///
/// ## Reset
/// A reset fails waiting requests with `HTTPError.Code.resetInProgress` at once and interrupts a running flow (the
/// loader stops waiting for it even if the scheme does not honour cancellation, and ignores what it returns). Once
/// every request the loader sent has completed, ``CredentialScheme/forgetCredential(_:_:)`` runs — its requests are part
/// of the reset — and the loader forgets the credential.
///
/// Subclass it to give a scheme an API of its own, as ``BasicAuth`` does; override `HTTPLoader.load(_:)` to handle
/// some requests yourself, and call `super.load(_:)` for the rest.
// Safety: configuration is immutable; the machine, the waiters and the flow tasks live in `state`, behind a lock.
open class CredentialLoader<Scheme: CredentialScheme>: HTTPLoader, @unchecked Sendable {
    package typealias Machine = CredentialStateMachine<Scheme.Credential>
    private typealias Waiter = CheckedContinuation<Void, Never>

    /// Where the loader stands, as ``situation`` reports it.
    @frozen
    public enum Situation: Sendable, Hashable {
        /// No credential, and no flow running.
        case idle
        /// A flow is running; requests wait for it.
        case authorizing
        /// A credential that can be used as it is.
        case authorized
        /// A credential that is replaced before its next use.
        case needsRefresh
    }

    private struct State {
        var machine: Machine
        /// Requests waiting for a flow; a woken one takes its answer here, under the lock.
        var waiters = Waiters<Machine.Answer>()
        /// The task running the current flow.
        var flowTask: (id: Machine.FlowID, task: Task<Void, Never>)?
        /// Flows a reset interrupted, which it waits for before the scheme forgets.
        var interruptedFlows: [Task<Void, Never>] = []
        /// The scheme forgetting the credential, which an overlapping reset waits for rather than run it again.
        var forgetting: Task<Void, Never>?
        /// Resets waiting for another reset's forgetting.
        var resetsAwaitingForget = 0
    }

    /// The scheme: what the credential is, how to get it and how to apply it.
    public let scheme: Scheme
    /// The requests the loader authenticates: those whose `HTTPRequest.authenticationMethod` is this one.
    public let method: AuthenticationMethod
    /// The origins the credential may be sent to.
    public let origins: Set<Origin>
    /// At most this many refusals of credentials the loader obtained, within its window; `nil` for no limit.
    public let refusalLimit: RefreshLimit?
    /// ``origins``, for matching requests (``BasicAuth`` checks a request's own credentials against it too).
    let scope: CredentialOrigins
    private let now: @Sendable () -> Date
    private let state: Locked<State>
    /// The flows under way, counted until they end, also those a reset interrupted.
    private let operations = InFlightLoads()

    /// - Parameters:
    ///   - scheme: How the credential is obtained, applied and forgotten.
    ///   - method: The requests to authenticate: those whose `HTTPRequest.authenticationMethod` is this one.
    ///   - origins: Where the credential may be sent: origins such as `"https://api.example.com:8443"` or
    ///     `"http://127.0.0.1:8080"`, or hosts with or without a port, which mean `https`.
    ///   - credential: A credential to start with, if one is known.
    ///   - refusalLimit: At most this many refusals of credentials the loader obtained, within the window (5 a minute
    ///     by default); `nil` for no limit (each refusal is answered by a user, as a password prompt is).
    ///   - now: The current time, for ``CredentialScheme/needsRefresh(_:at:)`` and the refusal limit; tests pass a
    ///     controllable one.
    public init(
        scheme: Scheme,
        method: AuthenticationMethod,
        origins: Set<Origin>,
        credential: Scheme.Credential? = nil,
        refusalLimit: RefreshLimit? = .standard,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.scheme = scheme
        self.method = method
        self.origins = origins
        self.refusalLimit = refusalLimit
        self.scope = CredentialOrigins(origins, holder: scheme.credentialName)
        self.now = now
        self.state = Locked(
            State(
                machine: Machine(
                    credentialName: scheme.credentialName, credential: credential, refusalLimit: refusalLimit,
                    isDue: { [scheme] credential, now in scheme.needsRefresh(credential, at: now) })))
        super.init()
    }

    /// The authentication method and the origins the credential is sent to; never the credential.
    open override var configurationDescription: String {
        "method: \(method), origins: " + origins.map(\.description).sorted().joined(separator: ", ")
    }

    /// The current credential, if any.
    public var credential: Scheme.Credential? { state.withLock { $0.machine.credential } }

    /// Which of the four situations the loader is in.
    public var situation: Situation {
        let now = now()
        return switch state.withLock({ $0.machine.situation(at: now) }) {
        case .idle: .idle
        case .authorizing: .authorizing
        case .authorized: .authorized
        case .needsRefresh: .needsRefresh
        }
    }

    /// How many requests are waiting for a flow now: a gauge for metrics, as `Throttle.waitingCount` is for its queue.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Marks the current credential as due: the next request that needs it replaces it first
    /// (``CredentialScheme/refreshCredential(_:_:)``), and waits for that. Does nothing without a credential.
    public func setNeedsRefresh() {
        state.withLock { $0.machine.setNeedsRefresh() }
    }

    /// What the loader is doing, for a test that gave up waiting; never a credential.
    package var debugState: String {
        let now = now()
        return state.withLock { state in
            "situation \(state.machine.situation(at: now)), version \(state.machine.version), "
                + "\(state.machine.flow.map { "\($0.id) running" } ?? "no flow"), waiting \(state.waiters.count), "
                + "interrupted flows \(state.interruptedFlows.count), resetting \(isResetting)"
        } + ", flows under way \(operations.runningCount)"
            + ((scheme as? any CredentialSchemeDiagnostics).map { ", scheme: \($0.debugState)" } ?? "")
    }

    /// How many resets wait for another reset's ``CredentialScheme/forgetCredential(_:_:)`` to end.
    package var resetsAwaitingForgetCount: Int { state.withLock { $0.resetsAwaitingForget } }

    /// Returns once every flow has ended, also those a reset interrupted and left running: for tests that check what
    /// such a late answer leaves behind.
    package func waitUntilFlowsEnd() async { await operations.waitUntilIdle() }

    // MARK: - Loading

    open override func load(_ request: HTTPRequest) async -> HTTPResult {
        await loadWithCredential(request)
    }

    /// What ``load(_:)`` does. `final`, so that a subclass whose scheme is a concrete type (``OAuth``, ``BasicAuth``)
    /// calls a copy compiled for that scheme: the generic one looks the types it uses up at run time, on every request.
    nonisolated(nonsending) final func loadWithCredential(_ request: HTTPRequest) async -> HTTPResult {
        guard request.isForAuthenticatingLoader(self) else { return await loadNext(request) }
        guard scope.contains(request) else {
            // A redirect elsewhere goes on without the credential; a request of the app's own fails.
            if request.isRedirectedToAnotherOrigin { return await loadNext(request) }
            return .failure(scope.refusal(of: request))
        }
        // Counted, so that a reset waits for the request, its refusal and its replay before the scheme forgets the
        // credential, also when this loader heads the chain.
        return await withLoadCounted {
            let grant: Machine.Grant
            if let usable = usableGrant() {
                grant = usable
            } else {
                switch await self.grant(refusing: nil, response: nil, for: request) {
                case .send(let granted): grant = granted
                case .refuse(let refusal): return failure(of: request, refusal, after: nil)
                }
            }
            let result = await send(request, with: grant.credential)
            guard case .success(let response) = result, scheme.isRefusal(response, of: request) else { return result }
            guard request.body.isReplayable else {
                return .failure(
                    HTTPError(
                        .bodyNotReplayable, request: request,
                        message: "the server refused \(scheme.credentialName) (\(response.status)), and the request's "
                            + "body (\(type(of: request.body))) can be sent only once, so it cannot be replayed with "
                            + "another credential",
                        response: response))
            }
            switch await self.grant(refusing: grant.version, response: response, for: request) {
            case .send(let replacement):
                response.discardBody()
                return await send(request, with: replacement.credential)
            case .refuse(let refusal):
                return failure(of: request, refusal, after: response)
            }
        }
    }

    /// Sends `request` authenticated with `credential`.
    nonisolated(nonsending) private func send(
        _ request: HTTPRequest, with credential: Scheme.Credential
    ) async -> HTTPResult {
        var authenticated = request
        do {
            try scheme.authenticate(&authenticated, with: credential)
        } catch {
            return .failure(
                HTTPError(
                    .cannotAuthenticate, request: request,
                    message: (error as? CredentialFailure)?.message
                        ?? "authenticating the request with \(scheme.credentialName) failed",
                    underlyingError: error is CredentialFailure ? nil : error))
        }
        return await loadNext(authenticated)
    }

    private func failure(
        of request: HTTPRequest, _ refusal: Machine.Refusal, after response: HTTPResponse?
    )
        -> HTTPResult
    {
        .failure(
            HTTPError(
                refusal.code, request: request, message: refusal.message, response: response,
                underlyingError: refusal.underlyingError))
    }

    /// The credential when it can be used at once: the fast path.
    private func usableGrant() -> Machine.Grant? {
        let now = now()
        return state.withLock { $0.machine.grant(usableAt: now) }
    }

    /// A credential to send for `request`, waiting for a flow when there is none usable. `refused` is the version a
    /// server just refused with `response`.
    private func grant(
        refusing refused: UInt64?, response: HTTPResponse?, for request: HTTPRequest
    ) async -> Machine.Answer {
        let id = state.withLock { $0.waiters.nextID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                enqueue(continuation, id: id, refusing: refused, response: response, for: request)
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.answer(id, with: Self.cancelled) }
            waiter?.resume()
        }
        guard let answer = state.withLock({ $0.waiters.takeAnswer(id) }) else {
            preconditionFailure("CredentialLoader: waiter \(id) was resumed without an answer")
        }
        return answer
    }

    private static var cancelled: Machine.Answer {
        .refuse(.init(code: .cancelled, message: "cancelled while waiting for a credential", underlyingError: nil))
    }

    /// Asks the machine what the request does — go out, wait, start a flow and wait, or fail — and parks it when it
    /// waits.
    private func enqueue(
        _ continuation: Waiter, id: UInt64, refusing refused: UInt64?, response: HTTPResponse?,
        for request: HTTPRequest
    ) {
        let now = now()
        let (isAnswered, flow) = state.withLock { state -> (Bool, (Machine.FlowID, Machine.Purpose)?) in
            if isResetting {
                let refusal = Machine.Refusal(
                    code: .resetInProgress,
                    message: "\(type(of: self)) is resetting; the request was not sent with \(scheme.credentialName)",
                    underlyingError: nil)
                state.waiters.answerUnparked(id, with: .refuse(refusal))
                return (true, nil)
            }
            if Task.isCancelled {
                state.waiters.answerUnparked(id, with: Self.cancelled)
                return (true, nil)
            }
            switch state.machine.requestArrived(refusing: refused, response: response, at: now) {
            case .send(let grant):
                state.waiters.answerUnparked(id, with: .send(grant))
                return (true, nil)
            case .refuse(let refusal):
                state.waiters.answerUnparked(id, with: .refuse(refusal))
                return (true, nil)
            case .wait:
                state.waiters.park(id, continuation)
                return (false, nil)
            case .start(let flow, let purpose):
                state.waiters.park(id, continuation)
                return (false, (flow, purpose))
            }
        }
        if isAnswered { continuation.resume() }
        if let (flow, purpose) = flow { start(flow, purpose, at: now, startedBy: request) }
    }

    // MARK: - Flows

    /// Runs the scheme's flow in a task of its own, which a reset can interrupt, and answers the waiting requests
    /// with its outcome; `starter`, the request whose arrival started it, reports the outcome to its observers.
    private func start(
        _ flow: Machine.FlowID, _ purpose: Machine.Purpose, at now: Date, startedBy starter: HTTPRequest
    ) {
        let context = CredentialContext(trigger: purpose.trigger, now: now, loader: self) { [weak self] request in
            guard let self else {
                return .failure(HTTPError(.cancelled, request: request, message: "the loader is gone"))
            }
            var own = request
            own.markAsAuthorizationServerTraffic()
            // Not counted as in flight: a reset abandons an interrupted flow's request rather than wait for it.
            return await self.loadNextUncounted(own)
        }
        let scheme = scheme
        let began = ContinuousClock.now
        let task = Task {
            let outcome = await interruptible(counting: operations) { () -> Result<Scheme.Credential, any Error> in
                do {
                    switch purpose {
                    case .obtain: return .success(try await scheme.obtainCredential(context))
                    case .refresh(let old, _): return .success(try await scheme.refreshCredential(old, context))
                    }
                } catch {
                    return .failure(error)
                }
            }
            self.flowEnded(
                flow, with: outcome ?? .failure(CancellationError()), purpose: purpose, startedBy: starter,
                lasting: ContinuousClock.now - began)
        }
        let isCurrent = state.withLock { state -> Bool in
            guard state.machine.flow?.id == flow else { return false }
            state.flowTask = (flow, task)
            return true
        }
        if !isCurrent { task.cancel() }  // a reset came first (or the flow is over already)
    }

    /// Answers the waiters of `flow`, unless a reset dropped it, and reports how it ended on `starter` (before the
    /// waiters go on, so the report comes before the starter's attempt).
    private func flowEnded(
        _ flow: Machine.FlowID, with outcome: Result<Scheme.Credential, any Error>, purpose: Machine.Purpose,
        startedBy starter: HTTPRequest, lasting duration: Duration
    ) {
        let now = now()
        let (answer, waiters) = state.withLock { state -> (Machine.Answer?, [Waiter]) in
            guard let answer = state.machine.flowEnded(flow, with: outcome, at: now) else { return (nil, []) }
            if state.flowTask?.id == flow { state.flowTask = nil }
            return (answer, state.waiters.answerAll(with: answer))
        }
        switch answer {
        case .send?:
            let kind: HTTPEvent.Kind = if case .obtain = purpose { .credentialObtained } else { .credentialRefreshed }
            starter.emit(kind, duration: duration)
        case .refuse(let refusal)?:
            starter.emit(
                .credentialFailed,
                result: .failure(
                    HTTPError(
                        refusal.code, request: starter, message: refusal.message,
                        underlyingError: refusal.underlyingError)),
                duration: duration)
        case nil:
            break  // a reset dropped the flow: it did not end, it was abandoned
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Reset

    /// Fails the requests waiting for a flow with `HTTPError.Code.resetInProgress`, and interrupts the flow.
    open override func failHeldLoads(_ mode: ResetMode) {
        let (waiters, interrupted) = state.withLock { state -> ([Waiter], Task<Void, Never>?) in
            var interrupted: Task<Void, Never>?
            if let dropped = state.machine.dropFlow(), let flow = state.flowTask, flow.id == dropped {
                interrupted = flow.task
                state.interruptedFlows.append(flow.task)
                state.flowTask = nil
            }
            let refusal = Machine.Refusal(
                code: .resetInProgress,
                message: "\(type(of: self)) was reset while this request waited for \(scheme.credentialName)",
                underlyingError: nil)
            return (state.waiters.answerAll(with: .refuse(refusal)), interrupted)
        }
        for waiter in waiters { waiter.resume() }
        interrupted?.cancel()
    }

    /// Returns once an interrupted flow has stopped: at once, since the loader stopped waiting for the scheme.
    open override func waitUntilIdle() async {
        let flows = state.withLock { state in
            defer { state.interruptedFlows = [] }
            return state.interruptedFlows
        }
        for flow in flows { await flow.value }
    }

    /// Forgets the credential, after the scheme has (``CredentialScheme/forgetCredential(_:_:)``). A reset that gets
    /// here while another one's forgetting runs waits for it.
    open override func forgetState() async {
        let now = now()
        let (forgetting, joins) = state.withLock { state -> (Task<Void, Never>, Bool) in
            if let running = state.forgetting {
                state.resetsAwaitingForget += 1
                return (running, true)
            }
            let credential = state.machine.forget()
            let context = CredentialContext(trigger: .reset, now: now, loader: self) { [weak self] request in
                guard let self else {
                    return .failure(HTTPError(.cancelled, request: request, message: "the loader is gone"))
                }
                var partOfReset = request
                partOfReset.markAsAuthorizationServerTraffic()
                partOfReset.isPartOfReset = true
                return await self.loadNext(partOfReset)
            }
            let task = Task { [scheme] in await scheme.forgetCredential(credential, context) }
            state.forgetting = task
            return (task, false)
        }
        await forgetting.value
        state.withLock { state in
            if joins { state.resetsAwaitingForget -= 1 }
            if state.forgetting == forgetting { state.forgetting = nil }
        }
    }
}

/// What a scheme adds to its loader's `debugState`, for a test that gave up waiting; never a credential.
package protocol CredentialSchemeDiagnostics {
    var debugState: String { get }
}

extension CredentialLoader: NativelyAuthenticating {
    var nativeAuthenticationMethod: AuthenticationMethod { method }
}

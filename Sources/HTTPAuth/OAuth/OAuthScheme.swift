public import Foundation
public import HTTP

/// OAuth 2 bearer tokens as a ``CredentialScheme``: the scheme the ``OAuth`` loader runs.
///
/// Obtaining tokens reads the delegate's saved credentials, else logs in (discovery, the login page, the code
/// exchange with PKCE, the ID token checked); refreshing exchanges the refresh token, and logs in again where there
/// is none or the server answers `invalid_grant` (``OAuthConfiguration/onInvalidGrant``); forgetting is the logout —
/// revocation, the saved credentials deleted, the provider's end-session page. Each flow is a run of a
/// value-type state machine, whose actions this scheme performs. The ``OAuth`` loader gives it waiting requests, single
/// flight, the stale-`401` replay, origin binding and the reset protocol, as ``CredentialLoader`` does for every
/// scheme.
///
/// Made by ``OAuth``; you use the loader, not the scheme.
// Safety: the configuration and the clock are immutable; the machine, the delegate and the observers live in
// `state`, behind a lock.
public final class OAuthScheme: CredentialScheme, @unchecked Sendable {
    package typealias Machine = OAuthStateMachine

    private struct WeakDelegate {
        weak var value: (any OAuthDelegate)?
    }

    private struct State {
        var machine: Machine
        var delegate = WeakDelegate()
        var observers: [UInt64: AsyncStream<OAuthSessionState>.Continuation] = [:]
        var nextObserverID: UInt64 = 0
        /// Whether the last session change left the user logged in: what a new observer hears first.
        var isLoggedIn: Bool
        /// What the last logout did.
        var lastLogout: OAuthLogout?
    }

    /// How the scheme talks to its authorization server.
    public let configuration: OAuthConfiguration
    private let now: @Sendable () -> Date
    private let state: Locked<State>

    init(
        configuration: OAuthConfiguration,
        hasCredentials: Bool,
        delegate: (any OAuthDelegate)?,
        now: @escaping @Sendable () -> Date
    ) {
        self.configuration = configuration
        self.now = now
        var initial = State(
            machine: Machine(configuration: configuration, knowsSavedCredentials: hasCredentials),
            isLoggedIn: hasCredentials)
        initial.delegate.value = delegate
        state = Locked(initial)
    }

    deinit {
        for observer in state.withLock({ $0.observers.values }) { observer.finish() }
    }

    var delegate: (any OAuthDelegate)? {
        get { state.withLock { $0.delegate.value } }
        set { state.withLock { $0.delegate.value = newValue } }
    }

    /// What the last logout did, if there was one.
    var lastLogout: OAuthLogout? { state.withLock { $0.lastLogout } }

    /// The states the last finished run went through (a logout included).
    var lastPath: [Machine.State] { state.withLock { $0.machine.lastPath } }

    // MARK: - CredentialScheme

    public var credentialName: String { "OAuth's tokens" }

    /// Saved credentials, else a login.
    public func obtainCredential(_ context: CredentialContext) async throws -> OAuthCredentials {
        try await run(.obtain, context)
    }

    /// A refresh with the refresh token, else a login.
    public func refreshCredential(
        _ credentials: OAuthCredentials, _ context: CredentialContext
    ) async throws
        -> OAuthCredentials
    {
        let isRefused = if case .refused = context.trigger { true } else { false }
        return try await run(.refresh(credentials, refused: isRefused), context)
    }

    /// Whether the token expires within ``OAuthConfiguration/refreshWindow`` (or half its lifetime, if sooner).
    public func needsRefresh(_ credentials: OAuthCredentials, at now: Date) -> Bool {
        OAuthStateMachine.refreshDeadline(of: credentials, window: configuration.refreshWindow).map { now >= $0 }
            ?? false
    }

    /// Sets `Authorization: Bearer <access token>`.
    public func authenticate(_ request: inout HTTPRequest, with credentials: OAuthCredentials) {
        request.headers["Authorization"] = credentials.authorizationHeaderValue
    }

    /// The logout: revokes the tokens when the server has a revocation endpoint, deletes the saved credentials and
    /// ends the provider's session through the delegate; every step is attempted, and the first problem is reported
    /// to the session's observers.
    public func forgetCredential(_ credentials: OAuthCredentials?, _ context: CredentialContext) async {
        let (run, first) = state.withLock { $0.machine.logOut(credentials) }
        var action = first
        while true {
            switch action {
            case .finishLogout(let outcome):
                state.withLock { $0.lastLogout = outcome }
                if let oauth = context.loader as? OAuth { await delegate?.didLogOut(outcome, for: oauth) }
                publish(.loggedOut(outcome.problem))
                return
            case .finish, .none:
                return  // not a logout's end; nothing replaces a logout while it runs
            default:
                let event = await outcome(of: action, context)
                let now = now()
                action = event.map { event in state.withLock { $0.machine.handle(event, of: run, at: now) } } ?? .none
            }
        }
    }

    // MARK: - Runs

    /// Performs a run of the machine for `purpose` until it ends. A reset interrupts it by cancelling the task: the
    /// run stops before its next action, and the machine ignores what an interrupted action reports.
    private func run(_ purpose: Machine.Purpose, _ context: CredentialContext) async throws -> OAuthCredentials {
        let started = state.withLock { state -> (Machine.RunID, Machine.Action)? in
            Task.isCancelled ? nil : state.machine.start(purpose, at: now())
        }
        guard let (run, first) = started else { throw CancellationError() }
        var action = first
        while true {
            switch action {
            case .finish(let outcome, let session):
                if let session { publish(session) }
                switch outcome {
                case .authorized(let credentials):
                    return credentials
                case .failed(let error, let forgets):
                    throw CredentialFailure(error.description, underlyingError: error, forgetsCredential: forgets)
                }
            case .finishLogout, .none:
                throw CancellationError()  // interrupted by a reset
            default:
                let event = await outcome(of: action, context)
                let now = now()
                action = state.withLock { state in
                    guard !Task.isCancelled, let event else { return .none }
                    return state.machine.handle(event, of: run, at: now)
                }
            }
        }
    }

    /// Drops the run in progress, at a reset's first phase: what it reports from now on changes nothing.
    func interrupt() {
        state.withLock { _ = $0.machine.interrupt() }
    }

    /// Performs an action and returns its outcome; `nil` for the actions that end a run.
    private func outcome(of action: Machine.Action, _ context: CredentialContext) async -> Machine.Event? {
        let oauth = context.loader as? OAuth
        let delegate = oauth == nil ? nil : self.delegate
        switch action {
        case .readSavedCredentials:
            guard let oauth, let delegate else { return .savedCredentialsRead(nil) }
            return .savedCredentialsRead(try? await delegate.savedCredentials(for: oauth))
        case .send(let request):
            return .responseReceived(await context.send(request))
        case .showLogin(let url):
            guard let oauth, let delegate else { return .loginAnswered(.noDelegate) }
            do {
                guard let callback = try await delegate.logIn(at: url, for: oauth) else {
                    return .loginAnswered(.cancelled)
                }
                return .loginAnswered(.redirected(callback))
            } catch is CancellationError {
                return .loginAnswered(.cancelled)
            } catch {
                return .loginAnswered(.failed(.loginFailed(error)))
            }
        case .save(let credentials):
            if let oauth { try? await delegate?.save(credentials, for: oauth) }
            return .credentialsSaved
        case .deleteSavedCredentials:
            guard let oauth, let delegate else { return .savedCredentialsDeleted(nil) }
            do {
                try await delegate.deleteCredentials(for: oauth)
                return .savedCredentialsDeleted(nil)
            } catch {
                return .savedCredentialsDeleted(.credentialStore("deleting the saved credentials failed: \(error)"))
            }
        case .showLogout(let url):
            if let oauth { await delegate?.logOut(at: url, for: oauth) }
            return .logoutPageClosed
        case .finish, .finishLogout, .none:
            return nil
        }
    }

    // MARK: - Session states

    /// The session's state now, then every change; see ``OAuth/sessionStates()``.
    func sessionStates() -> AsyncStream<OAuthSessionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: OAuthSessionState.self)
        let id = state.withLock { state -> UInt64 in
            state.nextObserverID += 1
            state.observers[state.nextObserverID] = continuation
            continuation.yield(state.isLoggedIn ? .loggedIn : .loggedOut(nil))
            return state.nextObserverID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    private func publish(_ session: OAuthSessionState) {
        let observers = state.withLock { state in
            state.isLoggedIn = if case .loggedOut = session { false } else { true }
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(session) }
    }
}

extension OAuthScheme: CredentialSchemeDiagnostics {
    /// Where the machine is, the run, whether a delegate is set, and the last run's path; never a token.
    package var debugState: String {
        state.withLock { state in
            "at \(state.machine.position), \(state.machine.currentRun.map { "\($0)" } ?? "no run"), "
                + "delegate \(state.delegate.value == nil ? "none" : "set"), last path \(state.machine.lastPath)"
        }
    }
}

package import Foundation
package import HTTP

/// OAuth's flows as a value: events in, a new state and an action out. No `await`, no I/O, no lock, no clock and no
/// randomness of its own — time comes with each event, login secrets from the generator it was made with.
/// ``OAuthScheme`` holds one in its lock, performs the actions (requests down the chain, the delegate's login page
/// and credential store) and feeds their outcomes back with ``handle(_:of:at:)``.
///
/// Which requests wait, which go out and when a flow starts is the ``CredentialLoader``'s machine's business
/// (``CredentialStateMachine``): it asks for a run when a request finds no usable token — none (``start(_:at:)`` to
/// obtain one), one due for refresh or one the server just answered `401` (to refresh it). A run goes through these
/// states:
///
/// ```
/// state                waits for                 then
/// ───────────────────  ────────────────────────  ──────────────────────────────────────────────────────────────
/// GetSavedCredentials  the saved credentials     the rule
/// Discovery            the discovery document    the state that needed the endpoints (LogIn, RefreshTokens)
/// LogIn                the login page's answer   GetTokens, if the callback carries this login's state
/// GetTokens            the token response        save, then the rule (dead on arrival, no refresh token: fail)
/// RefreshTokens        the token response        save, then the rule; invalid_grant: delete, LogIn (or fail)
/// Done                 —                         the waiting requests go out with the new credentials
///
/// the rule: usable credentials → Done; a refresh token → RefreshTokens, within the refresh limit; else → LogIn
/// ```
///
/// A run starts at GetSavedCredentials while nothing is known of them, otherwise with the rule applied to the
/// credentials it is given; Discovery comes first when a state needs endpoints none are known yet. Any failure ends
/// the run, and its waiting requests fail with it. A reset interrupts the run (``interrupt()``) and logs out
/// (``logOut(_:)``): LogOut reads the saved credentials when it has none, discovers the endpoints if needed, revokes
/// the refresh and the access token, deletes the saved credentials, shows the end-session page, and is Done.
///
/// Each run has a ``RunID``: an outcome of an earlier run (one a reset interrupted) changes nothing. An event that
/// is not one the current state waits for changes nothing either: ``handle(_:of:at:)`` answers ``Action/none``.
package struct OAuthStateMachine: Sendable {
    /// The flow's states, with the names the *HTTP in Swift* series gives them; a run's ``lastPath`` lists the
    /// ones it entered.
    package enum State: String, Sendable, Hashable, CustomStringConvertible {
        /// Fetching the provider's discovery document.
        case discovery
        /// Reading credentials saved by an earlier session.
        case getSavedCredentials
        /// Showing the login page and waiting for its callback.
        case logIn
        /// Exchanging the authorization code for tokens.
        case getTokens
        /// Exchanging the refresh token for new tokens.
        case refreshTokens
        /// Revoking tokens, deleting saved credentials, ending the provider's session.
        case logOut
        /// Finished with usable credentials (or, for a logout, with none).
        case done

        package var description: String { rawValue }
    }

    /// One run of the flow or of a logout.
    package struct RunID: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: UInt64
        package var description: String { "run \(rawValue)" }
    }

    /// The random values a login sends: PKCE's verifier, `state`, and `nonce` (dropped when the scopes do not ask
    /// for an ID token).
    package struct LoginSecrets: Sendable, Hashable {
        package var pkce: PKCE
        package var state: String
        package var nonce: String?

        package init(pkce: PKCE, state: String, nonce: String?) {
            self.pkce = pkce
            self.state = state
            self.nonce = nonce
        }

        /// Fresh secrets: a PKCE verifier, and 32 random bytes, base64url, for `state` and for `nonce`.
        package static func random() -> LoginSecrets {
            func token() -> String {
                var generator = SystemRandomNumberGenerator()
                return Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
                    .base64URLEncodedString()
            }
            return LoginSecrets(pkce: PKCE(), state: token(), nonce: token())
        }
    }

    /// What the login page came back with.
    package enum LoginAnswer: Sendable, Hashable {
        /// The URL the server redirected to.
        case redirected(URL)
        /// The user closed the page (or the wait was interrupted).
        case cancelled
        /// There was no delegate to show it.
        case noDelegate
        /// The delegate's login failed with an error of its own (``OAuthError/Code/loginFailed``).
        case failed(OAuthError)
    }

    /// The outcome of the last ``Action`` the driver performed for a run.
    package indirect enum Event: Sendable {
        case savedCredentialsRead(OAuthCredentials?)
        /// The answer to the request of ``Action/send(_:)``.
        case responseReceived(HTTPResult)
        case loginAnswered(LoginAnswer)
        case credentialsSaved
        /// The saved credentials were deleted, or the store failed to.
        case savedCredentialsDeleted(OAuthError?)
        case logoutPageClosed
    }

    /// What the driver does next for a run.
    package indirect enum Action: Sendable {
        case readSavedCredentials
        /// Send this request down the chain.
        case send(HTTPRequest)
        /// Show the login page at this URL.
        case showLogin(URL)
        case save(OAuthCredentials)
        case deleteSavedCredentials
        /// Show the provider's end-session page at this URL.
        case showLogout(URL)
        /// The run ended with this outcome; report the session's change, if any.
        case finish(Outcome, session: OAuthSessionState?)
        /// The logout ended, having done this.
        case finishLogout(OAuthLogout)
        /// Nothing: the event came from an interrupted run, or is not one the current state waits for.
        case none
    }

    /// How a run ended.
    package indirect enum Outcome: Sendable {
        /// With credentials that can be used as they are.
        case authorized(OAuthCredentials)
        /// With this error; `forgetsCredentials` when the server rejected the credentials for good (`invalid_grant`).
        case failed(OAuthError, forgetsCredentials: Bool)
    }

    /// Why a run starts.
    package indirect enum Purpose: Sendable {
        /// There are no credentials.
        case obtain
        /// These credentials are due for refresh; `refused` when the server just answered `401` for their token.
        case refresh(OAuthCredentials, refused: Bool)
    }

    /// Where the machine is, without the data it holds: for tests and descriptions.
    package enum Position: String, Sendable, Hashable, CustomStringConvertible {
        case idle
        case discovery, getSavedCredentials, logIn, getTokens, refreshTokens
        /// Saving new credentials (after GetTokens or RefreshTokens).
        case savingCredentials
        /// Deleting credentials the server rejected (`invalid_grant`).
        case deletingRejectedCredentials
        case logOutReadingSavedCredentials, logOutDiscovery, logOutRevoking, logOutDeletingCredentials
        case logOutEndingSession

        package var description: String { rawValue }
    }

    // MARK: - State

    private final class ConfigurationBox: Sendable {
        let value: OAuthConfiguration
        init(value: OAuthConfiguration) { self.value = value }
    }

    /// Indirect, so that it is one word. So are the other enums here that carry credentials, requests, secrets or
    /// endpoints: a copy of one is a reference, and the machine's value witnesses stay small, for a box per event on
    /// a path that sends a request for each.
    private indirect enum Phase: Sendable {
        /// No run.
        case idle
        /// A run for the requests waiting on it.
        case authorizing(Run)
        /// A reset's logout.
        case loggingOut(Logout)
    }

    /// What a run needs before it can go on.
    private indirect enum Entry: Sendable {
        case getSavedCredentials
        case logIn
        case refreshTokens(OAuthCredentials)
    }

    /// Where a discovery is: the document it fetches (an index into ``discoveryURLs``), the endpoints an earlier
    /// document gave, and the first problem.
    private struct Discovery: Sendable {
        var candidate = 0
        var found: OAuthEndpoints?
        var problem: OAuthError?
    }

    /// What a discovery does after a document's answer.
    private indirect enum DiscoveryStep {
        /// Fetch the next document.
        case fetch(HTTPRequest)
        /// Done, with these endpoints (the overrides applied).
        case found(OAuthEndpoints)
        case failed(OAuthError)
    }

    private indirect enum Step: Sendable {
        case discovery(then: Entry, Discovery)
        case getSavedCredentials
        case logIn(LoginSecrets)
        case getTokens(LoginSecrets)
        case refreshTokens(OAuthCredentials)
        /// Saving credentials from `origin` (GetTokens or RefreshTokens).
        case saving(OAuthCredentials, origin: State)
        /// Deleting credentials after `invalid_grant`; the server's `error_description`.
        case deletingRejectedCredentials(String?)
    }

    private struct Run: Sendable {
        let id: RunID
        var step: Step
        var path: [State] = []
        /// The credentials this run has: the current ones at first, then saved, new, or none.
        var credentials: OAuthCredentials?
        var session: OAuthSessionState = .loggedIn
        /// Whether the run threw the credentials away (the server rejected them).
        var deletedCredentials = false
    }

    private indirect enum LogoutStep: Sendable {
        case getSavedCredentials
        case discovery(Discovery)
        /// Revoking the first of these tokens (with their `token_type_hint`); then the rest.
        case revoking([Revocation])
        case deletingCredentials
        case endingSession
    }

    private struct Revocation: Sendable {
        var token: String
        var hint: String
    }

    private struct Logout: Sendable {
        let id: RunID
        var step: LogoutStep = .getSavedCredentials
        var credentials: OAuthCredentials?
        /// What the logout has done so far; every step is attempted whatever went wrong before.
        var outcome = OAuthLogout(
            revocation: .nothingToRevoke, deletedSavedCredentials: false, endedProviderSession: false, problem: nil)
        var path: [State] = [.logOut]
    }

    /// How the loader talks to its authorization server.
    package var configuration: OAuthConfiguration { configurationBox.value }
    /// The configuration, which never changes, held by reference: a copy of the machine (or of a loader's state that
    /// holds one) copies one reference instead of the configuration's fields.
    private let configurationBox: ConfigurationBox
    private let makeLoginSecrets: @Sendable () -> LoginSecrets
    private var phase = Phase.idle
    /// Whether the delegate's saved credentials were read (or replaced) already.
    private var knowsSavedCredentials: Bool
    private(set) var endpoints: OAuthEndpoints?
    /// When refreshed tokens turned out unusable — the server rejected one (a `401` for the token a refresh just
    /// issued), or one expired as it was issued — within the refresh limit's window. Healthy refreshes, however
    /// frequent, never count: a loop is a refresh whose token does not work.
    private var failedRefreshTimes: [Date] = []
    /// The access token the last refresh issued, until a login replaces it: a `401` for it counts as a failed refresh.
    private var refreshedToken: String?
    private var lastRunID: UInt64 = 0
    /// The states the last finished run went through (a reset's logout included).
    package private(set) var lastPath: [State] = []

    /// - Parameters:
    ///   - configuration: The server, the client, and the refresh rules.
    ///   - knowsSavedCredentials: Whether the loader started with credentials; without them, the first run reads the
    ///     saved ones first.
    ///   - makeLoginSecrets: Makes the secrets of each login; tests pass fixed ones.
    package init(
        configuration: OAuthConfiguration,
        knowsSavedCredentials: Bool = false,
        makeLoginSecrets: @escaping @Sendable () -> LoginSecrets = LoginSecrets.random
    ) {
        self.configurationBox = ConfigurationBox(value: configuration)
        self.makeLoginSecrets = makeLoginSecrets
        self.knowsSavedCredentials = knowsSavedCredentials
        if case .known(let known) = configuration.endpoints {
            endpoints = configuration.endpointOverrides.applied(to: known)
        }
    }

    // MARK: - Runs

    /// Starts a run for `purpose` at `now`, replacing any run in progress (the loader runs one at a time): its ID, and
    /// the first action.
    package mutating func start(_ purpose: Purpose, at now: Date) -> (RunID, Action) {
        lastRunID += 1
        var run = Run(id: RunID(rawValue: lastRunID), step: .getSavedCredentials)
        switch purpose {
        case .obtain:
            run.credentials = nil
        case .refresh(let current, let refused):
            run.credentials = current
            // The server rejected the token a refresh just issued: a refresh that did not work.
            if refused, current.accessToken == refreshedToken { failedRefreshTimes.append(now) }
        }
        phase = .authorizing(run)
        let action =
            run.credentials == nil && !knowsSavedCredentials
            ? enter(.getSavedCredentials, &run, at: now) : proceed(&run, usable: false, at: now)
        if case .authorizing = phase { phase = .authorizing(run) }
        return (run.id, action)
    }

    // MARK: - The flow, on one page

    /// The outcome of run `id`'s last action, at `now`: what to do next.
    package mutating func handle(_ event: Event, of id: RunID, at now: Date) -> Action {
        switch phase {
        case .authorizing(var run) where run.id == id:
            let action = advance(&run, with: event, at: now)
            if case .authorizing = phase { phase = .authorizing(run) }
            return action
        case .loggingOut(var logout) where logout.id == id:
            let action = advance(&logout, with: event)
            if case .loggingOut = phase { phase = .loggingOut(logout) }
            return action
        case .idle, .authorizing, .loggingOut:
            return .none  // an outcome of a run a reset interrupted, or of a finished one
        }
    }

    private mutating func advance(_ run: inout Run, with event: Event, at now: Date) -> Action {
        switch (run.step, event) {
        case (.discovery(let entry, var discovery), .responseReceived(let result)):
            switch discover(&discovery, after: result) {
            case .fetch(let request):
                run.step = .discovery(then: entry, discovery)
                return .send(request)
            case .found(let found):
                endpoints = found
                return enter(entry, &run, at: now)
            case .failed(let error):
                return fail(&run, error)
            }

        case (.getSavedCredentials, .savedCredentialsRead(let saved)):
            run.credentials = saved
            return proceed(&run, usable: saved.map { !needsRefresh($0, at: now) } ?? false, at: now)

        case (.logIn(let secrets), .loginAnswered(let answer)):
            switch answer {
            case .noDelegate: return fail(&run, .noDelegate)
            case .cancelled: return fail(&run, .loginCancelled)
            case .failed(let error): return fail(&run, error)
            case .redirected(let callback):
                do throws(OAuthError) {
                    let code = try code(from: callback, expectedState: secrets.state)
                    run.path.append(.getTokens)
                    run.step = .getTokens(secrets)
                    return .send(try codeRedemption(code, secrets: secrets))
                } catch {
                    return fail(&run, error)
                }
            }

        case (.getTokens(let secrets), .responseReceived(let result)):
            do throws(OAuthError) {
                let new = try credentials(fromTokenResponse: result, replacing: nil, nonce: secrets.nonce, at: now)
                (run.credentials, run.session, run.step) = (new, .loggedIn, .saving(new, origin: .getTokens))
                return .save(new)
            } catch {
                return fail(&run, error)
            }

        case (.refreshTokens(let current), .responseReceived(let result)):
            do throws(OAuthError) {
                let new = try credentials(fromTokenResponse: result, replacing: current, nonce: nil, at: now)
                (run.credentials, run.session, run.step) = (new, .refreshed, .saving(new, origin: .refreshTokens))
                return .save(new)
            } catch  where error.code == .tokenRequestFailed && error.serverErrorCode == "invalid_grant" {
                (run.credentials, run.deletedCredentials) = (nil, true)
                run.step = .deletingRejectedCredentials(error.serverErrorDescription)
                return .deleteSavedCredentials
            } catch {
                return fail(&run, error)
            }

        case (.saving(let new, let origin), .credentialsSaved):
            // A token dead on arrival is never handed out: it is refreshed again (the refresh limit ends a server
            // that keeps issuing them, counting each such refresh), or, from a login without a refresh token, the run
            // fails.
            let usable = !needsRefresh(new, at: now)
            if !usable, origin == .getTokens, new.refreshToken == nil { return fail(&run, Self.deadOnArrival(new)) }
            if !usable, origin == .refreshTokens { failedRefreshTimes.append(now) }
            return proceed(&run, usable: usable, at: now)

        case (.deletingRejectedCredentials(let description), .savedCredentialsDeleted):
            switch configuration.onInvalidGrant {
            case .logIn: return enter(.logIn, &run, at: now)
            case .fail: return fail(&run, .refreshRejected(description: description))
            }

        case (.discovery, _), (.getSavedCredentials, _), (.logIn, _), (.getTokens, _), (.refreshTokens, _),
            (.saving, _), (.deletingRejectedCredentials, _):
            return .none  // not an outcome this state waits for
        }
    }

    /// The one rule for what the run's credentials need before requests can use them: nothing (Done), a refresh
    /// (with a refresh token), or a login.
    private mutating func proceed(_ run: inout Run, usable: Bool, at now: Date) -> Action {
        guard let credentials = run.credentials else { return enter(.logIn, &run, at: now) }
        if usable { return finish(&run, with: credentials) }
        return credentials.refreshToken == nil
            ? enter(.logIn, &run, at: now) : enter(.refreshTokens(credentials), &run, at: now)
    }

    /// Enters a state, after Discovery when it needs endpoints that are not known yet.
    private mutating func enter(_ entry: Entry, _ run: inout Run, at now: Date) -> Action {
        switch (entry, endpoints) {
        case (.getSavedCredentials, _):
            run.path.append(.getSavedCredentials)
            run.step = .getSavedCredentials
            return .readSavedCredentials

        case (.logIn, nil), (.refreshTokens, nil):
            run.path.append(.discovery)
            guard let first = discoveryURLs.first else {
                return fail(&run, .discoveryFailed("the authorization server's endpoints are not known"))
            }
            run.step = .discovery(then: entry, Discovery())
            return .send(discoveryRequest(first))

        case (.logIn, let endpoints?):
            run.path.append(.logIn)
            var secrets = makeLoginSecrets()
            if !configuration.scopes.contains("openid") { secrets.nonce = nil }
            run.step = .logIn(secrets)
            return .showLogin(authorizationURL(endpoints.authorization, secrets: secrets))

        case (.refreshTokens(let current), let endpoints?):
            run.path.append(.refreshTokens)
            let limit = configuration.refreshLimit
            failedRefreshTimes.removeAll { now.timeIntervalSince($0) >= limit.window.seconds }
            guard failedRefreshTimes.count < limit.maximumRefreshes else {
                return fail(&run, .refreshLoop(refreshes: limit.maximumRefreshes, window: limit.window))
            }
            run.step = .refreshTokens(current)
            return .send(refreshRequest(current.refreshToken ?? "", endpoint: endpoints.token))
        }
    }

    /// Done: the run's credentials become the current ones, and the waiting requests go out with them.
    private mutating func finish(_ run: inout Run, with credentials: OAuthCredentials) -> Action {
        run.path.append(.done)
        refreshedToken = if case .refreshed = run.session { credentials.accessToken } else { nil }
        knowsSavedCredentials = true
        (lastPath, phase) = (run.path, .idle)
        return .finish(.authorized(credentials), session: run.session)
    }

    /// The run failed: the waiting requests fail with `error`; credentials the server rejected are forgotten.
    private mutating func fail(_ run: inout Run, _ error: OAuthError) -> Action {
        var session: OAuthSessionState?
        if run.deletedCredentials {
            refreshedToken = nil
            knowsSavedCredentials = true
            session = .loggedOut(error)
        }
        (lastPath, phase) = (run.path, .idle)
        return .finish(.failed(error, forgetsCredentials: run.deletedCredentials), session: session)
    }

    // MARK: - Reset

    /// Phase 1 of a reset: the run in progress, if any, is dropped (what it reports from now on changes nothing).
    /// Returns it. A logout is not interrupted.
    package mutating func interrupt() -> RunID? {
        guard case .authorizing(let run) = phase else { return nil }
        phase = .idle
        return run.id
    }

    /// Phase 3 of a reset: log out of `credentials` (the saved ones, when `nil`) — revoke the tokens, delete the
    /// saved credentials, end the provider's session. Replaces any run in progress.
    package mutating func logOut(_ credentials: OAuthCredentials?) -> (RunID, Action) {
        knowsSavedCredentials = false
        failedRefreshTimes = []
        refreshedToken = nil
        lastRunID += 1
        var logout = Logout(id: RunID(rawValue: lastRunID), credentials: credentials)
        phase = .loggingOut(logout)
        let action = credentials == nil ? Action.readSavedCredentials : revokeTokens(&logout)
        if case .loggingOut = phase { phase = .loggingOut(logout) }
        return (logout.id, action)
    }

    private mutating func advance(_ logout: inout Logout, with event: Event) -> Action {
        switch (logout.step, event) {
        case (.getSavedCredentials, .savedCredentialsRead(let saved)):
            logout.credentials = saved
            return revokeTokens(&logout)

        case (.discovery(var discovery), .responseReceived(let result)):
            switch discover(&discovery, after: result) {
            case .fetch(var request):
                logout.step = .discovery(discovery)
                request.isPartOfReset = true
                return .send(request)
            case .found(let found):
                endpoints = found
            case .failed:
                break  // without endpoints there is nothing to revoke or end; no reason to fail the logout
            }
            return revokeTokens(&logout)

        case (.revoking(let revocations), .responseReceived(let result)):
            if let problem = problem(ofRevocation: result) {
                if case .failed = logout.outcome.revocation {} else { logout.outcome.revocation = .failed(problem) }
                logout.outcome.problem = logout.outcome.problem ?? problem
            }
            return revoke(Array(revocations.dropFirst()), &logout)

        case (.deletingCredentials, .savedCredentialsDeleted(let error)):
            logout.outcome.deletedSavedCredentials = error == nil
            logout.outcome.problem = logout.outcome.problem ?? error
            guard let endSession = endpoints?.endSession else { return finish(&logout) }
            logout.step = .endingSession
            return .showLogout(endSessionURL(endSession, idToken: logout.credentials?.idToken))

        case (.endingSession, .logoutPageClosed):
            logout.outcome.endedProviderSession = true
            return finish(&logout)

        case (.getSavedCredentials, _), (.discovery, _), (.revoking, _), (.deletingCredentials, _),
            (.endingSession, _):
            return .none  // not an outcome this step waits for
        }
    }

    /// Revokes the logout's tokens, after Discovery when their endpoint is not known yet. RFC 7009 §2.1: the
    /// refresh token is the one that matters; the access token too where the server supports it.
    private mutating func revokeTokens(_ logout: inout Logout) -> Action {
        guard let credentials = logout.credentials else {
            logout.outcome.revocation = .nothingToRevoke
            return revoke([], &logout)
        }
        if endpoints == nil, !logout.path.contains(.discovery), let first = discoveryURLs.first {
            logout.path.append(.discovery)
            logout.step = .discovery(Discovery())
            // Part of the reset, like the revocation it serves: the loaders below refuse everything else now.
            var discovery = discoveryRequest(first)
            discovery.isPartOfReset = true
            return .send(discovery)
        }
        guard endpoints?.revocation != nil else {
            // The tokens stay valid at the server until they expire: the outcome says so.
            logout.outcome.revocation = .unsupported
            return revoke([], &logout)
        }
        var revocations = credentials.refreshToken.map { [Revocation(token: $0, hint: "refresh_token")] } ?? []
        revocations.append(Revocation(token: credentials.accessToken, hint: "access_token"))
        logout.outcome.revocation = .revoked  // unless a revocation fails
        return revoke(revocations, &logout)
    }

    /// Revokes the first of `revocations`; with none left, deletes the saved credentials.
    private mutating func revoke(_ revocations: [Revocation], _ logout: inout Logout) -> Action {
        guard let first = revocations.first, let endpoint = endpoints?.revocation else {
            logout.step = .deletingCredentials
            return .deleteSavedCredentials
        }
        logout.step = .revoking(revocations)
        return .send(revocationRequest(first.token, hint: first.hint, endpoint: endpoint))
    }

    private mutating func finish(_ logout: inout Logout) -> Action {
        logout.path.append(.done)
        (lastPath, phase) = (logout.path, .idle)
        return .finishLogout(logout.outcome)
    }

    /// A discovery after the answer for its current document: the endpoints once a document names them all (the
    /// next document only fills what the earlier left out: a revocation endpoint), the next document after a
    /// missing or unusable one, a failure once none is left. A server that cannot be reached is not asked again.
    /// The configuration's overrides win over every document.
    private func discover(_ discovery: inout Discovery, after result: HTTPResult) -> DiscoveryStep {
        let urls = discoveryURLs
        let overrides = configuration.endpointOverrides
        var isReachable = true
        if discovery.candidate < urls.count {
            do throws(OAuthError) {
                let document = try discoveredEndpoints(from: result, at: urls[discovery.candidate])
                discovery.found = discovery.found.map { $0.filling(from: document) } ?? document
            } catch {
                discovery.problem = discovery.problem ?? error
                if case .failure = result { isReachable = false }
            }
        }
        let next = discovery.candidate + 1
        let isComplete = discovery.found.map { $0.revocation != nil || overrides.revocation != nil } ?? false
        if isReachable, !isComplete, next < urls.count {
            discovery.candidate = next
            return .fetch(discoveryRequest(urls[next]))
        }
        if let found = discovery.found { return .found(overrides.applied(to: found)) }
        return .failed(discovery.problem ?? .discoveryFailed("no discovery document"))
    }

    // MARK: - Credentials

    /// Whether `credentials` must be refreshed before they are used at `now`.
    package func needsRefresh(_ credentials: OAuthCredentials, at now: Date) -> Bool {
        Self.refreshDeadline(of: credentials, window: configuration.refreshWindow).map { now >= $0 } ?? false
    }

    /// When `credentials` need refreshing, by this device's clock: `window` before they expire, or half their
    /// lifetime if that is shorter; `nil` when they have no expiry. The expiry is in the server's clock when the
    /// credentials know the offset between the two (``OAuthCredentials/serverClockOffset``).
    package static func refreshDeadline(of credentials: OAuthCredentials, window: Duration) -> Date? {
        guard let expirationDate = credentials.expirationDate else { return nil }
        // In seconds: asked on every request, and `Duration` arithmetic goes through 128-bit integers.
        var window = window.seconds
        if let lifetime = credentials.lifetimeInSeconds { window = min(window, lifetime / 2) }
        return expirationDate.addingTimeInterval(-window - (credentials.serverClockOffset ?? 0))
    }

    // MARK: - Observing

    /// Where the machine is.
    package var position: Position {
        switch phase {
        case .idle: .idle
        case .authorizing(let run):
            switch run.step {
            case .discovery: .discovery
            case .getSavedCredentials: .getSavedCredentials
            case .logIn: .logIn
            case .getTokens: .getTokens
            case .refreshTokens: .refreshTokens
            case .saving: .savingCredentials
            case .deletingRejectedCredentials: .deletingRejectedCredentials
            }
        case .loggingOut(let logout):
            switch logout.step {
            case .getSavedCredentials: .logOutReadingSavedCredentials
            case .discovery: .logOutDiscovery
            case .revoking: .logOutRevoking
            case .deletingCredentials: .logOutDeletingCredentials
            case .endingSession: .logOutEndingSession
            }
        }
    }

    /// The run in progress, if any (a logout's included).
    package var currentRun: RunID? {
        switch phase {
        case .idle: nil
        case .authorizing(let run): run.id
        case .loggingOut(let logout): logout.id
        }
    }
}

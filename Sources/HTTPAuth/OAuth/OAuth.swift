public import Foundation
public import HTTP

/// A loader that authorizes requests with OAuth 2 bearer tokens: it logs in, refreshes and logs out as the
/// authorization server requires, and sends each request with the current access token. It is the
/// ``CredentialLoader`` of ``OAuthScheme``: waiting, single flight, replays, origins and resets work as they do for
/// every scheme.
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
/// The loader is in one of four ``CredentialLoader/Situation``s:
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
// Safety: the configuration is immutable; the rest is the base class's and the scheme's, behind their locks.
public final class OAuth: CredentialLoader<OAuthScheme>, @unchecked Sendable {
    /// How the loader talks to its authorization server.
    public let configuration: OAuthConfiguration

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
        super.init(
            scheme: OAuthScheme(
                configuration: configuration, hasCredentials: credentials != nil, delegate: delegate, now: now),
            method: .oauth, origins: configuration.resourceOrigins, credential: credentials,
            // The scheme's own guard (OAuthConfiguration.refreshLimit) counts only refreshes whose token failed.
            refusalLimit: nil, now: now)
    }

    /// Stores credentials and shows login and logout pages. Held weakly.
    public var delegate: (any OAuthDelegate)? {
        get { scheme.delegate }
        set { scheme.delegate = newValue }
    }

    /// The current credentials, if any.
    public var credentials: OAuthCredentials? { credential }

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

    /// What the last logout (a reset) did at the server and on the device: whether the tokens were revoked, the saved
    /// credentials deleted and the provider's session ended. `nil` before the first.
    public var lastLogout: OAuthLogout? { scheme.lastLogout }

    /// The states the last finished flow went through (a reset's logout included).
    package var lastFlowPath: [OAuthStateMachine.State] { scheme.lastPath }

    /// How many resets wait for a logout another reset runs.
    package var resetsAwaitingLogoutCount: Int { resetsAwaitingForgetCount }

    /// Returns once every flow has ended, also those a reset interrupted and left running (a token request whose
    /// answer comes late, a login page still open): for tests that check what such a late answer leaves behind.
    package func waitUntilInterruptedOperationsEnd() async { await waitUntilFlowsEnd() }

    /// The session's state now, then every change: logged in, refreshed, logged out (with the error that
    /// caused it). Each call returns a new stream; it ends when the loader is deallocated or the consumer
    /// stops iterating.
    ///
    /// ```swift
    /// for await session in oauth.sessionStates() {
    ///     if case .loggedOut = session { showLogin() }
    /// }
    /// ```
    public func sessionStates() -> AsyncStream<OAuthSessionState> { scheme.sessionStates() }

    /// Marks the current credentials as needing a refresh: the next request that needs a token refreshes them
    /// first (or logs in, without a refresh token), and waits for it, as when they are about to expire. For a
    /// token you know is no longer good — the user's permissions changed, another device logged out. Does
    /// nothing without credentials.
    public func setNeedsTokenRefresh() { setNeedsRefresh() }

    /// Authenticates a request with the access token, as `CredentialLoader` does: through the copy of its code
    /// compiled for ``OAuthScheme``.
    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        await loadWithCredential(request)
    }

    /// Phase 1 of a reset: fails waiting requests with `HTTPError.Code.resetInProgress`, and interrupts a running
    /// flow (a login in progress stops waiting for the user).
    public override func failHeldLoads(_ mode: ResetMode) {
        super.failHeldLoads(mode)
        scheme.interrupt()
    }
}

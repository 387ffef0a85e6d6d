import Foundation
import HTTP
import HTTPAuth
import Testing

/// django-oauth-toolkit, started by `scripts/servers.sh` (scripts/oauth-provider/): PKCE required, refresh tokens
/// rotated, revocation, client credentials and the device grant, 2-second access tokens with
/// `OIDC_TOKEN_LIFETIME=2`, device codes polled every second. Every request it gets is the test user's, so the
/// delegates below approve logins and device codes with plain requests to its own views.
let oauthProviderURL: URL? = ProcessInfo.processInfo.environment["OAUTH_PROVIDER_URL"].flatMap(URL.init(string:))

@Test func theProductionAuthorizationServerIsPresentWhenRequired() {
    if serversAreRequired {
        #expect(oauthProviderURL != nil, "HTTP_REQUIRE_SERVERS=1 but OAUTH_PROVIDER_URL is not set")
    }
}

/// The server's endpoints and the test project's clients (scripts/oauth-provider/provider/management/commands/).
private struct DjangoProvider {
    let base: URL
    var issuer: URL { base.appending(path: "o") }
    var token: URL { URL(string: "o/token/", relativeTo: base)!.absoluteURL }
    var revocation: URL { URL(string: "o/revoke_token/", relativeTo: base)!.absoluteURL }
    var deviceAuthorization: URL { URL(string: "o/device-authorization/", relativeTo: base)!.absoluteURL }
    var me: URL { base.appending(path: "api/me") }
    var origin: Origin { Origin(base)! }

    /// `GET /api/me` with `token`, unauthenticated by the chain: the server's own view of the token.
    func status(of token: String) async throws -> HTTPStatus {
        var request = HTTPRequest(url: me)
        request.headers["Authorization"] = "Bearer \(token)"
        return try await send(request).status
    }

    /// Whether the server still stores `token` (`GET /api/token-state`, scripts/oauth-provider/provider/views.py):
    /// revocation deletes it, expiry does not — so, unlike `status(of:)`, this tells a reset's revocation from the
    /// token's 2 s running out while a busy machine is slow. Only the token's SHA-256 is sent.
    func isStored(_ token: String) async throws -> Bool {
        let checksum = SHA256.hash(Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
        var components = URLComponents(url: base.appending(path: "api/token-state"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "checksum", value: checksum)]
        let response = try await send(HTTPRequest(url: components.url!))
        try #require(response.status == .ok, "token-state answered \(response.status)")
        struct TokenState: Decodable { let stored: Bool }
        return try JSONDecoder().decode(TokenState.self, from: response.body).stored
    }

    /// The token endpoint's answer to a refresh with `refreshToken` for the public client `clientID`.
    func refresh(_ refreshToken: String, clientID: String) async throws -> (HTTPStatus, String?) {
        let request = HTTPRequest(
            method: .post, url: token,
            body: FormBody([
                "grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientID,
            ]))
        let response = try await send(request)
        let error = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["error"] as? String
        return (response.status, error)
    }

    /// The resource request the chains under test authenticate.
    func meRequest() -> HTTPRequest {
        var request = HTTPRequest(url: me)
        request.authenticationMethod = .oauth
        return request
    }

    /// Returns once the server rejects `token` (its 2 s are over): a wait for the server's state, with a deadline.
    func waitUntilRejected(_ token: String) async throws {
        let deadline = ContinuousClock.now + .seconds(standardDeadline)
        // (a probe that got no answer is repeated: this waits for the server's state, not for one request)
        while (try? await status(of: token)) != .unauthorized {
            try #require(ContinuousClock.now < deadline, "the server still accepts the token")
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// The tests' own browser and probe: plain requests to the server, past the chains under test.
private let browser = URLSessionLoader()

/// `request` sent straight to the server (redirects not followed), failing after 15 s without an answer.
private func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    var request = request
    request.redirectPolicy = .doNotFollow
    request.timeout = .seconds(15)
    return try await Task { await browser.load(request) }.finished().get()
}

/// `request` through `chain`, within the standard deadline.
private func load(_ request: HTTPRequest, through chain: HTTPLoader) async throws -> HTTPResult {
    try await Task { await chain.load(request) }.finished()
}

/// Plays the browser for the authorization-code loader: opens the login URL with redirects not followed — the test
/// user is logged in and the client skips the consent screen — and returns the callback from the `Location` header.
private final class DjangoLoginDelegate: OAuthDelegate {
    let loginURLs = Box<[URL]>([])

    func logIn(at url: URL, for loader: OAuth) async -> URL? {
        loginURLs.withLock { $0.append(url) }
        guard let response = try? await send(HTTPRequest(url: url)), response.status.rawValue == 302,
            let location = response.headers["Location"]
        else { return nil }
        return URL(string: location)
    }
}

/// Plays the user on their phone: enters the user code at the verification URI and accepts (or denies) the device,
/// with POSTs to django-oauth-toolkit's own views — once `isReady` says so (after the first poll, to see
/// `authorization_pending` answered).
private final class DjangoCodeScreen: DeviceAuthorizationDelegate {
    let accepts: Bool
    let isReady: @Sendable () -> Bool
    let shown = Box<[DeviceAuthorization]>([])
    let hidden = Box(0)
    let decisions = Box<[HTTPStatus]>([])
    let approval = Box<Task<Void, Never>?>(nil)

    init(accepts: Bool = true, isReady: @escaping @Sendable () -> Bool = { true }) {
        self.accepts = accepts
        self.isReady = isReady
    }

    func showUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {
        shown.withLock { $0.append(authorization) }
        let (accepts, isReady, decisions) = (accepts, isReady, decisions)
        approval.withLock {
            $0 = Task {
                let deadline = ContinuousClock.now + .seconds(standardDeadline)
                while !isReady(), !Task.isCancelled, ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(20))
                }
                guard !Task.isCancelled else { return }
                // DOT's device page: the code, then the decision on the confirmation page it redirects to.
                let entry = HTTPRequest(
                    method: .post, url: authorization.verificationURI,
                    body: FormBody(["user_code": authorization.userCode]))
                guard let entered = try? await send(entry), entered.status.rawValue == 302,
                    let location = entered.headers["Location"],
                    let confirmation = URL(string: location, relativeTo: authorization.verificationURI)?.absoluteURL
                else { return decisions.withLock { $0.append(.badRequest) } }
                let decision = HTTPRequest(
                    method: .post, url: confirmation, body: FormBody(["action": accepts ? "accept" : "deny"]))
                let status = (try? await send(decision))?.status ?? .badGateway
                decisions.withLock { $0.append(status) }
            }
        }
    }

    func hideUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {
        hidden.withLock { $0 += 1 }
    }
}

/// Counts the device-code polls that reach the token endpoint, passing everything on.
private final class PollCounter: HTTPLoader, @unchecked Sendable {
    // Safety: the count is in a Box, behind a lock.
    let polls = Box(0)

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        if request.path.hasSuffix("/token/"),
            String(decoding: (try? request.body.encode()) ?? Data(), as: UTF8.self).contains("device_code")
        {
            polls.withLock { $0 += 1 }
        }
        return await super.load(request)
    }
}

@Suite(
    .noHang, .serialized,
    .enabled(if: oauthProviderURL != nil, "needs OAUTH_PROVIDER_URL: run through scripts/servers.sh"))
struct ProductionProviderIntegrationTests {
    private let provider = DjangoProvider(base: oauthProviderURL!)

    // MARK: - Authorization code with PKCE (OAuth)

    private func makeOAuth(_ delegate: DjangoLoginDelegate) -> (OAuth, HTTPLoader) {
        let configuration = OAuthConfiguration(
            endpoints: .known(
                OAuthEndpoints(
                    issuer: provider.issuer.absoluteString,
                    authorization: URL(string: "o/authorize/", relativeTo: provider.base)!.absoluteURL,
                    token: provider.token, revocation: provider.revocation)),
            clientID: "pkce-app",
            redirectURI: URL(string: "com.example.app:/oauth/callback")!,
            scopes: ["openid", "read"],
            resourceOrigins: [provider.origin])
        let oauth = OAuth(configuration: configuration, delegate: delegate)
        return (oauth, oauth --> URLSessionLoader())
    }

    @Test func theAuthorizationCodeLoaderLogsInWithPKCE() async throws {
        let delegate = DjangoLoginDelegate()
        let (oauth, chain) = makeOAuth(delegate)
        defer { withExtendedLifetime(delegate) {} }
        let response = try await load(provider.meRequest(), through: chain).get()
        #expect(response.status == .ok)
        let me = try JSONDecoder().decode([String: String?].self, from: response.body)
        #expect(me["user"] == "test-user" && me["client_id"] == "pkce-app")
        // The server requires PKCE (PKCE_REQUIRED): a login without a challenge would have come back with an error.
        let login = try #require(delegate.loginURLs.value.first)
        let query = URLComponents(url: login, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.contains(URLQueryItem(name: "code_challenge_method", value: "S256")))
        #expect(query.contains { $0.name == "code_challenge" })
        #expect(oauth.credentials?.idToken != nil && oauth.credentials?.refreshToken != nil)
    }

    @Test func theAuthorizationCodeLoaderRefreshesWithRotationAndTheOldRefreshTokenIsRejected() async throws {
        let delegate = DjangoLoginDelegate()
        let (oauth, chain) = makeOAuth(delegate)
        defer { withExtendedLifetime(delegate) {} }
        #expect(try await load(provider.meRequest(), through: chain).get().status == .ok)
        let first = try #require(oauth.credentials)
        let lifetime = try #require(first.lifetime)
        try #require(lifetime <= .seconds(2), "the server must issue 2 s tokens: OIDC_TOKEN_LIFETIME=2")
        try await provider.waitUntilRejected(first.accessToken)
        #expect(try await load(provider.meRequest(), through: chain).get().status == .ok)
        let second = try #require(oauth.credentials)
        #expect(second.accessToken != first.accessToken)
        #expect(second.refreshToken != nil && second.refreshToken != first.refreshToken, "rotated")
        #expect(delegate.loginURLs.value.count == 1, "a refresh, not a new login")
        let (status, error) = try await provider.refresh(try #require(first.refreshToken), clientID: "pkce-app")
        #expect(status == .badRequest && error == "invalid_grant")
    }

    @Test func aResetRevokesTheAuthorizationCodeLoadersTokens() async throws {
        let delegate = DjangoLoginDelegate()
        let (oauth, chain) = makeOAuth(delegate)
        defer { withExtendedLifetime(delegate) {} }
        #expect(try await load(provider.meRequest(), through: chain).get().status == .ok)
        let credentials = try #require(oauth.credentials)
        // (stored, not "accepted": on a busy machine the token's 2 s may be over before the probe)
        #expect(try await provider.isStored(credentials.accessToken))
        try #require(await withDeadline(seconds: standardDeadline) { await chain.reset() } != nil)
        #expect(oauth.credentials == nil)
        #expect(try await !provider.isStored(credentials.accessToken), "revoked, not merely expired")
        #expect(try await provider.status(of: credentials.accessToken) == .unauthorized)
        let (status, error) = try await provider.refresh(try #require(credentials.refreshToken), clientID: "pkce-app")
        #expect(status == .badRequest && error == "invalid_grant")
    }

    /// DOT's OpenID Connect document names no revocation endpoint; its RFC 8414 metadata (served at the well-known
    /// path before the issuer's path, /.well-known/oauth-authorization-server/o) does.
    @Test func discoveryFindsTheRevocationEndpointInTheAuthorizationServerMetadata() async throws {
        let delegate = DjangoLoginDelegate()
        defer { withExtendedLifetime(delegate) {} }
        let configuration = OAuthConfiguration(
            issuer: provider.issuer, clientID: "pkce-app", redirectURI: URL(string: "com.example.app:/oauth/callback")!,
            scopes: ["openid", "read"], resourceOrigins: [provider.origin])
        let oauth = OAuth(configuration: configuration, delegate: delegate)
        let chain = oauth --> URLSessionLoader()
        #expect(try await load(provider.meRequest(), through: chain).get().status == .ok)
        let credentials = try #require(oauth.credentials)
        #expect(try await provider.isStored(credentials.accessToken))
        try #require(await withDeadline(seconds: standardDeadline) { await chain.reset() } != nil)
        #expect(try await !provider.isStored(credentials.accessToken), "revoked, not merely expired")
        #expect(try await provider.status(of: credentials.accessToken) == .unauthorized)
    }

    // MARK: - Client credentials

    private func makeWorker(
        secret: String = "worker-secret", authentication: ClientCredentialsGrant.ClientAuthentication
    ) -> (CredentialLoader<ClientCredentialsGrant>, HTTPLoader) {
        let grant = ClientCredentialsGrant(
            tokenEndpoint: provider.token, clientID: "worker", clientSecret: secret, authentication: authentication,
            scopes: ["reports.read", "read"], revocationEndpoint: provider.revocation)
        let loader = CredentialLoader(scheme: grant, method: .oauth, origins: [provider.origin])
        return (loader, loader --> URLSessionLoader())
    }

    @Test(arguments: [ClientCredentialsGrant.ClientAuthentication.basic, .post])
    func theClientCredentialsGrantGetsAScopedTokenAndAResetRevokesIt(
        authentication: ClientCredentialsGrant.ClientAuthentication
    ) async throws {
        let (loader, chain) = makeWorker(authentication: authentication)
        let response = try await load(provider.meRequest(), through: chain).get()
        #expect(response.status == .ok)
        let me = try JSONDecoder().decode([String: String?].self, from: response.body)
        #expect(me["client_id"] == "worker" && me["scope"] == "reports.read read" && me["user"] == .some(nil))
        let token = try #require(loader.credential?.accessToken)
        #expect(try await provider.isStored(token))
        try #require(await withDeadline(seconds: standardDeadline) { await chain.reset() } != nil)
        #expect(try await !provider.isStored(token), "revoked, not merely expired")
        #expect(try await provider.status(of: token) == .unauthorized)
    }

    @Test func theClientCredentialsGrantFetchesANewTokenOnceTheServerRejectsTheOld() async throws {
        let (loader, chain) = makeWorker(authentication: .basic)
        #expect(try await load(provider.meRequest(), through: chain).get().status == .ok)
        let first = try #require(loader.credential?.accessToken)
        try await provider.waitUntilRejected(first)
        // What lets the reset tests tell a revocation from an expiry: an expired token stays stored.
        #expect(try await provider.isStored(first))
        #expect(try await load(provider.meRequest(), through: chain).get().status == .ok)
        #expect(loader.credential?.accessToken != first)
    }

    @Test func aWrongClientSecretFailsWithTheServersInvalidClient() async throws {
        let (_, chain) = makeWorker(secret: "wrong", authentication: .basic)
        let error = try #require(try await load(provider.meRequest(), through: chain).error)
        let reason = try #require(error.underlyingError as? OAuthError)
        #expect(reason.code == .tokenRequestFailed && reason.serverErrorCode == "invalid_client")
        #expect(!error.description.contains("wrong"))
    }

    // MARK: - Device authorization

    private func makeTV(
        _ screen: DjangoCodeScreen, counter: PollCounter
    ) -> (
        CredentialLoader<DeviceAuthorizationGrant>, DeviceAuthorizationGrant, HTTPLoader
    ) {
        let grant = DeviceAuthorizationGrant(
            deviceAuthorizationEndpoint: provider.deviceAuthorization, tokenEndpoint: provider.token,
            clientID: "tv-app", scopes: ["read"], revocationEndpoint: provider.revocation, delegate: screen)
        let loader = CredentialLoader(scheme: grant, method: .oauth, origins: [provider.origin])
        return (loader, grant, loader --> counter --> URLSessionLoader())
    }

    @Test func theDeviceGrantPollsUntilTheUserApprovesAtTheServer() async throws {
        let counter = PollCounter()
        let screen = DjangoCodeScreen(isReady: { counter.polls.value >= 1 })
        let (loader, _, chain) = makeTV(screen, counter: counter)
        defer { withExtendedLifetime(screen) {} }
        let response = try await load(provider.meRequest(), through: chain).get()
        #expect(response.status == .ok)
        let me = try JSONDecoder().decode([String: String?].self, from: response.body)
        #expect(me["user"] == "test-user" && me["client_id"] == "tv-app" && me["scope"] == "read")
        #expect(counter.polls.value >= 2, "authorization_pending at least once, then the tokens")
        let shown = try #require(screen.shown.value.first)
        #expect(shown.verificationURI.absoluteString.hasSuffix("/o/device/") && shown.expiresIn == .seconds(1_800))
        #expect(shown.verificationURIComplete?.query == "user_code=\(shown.userCode)")
        #expect(screen.decisions.value == [.found] && screen.hidden.value == 1)
        #expect(loader.credential?.refreshToken != nil)
    }

    @Test func aDeniedDeviceFailsWithAccessDenied() async throws {
        let counter = PollCounter()
        let screen = DjangoCodeScreen(accepts: false)
        let (_, _, chain) = makeTV(screen, counter: counter)
        defer { withExtendedLifetime(screen) {} }
        let error = try #require(try await load(provider.meRequest(), through: chain).error)
        #expect(error.code == .cannotAuthenticate)
        #expect((error.underlyingError as? DeviceAuthorizationError)?.code == .accessDenied)
    }

    @Test func theDeviceGrantRefreshesWithRotationAndAResetRevokesItsTokens() async throws {
        let counter = PollCounter()
        let screen = DjangoCodeScreen()
        let (loader, _, chain) = makeTV(screen, counter: counter)
        defer { withExtendedLifetime(screen) {} }
        #expect(try await load(provider.meRequest(), through: chain).get().status == .ok)
        let first = try #require(loader.credential)
        loader.setNeedsRefresh()
        #expect(try await load(provider.meRequest(), through: chain).get().status == .ok)
        let second = try #require(loader.credential)
        #expect(second.accessToken != first.accessToken)
        #expect(second.refreshToken != nil && second.refreshToken != first.refreshToken, "rotated")
        let (status, error) = try await provider.refresh(try #require(first.refreshToken), clientID: "tv-app")
        #expect(status == .badRequest && error == "invalid_grant")

        #expect(try await provider.isStored(second.accessToken))
        try #require(await withDeadline(seconds: standardDeadline) { await chain.reset() } != nil)
        #expect(try await !provider.isStored(second.accessToken), "revoked, not merely expired")
        #expect(try await provider.status(of: second.accessToken) == .unauthorized)
        let (afterReset, _) = try await provider.refresh(try #require(second.refreshToken), clientID: "tv-app")
        #expect(afterReset == .badRequest)
    }

    @Test func cancellingTheDeviceFlowStopsPolling() async throws {
        let counter = PollCounter()
        let screen = DjangoCodeScreen(isReady: { false })  // the user never comes
        let (_, grant, chain) = makeTV(screen, counter: counter)
        defer { withExtendedLifetime(screen) {} }
        let load = Task { await chain.load(provider.meRequest()) }
        try await eventually { counter.polls.value >= 1 }
        grant.cancelAuthorization()
        let error = try #require(try await load.finished().error)
        #expect((error.underlyingError as? DeviceAuthorizationError)?.code == .cancelled)
        let polls = counter.polls.value
        try await Task.sleep(for: .seconds(1.5))  // longer than the server's interval: a poll would have come
        #expect(counter.polls.value == polls)
        screen.approval.value?.cancel()
    }
}

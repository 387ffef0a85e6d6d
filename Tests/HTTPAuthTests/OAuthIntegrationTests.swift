import Foundation
import HTTP
import HTTPAuth
import Testing

/// oidc-provider-mock, started by `scripts/servers.sh` with 2-second access tokens (`OIDC_TOKEN_LIFETIME=2`): for the
/// tests that need the server itself to reject an expired token.
let oidcIssuerURL: URL? = ProcessInfo.processInfo.environment["OIDC_ISSUER_URL"].flatMap(URL.init(string:))
/// A second oidc-provider-mock, whose access tokens live 3600 s whatever `OIDC_TOKEN_LIFETIME` says: for the tests
/// that need a token to stay valid while they use it — on a busy machine a 2 s token may run out before its first
/// use — and that drive expiry with the client's clock instead.
let oidcLongLivedIssuerURL: URL? = ProcessInfo.processInfo.environment["OIDC_LONG_LIVED_ISSUER_URL"].flatMap(
    URL.init(string:))
let serversAreRequired = ProcessInfo.processInfo.environment["HTTP_REQUIRE_SERVERS"] == "1"

@Test func theAuthenticationServersArePresentWhenRequired() {
    if serversAreRequired {
        #expect(oidcIssuerURL != nil, "HTTP_REQUIRE_SERVERS=1 but OIDC_ISSUER_URL is not set")
        #expect(oidcLongLivedIssuerURL != nil, "HTTP_REQUIRE_SERVERS=1 but OIDC_LONG_LIVED_ISSUER_URL is not set")
        #expect(httpbinURL != nil, "HTTP_REQUIRE_SERVERS=1 but HTTPBIN_URL is not set")
    }
}

/// Logs in the way a user would on the provider's page: posts `sub=<subject>` to the authorization URL and
/// returns the redirect it answers with. Stores credentials in a `CredentialStore`; opens the end-session page.
final class ProviderMockDelegate: OAuthDelegate {
    /// Each test logs in as its own user, so that revoking one's tokens leaves the others alone.
    let subject = "alice-" + UUID().uuidString.prefix(8).lowercased()
    let store = InMemoryCredentialStore()
    let browser = URLSessionLoader()
    let logins = Box(0)
    let logoutPages = Box<[HTTPStatus]>([])

    func savedCredentials(for loader: OAuth) async throws -> OAuthCredentials? {
        try await store.load(OAuthCredentials.self, for: "oauth")
    }

    func save(_ credentials: OAuthCredentials, for loader: OAuth) async throws {
        try await store.save(credentials, for: "oauth")
    }

    func deleteCredentials(for loader: OAuth) async throws {
        try await store.delete(for: "oauth")
    }

    func logIn(at url: URL, for loader: OAuth) async -> URL? {
        logins.withLock { $0 += 1 }
        var request = HTTPRequest(method: .post, url: url, body: FormBody(["sub": subject]))
        request.redirectPolicy = .doNotFollow
        guard let response = try? await browser.load(request).get(), response.status.rawValue == 302,
            let location = response.headers["Location"]
        else { return nil }
        return URL(string: location)
    }

    func logOut(at url: URL, for loader: OAuth) async {
        let status = (try? await browser.load(HTTPRequest(url: url)).get())?.status ?? .internalServerError
        logoutPages.withLock { $0.append(status) }
    }
}

/// Counts the requests that reach the token endpoint, and the `401`s the user-info endpoint answers, passing
/// everything on.
final class TokenEndpointCounter: HTTPLoader, @unchecked Sendable {
    // Safety: the counts are in Boxes, behind locks.
    let count = Box(0)
    let userInfoRejections = Box(0)

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        if request.path.hasSuffix("/oauth2/token") { count.withLock { $0 += 1 } }
        let result = await super.load(request)
        if request.path.hasSuffix("/userinfo"), result.response?.status == .unauthorized {
            userInfoRejections.withLock { $0 += 1 }
        }
        return result
    }
}

/// Each test's client reads a manual clock: it stands still unless the test moves it, so no token ever needs a refresh
/// because the machine was slow — only because the test moved the clock or the server answered `401`.
@Suite(
    .noHang,
    .enabled(
        if: oidcIssuerURL != nil && oidcLongLivedIssuerURL != nil,
        "needs OIDC_ISSUER_URL and OIDC_LONG_LIVED_ISSUER_URL: run through scripts/test.sh"))
struct OAuthIntegrationTests {
    /// The provider whose tokens live 3600 s: every test's, except the one that needs the server to see expiry.
    let issuer = oidcLongLivedIssuerURL!
    /// The provider whose tokens live 2 s.
    let shortLivedIssuer = oidcIssuerURL!
    let delegate = ProviderMockDelegate()
    let tokenCalls = TokenEndpointCounter()
    /// The client's clock.
    let now = Box(Date())

    func makeOAuth(issuer: URL? = nil, refreshWindow: Duration = .seconds(60)) -> (OAuth, HTTPLoader) {
        let issuer = issuer ?? self.issuer
        var configuration = OAuthConfiguration(
            issuer: issuer,
            clientID: "integration-tests",
            clientSecret: "any-secret",  // the provider accepts any secret, but wants one
            redirectURI: URL(string: "http://127.0.0.1/callback")!,
            scopes: ["openid", "email"],
            resourceOrigins: [Origin(issuer)!]
        )
        configuration.refreshWindow = refreshWindow
        let now = now
        let oauth = OAuth(configuration: configuration, delegate: delegate) { now.value }
        return (oauth, oauth --> tokenCalls --> URLSessionLoader())
    }

    /// Returns once the provider answers `token` with 401, its lifetime over at the server: a wait for the server's
    /// state, not for a guessed time.
    func waitUntilTheProviderRejects(_ token: String, at issuer: URL) async throws {
        let probe = URLSessionLoader()
        var request = HTTPRequest(url: issuer.appending(path: "userinfo"))
        request.headers["Authorization"] = "Bearer \(token)"
        let deadline = ContinuousClock.now + .seconds(standardDeadline)
        while try await probe.load(request).get().status != .unauthorized {
            try #require(ContinuousClock.now < deadline, "the provider still accepts the token")
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    func userInfo(at issuer: URL? = nil) -> HTTPRequest {
        var request = HTTPRequest(url: (issuer ?? self.issuer).appending(path: "userinfo"))
        request.authenticationMethod = .oauth
        return request
    }

    @Test func logsInThroughDiscoveryAndReadsUserInfo() async throws {
        let (oauth, chain) = makeOAuth()
        let response = try await chain.load(userInfo()).get()
        #expect(response.status == .ok)
        let claims = try JSONDecoder().decode([String: String].self, from: response.body)
        #expect(claims["sub"] == delegate.subject)
        #expect(oauth.lastFlowPath == [.getSavedCredentials, .discovery, .logIn, .getTokens, .done])
        #expect(try await delegate.store.load(OAuthCredentials.self, for: "oauth") == oauth.credentials)
        #expect(oauth.credentials?.idToken != nil)  // validated: iss, aud, exp, iat, nonce
        #expect(tokenCalls.count.value == 1)
    }

    @Test func expiredTokensAreRefreshedOnceForFiftyConcurrentRequests() async throws {
        let (oauth, chain) = makeOAuth()
        #expect(try await chain.load(userInfo()).get().status == .ok)
        #expect(tokenCalls.count.value == 1)
        let lifetime = try #require(oauth.credentials?.lifetime)
        // The client's clock moves past the token's refresh deadline: no waiting for real time to pass.
        now.withLock { $0 += lifetime.seconds }
        #expect(oauth.situation == .needsRefresh)

        let statuses = await withTaskGroup(of: HTTPStatus?.self) { group in
            for _ in 0..<50 { group.addTask { await chain.load(self.userInfo()).response?.status } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses)")
        #expect(tokenCalls.count.value == 2)  // the login and exactly one refresh
        #expect(oauth.lastFlowPath == [.refreshTokens, .done])
        #expect(oauth.situation == .authorized)
        #expect(tokenCalls.userInfoRejections.value == 0)
    }

    /// The one test that needs the server to see the token expire, so it uses the 2 s provider. The client's clock
    /// stands still: it never thinks the token expired, and only the server's `401` can drive the refresh. That `401`
    /// comes for the login's token either at its first use (on a busy machine, if its 2 s were over by then) or at
    /// the next use, once the provider rejects it; either way it must lead to exactly one refresh and a replay the
    /// provider answers. (A refreshed token lives 3600 s: the provider's refresh grant ignores `--token-max-age`.)
    @Test func a401AfterExpiryRefreshesAndReplays() async throws {
        let (oauth, chain) = makeOAuth(issuer: shortLivedIssuer, refreshWindow: .zero)
        #expect(try await chain.load(userInfo(at: shortLivedIssuer)).get().status == .ok)
        if tokenCalls.count.value == 1 {
            // The login's token was used in time: wait until the provider rejects it, then use it again.
            let credentials = try #require(oauth.credentials)
            let lifetime = try #require(credentials.lifetime)
            try #require(
                lifetime <= .seconds(5),
                "OIDC_ISSUER_URL's provider must issue short-lived tokens: OIDC_TOKEN_LIFETIME=2 (scripts/test.sh)")
            try await waitUntilTheProviderRejects(credentials.accessToken, at: shortLivedIssuer)
            #expect(oauth.situation == .authorized)
            #expect(tokenCalls.userInfoRejections.value == 0)
            #expect(try await chain.load(userInfo(at: shortLivedIssuer)).get().status == .ok)
        }
        #expect(tokenCalls.userInfoRejections.value == 1, "the provider rejected the expired token once")
        #expect(tokenCalls.count.value == 2, "the login and exactly one refresh")
        #expect(oauth.lastFlowPath == [.refreshTokens, .done])
        #expect(delegate.logins.value == 1)
    }

    @Test func revokedTokensLeadToANewLogin() async throws {
        let (oauth, chain) = makeOAuth()
        #expect(try await chain.load(userInfo()).get().status == .ok)
        let lifetime = try #require(oauth.credentials?.lifetime)
        let revoke = HTTPRequest(method: .post, url: issuer.appending(path: "users/\(delegate.subject)/revoke-tokens"))
        #expect(try await URLSessionLoader().load(revoke).get().status == .noContent)

        now.withLock { $0 += lifetime.seconds }  // the token looks expired: the refresh meets the revoked refresh token
        #expect(oauth.situation == .needsRefresh)
        #expect(try await chain.load(userInfo()).get().status == .ok)
        #expect(oauth.lastFlowPath == [.refreshTokens, .logIn, .getTokens, .done])
        #expect(delegate.logins.value == 2)
        #expect(tokenCalls.count.value == 3)  // the login, the refused refresh and the second login
    }

    @Test func resetEndsTheSessionAndDeletesTheCredentials() async throws {
        let (oauth, chain) = makeOAuth()
        #expect(try await chain.load(userInfo()).get().status == .ok)
        #expect(try await delegate.store.load(OAuthCredentials.self, for: "oauth") != nil)
        await chain.reset()
        #expect(oauth.lastFlowPath == [.logOut, .done])
        #expect(delegate.logoutPages.value == [.ok])
        #expect(try await delegate.store.load(OAuthCredentials.self, for: "oauth") == nil)
        #expect(oauth.credentials == nil)
    }
}

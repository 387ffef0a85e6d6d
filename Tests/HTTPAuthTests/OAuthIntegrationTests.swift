import Foundation
import HTTP
import HTTPAuth
import Testing

/// oidc-provider-mock, started by `scripts/servers.sh` with 2-second access tokens (`OIDC_TOKEN_LIFETIME=2`).
let oidcIssuerURL: URL? = ProcessInfo.processInfo.environment["OIDC_ISSUER_URL"].flatMap(URL.init(string:))
let serversAreRequired = ProcessInfo.processInfo.environment["HTTP_REQUIRE_SERVERS"] == "1"

@Test func theAuthenticationServersArePresentWhenRequired() {
    if serversAreRequired {
        #expect(oidcIssuerURL != nil, "HTTP_REQUIRE_SERVERS=1 but OIDC_ISSUER_URL is not set")
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

/// Counts the requests that reach the token endpoint, passing everything on.
final class TokenEndpointCounter: HTTPLoader, @unchecked Sendable {
    // Safety: the count is in a Box, behind a lock.
    let count = Box(0)

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        if request.path.hasSuffix("/oauth2/token") { count.withLock { $0 += 1 } }
        return await super.load(request)
    }
}

@Suite(.noHang, .enabled(if: oidcIssuerURL != nil, "needs OIDC_ISSUER_URL: run through scripts/test.sh"))
struct OAuthIntegrationTests {
    let issuer = oidcIssuerURL!
    let delegate = ProviderMockDelegate()
    let tokenCalls = TokenEndpointCounter()
    /// The client's clock, shifted by `clockOffset` seconds.
    let clockOffset = Box<TimeInterval>(0)

    func makeOAuth(refreshWindow: Duration = .seconds(60)) -> (OAuth, HTTPLoader) {
        var configuration = OAuthConfiguration(
            issuer: issuer,
            clientID: "integration-tests",
            clientSecret: "any-secret",  // the provider accepts any secret, but wants one
            redirectURI: URL(string: "http://127.0.0.1/callback")!,
            scopes: ["openid", "email"],
            resourceOrigins: [Origin(issuer)!]
        )
        configuration.refreshWindow = refreshWindow
        let offset = clockOffset
        let oauth = OAuth(configuration: configuration, delegate: delegate) { Date().addingTimeInterval(offset.value) }
        return (oauth, oauth --> tokenCalls --> URLSessionLoader())
    }

    /// Returns once the provider answers `token` with 401, its lifetime over at the server: a wait for the server's
    /// state, not for a guessed time.
    func waitUntilTheProviderRejects(_ token: String) async throws {
        let probe = URLSessionLoader()
        var request = HTTPRequest(url: issuer.appending(path: "userinfo"))
        request.headers["Authorization"] = "Bearer \(token)"
        let deadline = ContinuousClock.now + .seconds(standardDeadline)
        while try await probe.load(request).get().status != .unauthorized {
            try #require(ContinuousClock.now < deadline, "the provider still accepts the token")
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    func userInfo() -> HTTPRequest {
        var request = HTTPRequest(url: issuer.appending(path: "userinfo"))
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
        let lifetime = try #require(oauth.credentials?.lifetime)
        try #require(
            lifetime <= .seconds(2), "the provider must issue 2 s tokens: OIDC_TOKEN_LIFETIME=2 (scripts/test.sh)")
        // The client's clock moves past the token's refresh deadline: no waiting for real time to pass.
        clockOffset.withLock { $0 = lifetime.seconds }
        #expect(oauth.situation == .needsRefresh)

        let statuses = await withTaskGroup(of: HTTPStatus?.self) { group in
            for _ in 0..<50 { group.addTask { await chain.load(self.userInfo()).response?.status } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses)")
        #expect(tokenCalls.count.value == 2)  // the login and exactly one refresh
        #expect(oauth.lastFlowPath == [.refreshTokens, .done])
    }

    @Test func a401AfterExpiryRefreshesAndReplays() async throws {
        let (oauth, chain) = makeOAuth(refreshWindow: .zero)
        #expect(try await chain.load(userInfo()).get().status == .ok)
        let lifetime = try #require(oauth.credentials?.lifetime)
        try #require(
            lifetime <= .seconds(2), "the provider must issue 2 s tokens: OIDC_TOKEN_LIFETIME=2 (scripts/test.sh)")
        // The client's clock jumps 30 s back: it believes the token valid, the server rejects it, and the 401
        // drives the refresh.
        clockOffset.withLock { $0 = -30 }
        try await waitUntilTheProviderRejects(try #require(oauth.credentials?.accessToken))
        #expect(oauth.situation == .authorized)
        #expect(try await chain.load(userInfo()).get().status == .ok)
        #expect(tokenCalls.count.value == 2)
        #expect(oauth.lastFlowPath == [.refreshTokens, .done])
    }

    @Test func revokedTokensLeadToANewLogin() async throws {
        let (oauth, chain) = makeOAuth()
        #expect(try await chain.load(userInfo()).get().status == .ok)
        let revoke = HTTPRequest(method: .post, url: issuer.appending(path: "users/\(delegate.subject)/revoke-tokens"))
        #expect(try await URLSessionLoader().load(revoke).get().status == .noContent)

        clockOffset.withLock { $0 = 10 }  // the token looks expired: the refresh meets the revoked refresh token
        #expect(try await chain.load(userInfo()).get().status == .ok)
        #expect(oauth.lastFlowPath == [.refreshTokens, .logIn, .getTokens, .done])
        #expect(delegate.logins.value == 2)
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

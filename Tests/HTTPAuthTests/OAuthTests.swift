import Foundation
import HTTP
import Testing

@testable import HTTPAuth

/// An OAuth loader in front of a fake authorization and resource server, with a controllable clock.
private struct Fixture {
    let clock = TestClock()
    let server: FakeAuthorizationServer
    let delegate: OAuthTestDelegate
    let oauth: OAuth

    init(
        configuration: OAuthConfiguration = oauthConfiguration(),
        credentials: OAuthCredentials? = nil,
        saved: OAuthCredentials? = nil,
        holdsLogins: Bool = false,
        through middle: HTTPLoader? = nil,
        answer: (@Sendable (FakeAuthorizationServer, URL) -> URL?)? = nil
    ) {
        let server = FakeAuthorizationServer(clock: clock)
        self.server = server
        if let answer {
            delegate = OAuthTestDelegate(saved: saved, holdsLogins: holdsLogins) { answer(server, $0) }
        } else {
            delegate = OAuthTestDelegate(server: server, saved: saved, holdsLogins: holdsLogins)
        }
        oauth = OAuth(configuration: configuration, credentials: credentials, delegate: delegate, now: clock.read)
        if let middle {
            oauth.nextLoader = middle
            middle.nextLoader = server
        } else {
            oauth.nextLoader = server
        }
    }

    func load(_ request: HTTPRequest = apiRequest()) async -> HTTPResult {
        await oauth.load(request)
    }

    /// Logs in with a first request.
    func logIn() async throws {
        let result = await load()
        try #require(result.response?.status == .ok, "login failed: \(String(describing: result.error))")
    }

    /// What the loader, the delegate and the server report, for a wait that gave up.
    var debugState: String {
        let server = server.state.value
        return "\(oauth.debugState); delegate: \(delegate.loginCount) logins, \(delegate.heldLoginCount) held; "
            + "server: \(server.tokenRequests.count) token requests, \(server.tokenGate.count) held"
    }

    func oauthError(_ result: HTTPResult) -> OAuthError? {
        result.error?.underlyingError as? OAuthError
    }
}

@Suite(.noHang) struct OAuthLoginTests {
    @Test func theFirstRequestLogsInWithPKCEStateAndNonceAndIsSentWithTheToken() async throws {
        let fixture = Fixture()
        let states = fixture.oauth.sessionStates()
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .loggedOut(nil))

        let result = await fixture.load()
        #expect(result.response?.status == .ok)
        #expect(
            fixture.oauth.lastFlowPath == [.getSavedCredentials, .discovery, .logIn, .getTokens, .done])

        // The login page got a PKCE S256 challenge, a state and a nonce, for this client and redirect URI.
        let loginURL = try #require(fixture.delegate.state.value.loginURLs.first)
        #expect(loginURL.host == "id.example.com" && loginURL.path == "/authorize")
        #expect(loginURL.queryValue("response_type") == "code")
        #expect(loginURL.queryValue("client_id") == "test-app")
        #expect(loginURL.queryValue("redirect_uri") == redirectURI.absoluteString)
        #expect(loginURL.queryValue("scope") == "openid profile")
        #expect(loginURL.queryValue("code_challenge_method") == "S256")
        #expect(loginURL.queryValue("state")?.count == 43)
        #expect(loginURL.queryValue("nonce")?.count == 43)

        // The token request redeemed the code with the verifier behind that challenge, unauthenticated.
        let tokenRequest = try #require(fixture.server.tokenRequests.first)
        let form = fixture.server.form(tokenRequest)
        #expect(form["grant_type"] == "authorization_code")
        #expect(form["client_id"] == "test-app")
        #expect(try PKCE(verifier: #require(form["code_verifier"])).challenge == loginURL.queryValue("code_challenge"))
        #expect(tokenRequest.headers["Authorization"] == nil)
        #expect(tokenRequest.throttle == .never)
        #expect(tokenRequest.authenticationMethod == nil)

        // The resource request carried the new token; the credentials were saved.
        let saved = try #require(fixture.delegate.state.value.saved)
        #expect(fixture.server.resourceRequests.last?.headers["Authorization"] == "Bearer \(saved.accessToken)")
        #expect(fixture.oauth.credentials == saved)
        #expect(await iterator.next() == .loggedIn)
        let situation: OAuth.Situation = fixture.oauth.situation  // the type apps name, as before OAuth was a scheme
        #expect(situation == .authorized)
    }

    @Test func twoLoginsUseFreshStateNonceAndVerifier() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        await fixture.oauth.reset()
        try await fixture.logIn()
        let urls = fixture.delegate.state.value.loginURLs
        try #require(urls.count == 2)
        for name in ["state", "nonce", "code_challenge"] {
            #expect(urls[0].queryValue(name) != urls[1].queryValue(name), "\(name) was reused")
        }
    }

    @Test func requestsArrivingDuringALoginWaitAndAreReleasedTogether() async throws {
        let fixture = Fixture(holdsLogins: true)
        let loads = (0..<20).map { index in Task { await fixture.load(apiRequest("/item/\(index)")) } }
        try await eventually(fixture.debugState) {
            fixture.oauth.waitingCount == 20 && fixture.delegate.heldLoginCount == 1
        }
        #expect(fixture.oauth.situation == .authorizing)
        #expect(fixture.server.resourceRequests.isEmpty)
        fixture.delegate.releaseLogins()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(fixture.delegate.loginCount == 1)
        #expect(fixture.server.tokenRequestCount == 1)
    }

    @Test func savedValidCredentialsAreUsedWithoutALogin() async throws {
        let clock = TestClock()
        let saved = OAuthCredentials(
            accessToken: "saved", refreshToken: "r", expirationDate: clock.now.addingTimeInterval(3_600))
        let fixture = Fixture(saved: saved)
        fixture.server.state.withLock { $0.accessTokens["saved"] = .distantFuture }
        #expect(fixture.oauth.situation == .idle)
        #expect(await fixture.load().response?.status == .ok)
        #expect(fixture.oauth.lastFlowPath == [.getSavedCredentials, .done])
        #expect(fixture.delegate.loginCount == 0)
        #expect(fixture.server.state.value.discoveryRequests == 0)
    }

    @Test func savedExpiredCredentialsAreRefreshed() async throws {
        let fixture = Fixture()
        fixture.server.state.withLock { $0.refreshTokens = ["saved-refresh"] }
        fixture.delegate.state.withLock {
            $0.saved = OAuthCredentials(
                accessToken: "old", refreshToken: "saved-refresh",
                expirationDate: fixture.clock.now.addingTimeInterval(-1))
        }
        #expect(await fixture.load().response?.status == .ok)
        #expect(fixture.oauth.lastFlowPath == [.getSavedCredentials, .discovery, .refreshTokens, .done])
        #expect(fixture.delegate.loginCount == 0)
        // The refresh response had no refresh_token: the old one is kept (RFC 6749 §6).
        #expect(fixture.oauth.credentials?.refreshToken == "saved-refresh")
        #expect(fixture.delegate.state.value.saved?.refreshToken == "saved-refresh")
    }

    @Test func aCancelledLoginFailsEveryWaitingRequest() async throws {
        let fixture = Fixture(answer: { _, _ in nil })
        let results = await withTaskGroup(of: HTTPResult.self) { group in
            for _ in 0..<5 { group.addTask { await fixture.load() } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for result in results {
            #expect(result.error?.code == .cannotAuthenticate)
            #expect(fixture.oauthError(result) == .loginCancelled)
        }
        #expect(fixture.server.tokenRequestCount == 0)
        #expect(fixture.oauth.situation == .idle)
    }

    @Test func aCallbackWithAnotherStateIsRejectedWithoutRedeemingTheCode() async throws {
        let fixture = Fixture(answer: { server, url in server.signIn(at: url, state: "forged") })
        let result = await fixture.load()
        #expect(fixture.oauthError(result) == .stateMismatch)
        #expect(fixture.server.tokenRequestCount == 0)
        #expect(result.error?.message.contains("state") == true)
    }

    @Test func anErrorCallbackBecomesAClearError() async throws {
        let fixture = Fixture(answer: { server, url in server.signIn(at: url, error: "access_denied") })
        let result = await fixture.load()
        #expect(
            fixture.oauthError(result) == .authorizationDenied(error: "access_denied", description: "The user said no"))
        #expect(result.error?.message == "the authorization server refused the login: access_denied (The user said no)")
        #expect(fixture.server.tokenRequestCount == 0)
    }

    @Test func aCallbackForAnotherRedirectURIIsRejected() async throws {
        let fixture = Fixture(answer: { server, url in
            var callback = URLComponents(url: server.signIn(at: url), resolvingAgainstBaseURL: false)!
            callback.scheme = "https"
            callback.host = "evil.example"
            return callback.url
        })
        let result = await fixture.load()
        guard fixture.oauthError(result)?.code == .invalidCallback else {
            Issue.record("expected invalidCallback, got \(String(describing: result.error))")
            return
        }
        #expect(fixture.server.tokenRequestCount == 0)
    }

    @Test func anIDTokenWithTheWrongNonceFailsTheLogin() async throws {
        let fixture = Fixture()
        fixture.server.state.withLock { $0.nonceOverride = "replayed" }
        let result = await fixture.load()
        guard let error = fixture.oauthError(result), error.code == .invalidIDToken, let reason = error.reason else {
            Issue.record("expected invalidIDToken, got \(String(describing: result.error))")
            return
        }
        #expect(reason.contains("nonce"))
        #expect(fixture.oauth.credentials == nil)
        #expect(fixture.delegate.state.value.saved == nil)
    }

    @Test func aConfidentialClientAuthenticatesWithHTTPBasic() async throws {
        let fixture = Fixture(configuration: oauthConfiguration(clientSecret: "s3cr:et"))
        try await fixture.logIn()
        let tokenRequest = try #require(fixture.server.tokenRequests.first)
        // RFC 6749 §2.3.1: form-encode, then Basic: "test-app:s3cr%3Aet".
        #expect(tokenRequest.headers["Authorization"] == "Basic dGVzdC1hcHA6czNjciUzQWV0")
        #expect(fixture.server.form(tokenRequest)["client_id"] == nil)
    }

    @Test func withoutOpenIDScopeNoIDTokenIsRequiredOrChecked() async throws {
        let fixture = Fixture(configuration: oauthConfiguration(scopes: ["read"]))
        try await fixture.logIn()
        #expect(fixture.delegate.state.value.loginURLs.first?.queryValue("nonce") == nil)
    }

    @Test func noDelegateIsAClearError() async throws {
        let clock = TestClock()
        let oauth = OAuth(configuration: oauthConfiguration(), now: clock.read)
        oauth.nextLoader = FakeAuthorizationServer(clock: clock)
        let result = await oauth.load(apiRequest())
        #expect(result.error?.underlyingError as? OAuthError == .noDelegate)
    }
}

@Suite(.noHang) struct OAuthDiscoveryTests {
    @Test func discoveryRunsOnceAndIsKeptForLaterFlows() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.clock.advance(by: 3_600)
        try await fixture.logIn()  // a refresh
        #expect(fixture.oauth.lastFlowPath == [.refreshTokens, .done])
        #expect(fixture.server.state.value.discoveryRequests == 1)
    }

    @Test func knownEndpointsNeedNoDiscovery() async throws {
        let endpoints = OAuthEndpoints(
            issuer: "https://id.example.com",
            authorization: URL(string: "https://id.example.com/authorize")!,
            token: URL(string: "https://id.example.com/token")!
        )
        let fixture = Fixture(configuration: oauthConfiguration(endpoints: .known(endpoints)))
        try await fixture.logIn()
        #expect(fixture.oauth.lastFlowPath == [.getSavedCredentials, .logIn, .getTokens, .done])
        #expect(fixture.server.state.value.discoveryRequests == 0)
    }

    @Test func aDocumentForAnotherIssuerIsRejected() async throws {
        let clock = TestClock()
        let server = FakeAuthorizationServer(clock: clock, issuer: "https://impostor.example")
        let delegate = OAuthTestDelegate(server: server)
        let oauth = OAuth(configuration: oauthConfiguration(), delegate: delegate, now: clock.read)
        oauth.nextLoader = server
        let result = await oauth.load(apiRequest())
        guard let error = result.error?.underlyingError as? OAuthError, error.code == .discoveryFailed,
            let reason = error.reason
        else {
            Issue.record("expected discoveryFailed, got \(String(describing: result.error))")
            return
        }
        #expect(reason.contains("impostor.example"))
        #expect(delegate.loginCount == 0)
    }

    @Test func anUnreachableIssuerIsAClearError() async throws {
        let oauth = OAuth(
            configuration: oauthConfiguration(), delegate: OAuthTestDelegate { _ in nil }, now: TestClock().read)
        oauth.nextLoader = MockLoader().then(failWith: .cannotConnect)
        let result = await oauth.load(apiRequest())
        #expect(result.error?.code == .cannotAuthenticate)
        #expect(result.error?.message.contains("/.well-known/openid-configuration") == true)
    }
}

@Suite(.noHang) struct OAuthRefreshTests {
    @Test func anExpiringTokenIsRefreshedBeforeUseAndConcurrentRequestsShareOneRefresh() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        let firstToken = try #require(fixture.oauth.credentials?.accessToken)
        // 3600 s tokens are refreshed 60 s before they expire.
        fixture.clock.advance(by: 3_539)
        #expect(fixture.oauth.situation == .authorized)
        fixture.clock.advance(by: 2)
        #expect(fixture.oauth.situation == .needsRefresh)

        fixture.server.state.withLock { $0.holdsTokenRequests = true }
        let loads = (0..<50).map { index in Task { await fixture.load(apiRequest("/item/\(index)")) } }
        try await eventually(fixture.debugState) { fixture.oauth.waitingCount == 50 }
        // Nobody went out with the token known to be stale.
        #expect(fixture.server.resourceRequests.count == 1)
        fixture.server.releaseTokenRequests()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(fixture.server.tokenRequestCount == 2)  // the login and one refresh
        let refresh = fixture.server.form(fixture.server.tokenRequests[1])
        #expect(refresh["grant_type"] == "refresh_token")
        #expect(fixture.oauth.credentials?.accessToken != firstToken)
        #expect(fixture.oauth.lastFlowPath == [.refreshTokens, .done])
    }

    @Test func aShortLivedTokenIsRefreshedAtHalfItsLifetime() async throws {
        let fixture = Fixture()
        fixture.server.state.withLock { $0.lifetime = 2 }
        try await fixture.logIn()
        fixture.clock.advance(by: 0.9)
        #expect(fixture.oauth.situation == .authorized)
        try await fixture.logIn()
        #expect(fixture.server.tokenRequestCount == 1)
        fixture.clock.advance(by: 0.2)
        #expect(fixture.oauth.situation == .needsRefresh)
        try await fixture.logIn()
        #expect(fixture.server.tokenRequestCount == 2)
    }

    @Test func aRefreshWindowCanBeConfigured() async throws {
        var configuration = oauthConfiguration()
        configuration.refreshWindow = .seconds(600)
        let fixture = Fixture(configuration: configuration)
        try await fixture.logIn()
        fixture.clock.advance(by: 2_999)
        #expect(fixture.oauth.situation == .authorized)
        fixture.clock.advance(by: 2)
        #expect(fixture.oauth.situation == .needsRefresh)
    }

    @Test func a401ForTheCurrentTokenRefreshesOnceAndReplaysTheRequest() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.server.revokeAccessTokens()
        let states = fixture.oauth.sessionStates()
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .loggedIn)

        let results = await withTaskGroup(of: HTTPResult.self) { group in
            for _ in 0..<10 { group.addTask { await fixture.load() } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.response?.status == .ok) }
        #expect(fixture.server.tokenRequestCount == 2)  // the login and one refresh
        #expect(await iterator.next() == .refreshed)
    }

    @Test func a401ForAnOlderTokenIsReplayedWithTheCurrentOneWithoutRefreshing() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        let oldToken = try #require(fixture.oauth.credentials?.accessToken)
        fixture.server.state.withLock { $0.holdsResourcePaths = ["/slow"] }
        let slow = Task { await fixture.load(apiRequest("/slow")) }
        try await eventually(fixture.debugState) { fixture.server.state.value.heldResources["/slow"] != nil }

        // Meanwhile the token is refreshed by another request…
        fixture.clock.advance(by: 3_590)
        try await fixture.logIn()
        #expect(fixture.server.tokenRequestCount == 2)
        // …and the old one revoked: the slow request's 401 is for a token that is no longer current.
        fixture.server.state.withLock {
            $0.accessTokens.removeValue(forKey: oldToken)
            $0.holdsResourcePaths = []
        }
        fixture.server.releaseResource("/slow")
        #expect(try await slow.finished().response?.status == .ok)
        #expect(fixture.server.tokenRequestCount == 2)
        let replay = try #require(fixture.server.resourceRequests.last)
        #expect(replay.headers["Authorization"] == "Bearer \(fixture.oauth.credentials!.accessToken)")
    }

    @Test func aRequestIsReplayedAtMostOnce() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.server.state.withLock { $0.rejectsEveryToken = true }
        let before = fixture.server.resourceRequests.count
        let result = await fixture.load()
        #expect(result.response?.status == .unauthorized)
        #expect(fixture.server.resourceRequests.count == before + 2)
        #expect(fixture.server.tokenRequestCount == 2)
    }

    @Test func theRefreshLimitStopsARefreshLoop() async throws {
        let fixture = Fixture(
            configuration: oauthConfiguration(refreshLimit: .init(maximumRefreshes: 2, window: .seconds(60))))
        try await fixture.logIn()
        fixture.server.state.withLock { $0.rejectsEveryToken = true }
        #expect(await fixture.load().response?.status == .unauthorized)  // refresh 1
        #expect(await fixture.load().response?.status == .unauthorized)  // refresh 2
        let third = await fixture.load()
        #expect(fixture.oauthError(third) == .refreshLoop(refreshes: 2, window: .seconds(60)))
        #expect(third.error?.message.contains("refreshed 2 times within 60.0 s") == true)
        #expect(fixture.server.tokenRequestCount == 3)
        // The window passes: refreshing is allowed again.
        fixture.clock.advance(by: 61)
        fixture.server.state.withLock { $0.rejectsEveryToken = false }
        #expect(await fixture.load().response?.status == .ok)
    }

    @Test func failedRefreshesDoNotCountTowardsTheLimit() async throws {
        let fixture = Fixture(
            configuration: oauthConfiguration(refreshLimit: .init(maximumRefreshes: 1, window: .seconds(60))))
        try await fixture.logIn()
        fixture.clock.advance(by: 3_590)
        fixture.server.state.withLock { $0.tokenEndpointStatus = .serviceUnavailable }
        for _ in 0..<3 {
            #expect(
                fixture.oauthError(await fixture.load())
                    == .tokenRequestFailed(status: 503, error: nil, description: nil))
        }
        fixture.server.state.withLock { $0.tokenEndpointStatus = nil }
        #expect(await fixture.load().response?.status == .ok)
        #expect(fixture.server.tokenRequestCount == 5)
    }

    @Test func invalidGrantLogsInAgain() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.server.revokeRefreshTokens()
        fixture.clock.advance(by: 3_590)
        #expect(await fixture.load().response?.status == .ok)
        #expect(fixture.oauth.lastFlowPath == [.refreshTokens, .logIn, .getTokens, .done])
        #expect(fixture.delegate.loginCount == 2)
        #expect(fixture.delegate.state.value.deletions == 1)
    }

    @Test func invalidGrantCanFailInsteadAndReportsTheLogout() async throws {
        let fixture = Fixture(configuration: oauthConfiguration(onInvalidGrant: .fail))
        try await fixture.logIn()
        let states = fixture.oauth.sessionStates()
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .loggedIn)
        fixture.server.revokeRefreshTokens()
        fixture.clock.advance(by: 3_590)
        let result = await fixture.load()
        let expected = OAuthError.refreshRejected(description: "the refresh token is not valid")
        #expect(fixture.oauthError(result) == expected)
        #expect(fixture.oauth.credentials == nil)
        #expect(fixture.delegate.state.value.saved == nil)
        #expect(await iterator.next() == .loggedOut(expected))
        #expect(fixture.oauth.situation == .idle)
    }

    @Test func aFailingTokenEndpointFailsTheFlowWithoutRecursing() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.server.state.withLock { $0.tokenEndpointStatus = .unauthorized }
        fixture.clock.advance(by: 3_590)
        let result = await fixture.load()
        #expect(fixture.oauthError(result) == .tokenRequestFailed(status: 401, error: nil, description: nil))
        #expect(fixture.server.tokenRequestCount == 2)
        // The credentials are kept: a later request tries again.
        #expect(fixture.oauth.credentials != nil)
    }
}

@Suite(.noHang) struct OAuthSecurityTests {
    @Test func tokensGoOnlyToTheResourceHosts() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        let result = await fixture.load(apiRequest(host: "evil.example"))
        #expect(result.error?.code == .cannotAuthenticate)
        #expect(result.error?.message.contains("api.example.com") == true)
        #expect(!fixture.server.resourceRequests.contains { $0.host == "evil.example" })
    }

    @Test func requestsThatNeedNoAuthenticationPassUntouched() async throws {
        let fixture = Fixture()
        let result = await fixture.load(HTTPRequest(host: "api.example.com", path: "/public"))
        #expect(result.response?.status == .unauthorized)  // the fake server's answer, unauthenticated
        #expect(fixture.server.resourceRequests.first?.headers["Authorization"] == nil)
        #expect(fixture.delegate.loginCount == 0)
    }

    @Test func tokensDoNotAppearInLogsOrCURLCommands() async throws {
        let lines = Box([String]())
        let logger = PrintLoader(includesHeaders: true) { line in lines.withLock { $0.append(line) } }
        let fixture = Fixture(through: logger)
        try await fixture.logIn()
        let credentials = try #require(fixture.oauth.credentials)
        let secrets = [credentials.accessToken, try #require(credentials.refreshToken)]
        let tokenRequest = try #require(fixture.server.tokenRequests.first)
        let verifier = try #require(fixture.server.form(tokenRequest)["code_verifier"])
        let code = try #require(fixture.server.form(tokenRequest)["code"])
        let commands = (fixture.server.tokenRequests + fixture.server.resourceRequests).map { $0.cURLCommand() }
        for text in lines.value + commands {
            for secret in secrets + [verifier, code] { #expect(!text.contains(secret), "\(text)") }
        }
        #expect(commands.first?.contains("code_verifier=<redacted>") == true)
    }

    @Test func descriptionsOfErrorsAndCredentialsShowNoToken() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        let credentials = try #require(fixture.oauth.credentials)
        fixture.server.state.withLock { $0.rejectsEveryToken = true }
        let result = await fixture.load()
        #expect(!String(describing: result).contains(credentials.accessToken))
        #expect(!String(describing: credentials).contains(credentials.accessToken))
    }
}

@Suite(.noHang) struct OAuthCancellationAndResetTests {
    @Test func aWaitingRequestThatIsCancelledCompletesAtOnce() async throws {
        let fixture = Fixture(holdsLogins: true)
        let waiting = Task { await fixture.load() }
        let other = Task { await fixture.load() }
        try await eventually(fixture.debugState) {
            fixture.oauth.waitingCount == 2 && fixture.delegate.heldLoginCount == 1
        }
        waiting.cancel()
        #expect(try await waiting.finished().error?.code == .cancelled)
        #expect(fixture.oauth.waitingCount == 1)
        fixture.delegate.releaseLogins()
        #expect(try await other.finished().response?.status == .ok)
    }

    @Test func resetLogsOutRevokesDeletesAndEndsTheSession() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        let credentials = try #require(fixture.oauth.credentials)
        let states = fixture.oauth.sessionStates()
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .loggedIn)

        await fixture.oauth.reset()
        #expect(fixture.oauth.lastFlowPath == [.logOut, .done])
        #expect(fixture.server.state.value.revoked == [credentials.refreshToken!, credentials.accessToken])
        #expect(fixture.delegate.state.value.saved == nil)
        #expect(fixture.delegate.state.value.deletions == 1)
        let logout = try #require(fixture.delegate.state.value.logoutURLs.first)
        #expect(logout.path == "/logout")
        #expect(logout.queryValue("id_token_hint") == credentials.idToken)
        #expect(logout.queryValue("post_logout_redirect_uri") == "com.example.app:/logged-out")
        #expect(fixture.oauth.credentials == nil)
        #expect(fixture.oauth.situation == .idle)
        // The delegate and the loader know what the logout did: everything.
        let outcome = OAuthLogout(
            revocation: .revoked, deletedSavedCredentials: true, endedProviderSession: true, problem: nil)
        #expect(fixture.delegate.state.value.logouts == [outcome])
        #expect(fixture.oauth.lastLogout == outcome && outcome.isSignedOutAtServer)
        #expect(await iterator.next() == .loggedOut(nil))

        // The next request starts over.
        try await fixture.logIn()
        #expect(fixture.delegate.loginCount == 2)
    }

    @Test func aResetThatReachesItsLogoutWhileAnotherLogsOutWaitsForThatLogoutInsteadOfRunningASecond() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        let gate = Box<CheckedContinuation<Void, Never>?>(nil)
        let slowDelegate = SlowLogoutDelegate(gate: gate)  // held weakly by the loader
        fixture.oauth.delegate = slowDelegate
        let first = Task { await fixture.oauth.reset() }
        try await eventually { gate.value != nil }  // the first logout shows the end-session page
        let secondDone = Box(false)
        // Called on another loader above OAuth: a second reset called on OAuth itself would wait for the first one
        // at the entry (HTTPLoader.reset(mode:)), before reaching the logout.
        let otherHead = ResetGuard()
        otherHead.nextLoader = fixture.oauth
        let second = Task {
            await otherHead.reset()
            secondDone.withLock { $0 = true }
        }
        try await eventually(fixture.debugState) { fixture.oauth.resetsAwaitingLogoutCount == 1 }
        #expect(!secondDone.value)
        gate.value?.resume()
        try await first.finished()
        try await second.finished()
        #expect(secondDone.value)
        #expect(fixture.server.state.value.revoked.count == 2)  // the refresh and the access token, once
        #expect(fixture.oauth.resetsAwaitingLogoutCount == 0)
        #expect(fixture.oauth.lastFlowPath == [.logOut, .done])
        #expect(!fixture.oauth.isResetting)
        withExtendedLifetime(slowDelegate) {}
    }

    @Test func resetInterruptsALoginEvenIfTheDelegateNeverAnswers() async throws {
        let fixture = Fixture(holdsLogins: true)
        let loads = (0..<5).map { _ in Task { await fixture.load() } }
        try await eventually(fixture.debugState) {
            fixture.delegate.heldLoginCount == 1 && fixture.oauth.waitingCount == 5
        }
        await fixture.oauth.reset()
        for load in loads { #expect(try await load.finished().error?.code == .resetInProgress) }
        #expect(fixture.oauth.lastFlowPath == [.logOut, .done])
        #expect(fixture.server.tokenRequestCount == 0)
        #expect(fixture.delegate.state.value.deletions == 1)
        fixture.delegate.releaseLogins()  // the answer arrives late and is ignored
        #expect(fixture.server.tokenRequestCount == 0)
        #expect(fixture.oauth.situation == .idle)
    }

    @Test func resetInterruptsACodeExchangeWhoseAnswerNeverComes() async throws {
        let fixture = Fixture()
        fixture.server.state.withLock { $0.holdsTokenRequests = true }  // held, ignoring cancellation
        let load = Task { await fixture.load() }
        try await eventually(fixture.debugState) { fixture.server.state.value.tokenGate.count == 1 }
        await fixture.oauth.reset()
        #expect(try await load.finished().error?.code == .resetInProgress)
        #expect(fixture.oauth.lastFlowPath == [.logOut, .done])
        // The token endpoint answers after the logout: nothing is saved, nobody is logged in.
        fixture.server.releaseTokenRequests()
        await fixture.oauth.waitUntilInterruptedOperationsEnd()  // the late answer has arrived, and is ignored
        #expect(fixture.server.tokenRequestCount == 1)
        #expect(fixture.delegate.state.value.saves == 0)
        #expect(fixture.oauth.credentials == nil)
    }

    @Test func resetInterruptsARefresh() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.clock.advance(by: 3_590)
        fixture.server.state.withLock { $0.holdsTokenRequests = true }
        let loads = (0..<3).map { _ in Task { await fixture.load() } }
        try await eventually(fixture.debugState) {
            fixture.server.state.value.tokenGate.count == 1 && fixture.oauth.waitingCount == 3
        }
        await fixture.oauth.reset()
        for load in loads { #expect(try await load.finished().error?.code == .resetInProgress) }
        fixture.server.releaseTokenRequests()
        await fixture.oauth.waitUntilInterruptedOperationsEnd()
        #expect(fixture.delegate.state.value.saves == 1)  // the login's; not the interrupted refresh's
        #expect(fixture.delegate.state.value.saved == nil)
    }

    @Test func aFlowScriptedWithAMockLoader() async throws {
        // The requests a login makes, in order, answered by a MockLoader.
        let login = Box<URL?>(nil)
        let endpoints = OAuthEndpoints(
            issuer: nil,
            authorization: URL(string: "https://id.example.com/authorize")!,
            token: URL(string: "https://id.example.com/token")!
        )
        let delegate = OAuthTestDelegate { url in
            login.withLock { $0 = url }
            return URL(string: "com.example.app:/oauth/callback?code=c0de&state=\(url.queryValue("state")!)")
        }
        let oauth = OAuth(
            configuration: oauthConfiguration(endpoints: .known(endpoints), scopes: ["read"]), delegate: delegate,
            now: TestClock().read)
        let mock = MockLoader()
            .then(status: .ok, body: Data(#"{"access_token":"a1","token_type":"Bearer","expires_in":60}"#.utf8))
            .then(status: .ok, body: Data("hello".utf8))
        let chain = oauth --> mock
        #expect(await chain.load(apiRequest()).response?.status == .ok)
        let sent = mock.receivedRequests
        try #require(sent.count == 2)
        #expect(sent[0].method == .post && sent[0].url?.absoluteString == "https://id.example.com/token")
        let form = try #require(String(data: sent[0].body.encode(), encoding: .utf8))
        #expect(form.contains("grant_type=authorization_code") && form.contains("code=c0de"))
        #expect(sent[1].headers["Authorization"] == "Bearer a1")
        #expect(oauth.lastFlowPath == [.getSavedCredentials, .logIn, .getTokens, .done])
    }

    @Test func requestsArrivingDuringAResetFail() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.server.state.withLock { $0.holdsTokenRequests = true }
        // Revocation posts to the revocation endpoint, not the token endpoint; hold the logout page instead.
        let gate = Box<CheckedContinuation<Void, Never>?>(nil)
        let slowDelegate = SlowLogoutDelegate(gate: gate)
        fixture.oauth.delegate = slowDelegate
        let reset = Task { await fixture.oauth.reset() }
        try await eventually { gate.value != nil }
        let result = await fixture.load()
        #expect(result.error?.code == .resetInProgress)
        gate.value?.resume()
        try await reset.finished()
        fixture.oauth.delegate = fixture.delegate
        fixture.server.releaseTokenRequests()
    }

    @Test func throughAuthTheLogoutStillReachesTheRevocationEndpoint() async throws {
        let clock = TestClock()
        let server = FakeAuthorizationServer(clock: clock)
        let delegate = OAuthTestDelegate(server: server)
        let oauth = OAuth(configuration: oauthConfiguration(), delegate: delegate, now: clock.read)
        let auth = Auth(loaders: [.oauth: oauth])
        let chain = auth --> server
        let result = await chain.load(apiRequest())
        #expect(result.response?.status == .ok, "\(String(describing: result.error))")
        await chain.reset()
        #expect(server.state.value.revoked.count == 2)
        #expect(server.state.value.resets == 1)
    }
}

extension OAuthCancellationAndResetTests {
    /// Credentials saved by an earlier run of the app: nothing is discovered yet when the logout starts, and the
    /// `ResetGuard` below refuses every request of the reset's but those marked as part of it.
    @Test func aLogoutThatMustDiscoverFirstGetsThroughLoadersThatRefuseDuringTheReset() async throws {
        let clock = TestClock()
        let server = FakeAuthorizationServer(clock: clock)
        let delegate = OAuthTestDelegate(server: server)  // held weakly by the loaders
        let earlierRun = OAuth(configuration: oauthConfiguration(), delegate: delegate, now: clock.read)
        earlierRun.nextLoader = server
        _ = try await earlierRun.load(apiRequest()).get()
        let saved = try #require(earlierRun.credentials)
        let discoveriesBefore = server.state.value.discoveryRequests

        let oauth = OAuth(
            configuration: oauthConfiguration(), credentials: saved, delegate: delegate, now: clock.read)
        let chain = Auth(loaders: [.oauth: oauth]) --> ResetGuard() --> server
        await chain.reset()
        #expect(server.state.value.discoveryRequests == discoveriesBefore + 1)
        let refreshToken = try #require(saved.refreshToken)
        #expect(Set(server.state.value.revoked) == [saved.accessToken, refreshToken])
        #expect(oauth.lastFlowPath.contains(.discovery))
        withExtendedLifetime(delegate) {}
    }
}

/// A delegate whose login fails with an error of its own, or throws `CancellationError`.
private final class FailingLoginDelegate: OAuthDelegate {
    struct BrowserUnavailable: Error, Equatable {
        var detail: String
    }

    let error: any Error
    init(_ error: any Error) { self.error = error }
    func logIn(at url: URL, for loader: OAuth) async throws -> URL? { throw error }
}

/// Issue 26, item 3: a login that fails keeps its cause, told apart from a cancelled one.
@Suite(.noHang) struct OAuthLoginFailureTests {
    @Test func aDelegatesLoginErrorReachesTheCallerUnchanged() async throws {
        let clock = TestClock()
        let server = FakeAuthorizationServer(clock: clock)
        let delegate = FailingLoginDelegate(FailingLoginDelegate.BrowserUnavailable(detail: "no default browser"))
        let oauth = OAuth(configuration: oauthConfiguration(), delegate: delegate, now: clock.read)
        let result = await (oauth --> server).load(apiRequest())
        let error = try #require(result.error)
        #expect(error.code == .cannotAuthenticate)
        let reason = try #require(error.underlyingError as? OAuthError)
        #expect(reason.code == .loginFailed)
        #expect(
            (reason.loginError as? FailingLoginDelegate.BrowserUnavailable)
                == FailingLoginDelegate.BrowserUnavailable(detail: "no default browser"))
        #expect(error.message.contains("the login failed"))
        #expect(error.message.contains("no default browser"))
        #expect(reason != .loginCancelled)
        withExtendedLifetime(delegate) {}
    }

    @Test func aCancellationErrorIsACancelledLogin() async throws {
        let clock = TestClock()
        let server = FakeAuthorizationServer(clock: clock)
        let delegate = FailingLoginDelegate(CancellationError())
        let oauth = OAuth(configuration: oauthConfiguration(), delegate: delegate, now: clock.read)
        let result = await (oauth --> server).load(apiRequest())
        #expect(result.error?.underlyingError as? OAuthError == .loginCancelled)
        withExtendedLifetime(delegate) {}
    }
}

/// A delegate whose logout page stays open until the test lets it close.
private final class SlowLogoutDelegate: OAuthDelegate {
    let gate: Box<CheckedContinuation<Void, Never>?>
    init(gate: Box<CheckedContinuation<Void, Never>?>) { self.gate = gate }
    func logIn(at url: URL, for loader: OAuth) async -> URL? { nil }
    func logOut(at url: URL, for loader: OAuth) async {
        await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
    }
}

/// Issue 14's promises: what a refresh, a 401 and a reset leave behind.
@Suite(.noHang) struct OAuthRefreshPromisesTests {
    @Test func aFailedRefreshAfterA401KeepsThe401AndItsChallenge() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.server.revokeAccessTokens()
        fixture.server.state.withLock { $0.tokenEndpointStatus = .internalServerError }
        let result = await fixture.load()
        #expect(result.error?.code == .cannotAuthenticate)
        #expect(result.error?.response?.status == .unauthorized)
        #expect(result.error?.response?[header: "WWW-Authenticate"] == "Bearer error=\"invalid_token\"")
        #expect(result.error?.description.contains("(HTTP 401") == true)
    }

    /// Issue 26: with access tokens of a few seconds and steady traffic, every refresh is ahead of expiry and
    /// healthy; the refresh-loop guard must never count them, at any request rate, over several minutes.
    @Test(arguments: [1.0, 2.0, 5.0], [0.2, 1.0, 4.0])
    func shortLivedTokensUnderSteadyTrafficNeverTripTheLoopGuard(lifetime: Double, interval: Double) async throws {
        let fixture = Fixture()
        fixture.server.state.withLock { $0.lifetime = lifetime }
        try await fixture.logIn()
        var failures: [String] = []
        for step in 0..<Int(240 / interval) {  // four minutes of the test's clock
            fixture.clock.advance(by: interval)
            let result = await fixture.load()
            if result.response?.status != .ok { failures.append("at \(step): \(result)") }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(fixture.server.tokenRequestCount > 10, "tokens of \(lifetime) s were not refreshed")
    }

    /// The real loop still stops: a server that rejects every new token, with short-lived tokens.
    @Test func aServerRejectingEveryNewShortLivedTokenIsStillStopped() async throws {
        let fixture = Fixture(
            configuration: oauthConfiguration(refreshLimit: .init(maximumRefreshes: 3, window: .seconds(60))))
        fixture.server.state.withLock { $0.lifetime = 2 }
        try await fixture.logIn()
        fixture.server.state.withLock { $0.rejectsEveryToken = true }
        var tripped: HTTPResult?
        for _ in 0..<20 {
            fixture.clock.advance(by: 0.5)
            let result = await fixture.load()
            if fixture.oauthError(result)?.code == .refreshLoop {
                tripped = result
                break
            }
        }
        let result = try #require(tripped, "the loop was never stopped")
        #expect(fixture.oauthError(result) == .refreshLoop(refreshes: 3, window: .seconds(60)))
        #expect(result.error?.message.contains("each new token was rejected by the server") == true)
        #expect(result.error?.response?.status == .unauthorized)
        #expect(fixture.server.tokenRequestCount <= 1 + 4)
    }

    @Test func theRefreshLoopGuardKeepsThe401() async throws {
        let fixture = Fixture(
            configuration: oauthConfiguration(refreshLimit: .init(maximumRefreshes: 1, window: .seconds(60))))
        try await fixture.logIn()
        fixture.server.state.withLock { $0.rejectsEveryToken = true }
        #expect(await fixture.load().response?.status == .unauthorized)  // refresh 1, replay refused
        let tripped = await fixture.load()
        #expect(fixture.oauthError(tripped) == .refreshLoop(refreshes: 1, window: .seconds(60)))
        #expect(tripped.error?.response?.status == .unauthorized)
    }

    @Test func aResetAfterA401KeepsThe401() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.server.revokeAccessTokens()
        fixture.server.state.withLock { $0.holdsResourcePaths = ["/slow"] }
        let load = Task { await fixture.load(apiRequest("/slow")) }
        try await eventually(fixture.debugState) { fixture.server.state.value.heldResources["/slow"] != nil }
        let done = Box(false)
        let reset = Task {
            await fixture.oauth.reset()
            done.withLock { $0 = true }
        }
        try await eventually(fixture.debugState) { fixture.oauth.isResetting }
        #expect(!done.value, "the reset did not wait for the request in flight")
        fixture.server.releaseResource("/slow")
        let result = try await load.finished()
        try await reset.finished()
        #expect(result.error?.code == .resetInProgress)
        #expect(result.error?.response?.status == .unauthorized)
    }

    @Test func aRequestArrivingDuringARefreshThatA401StartedWaitsForIt() async throws {
        let fixture = Fixture()
        try await fixture.logIn()
        fixture.server.revokeAccessTokens()
        fixture.server.state.withLock { $0.holdsTokenRequests = true }
        let first = Task { await fixture.load(apiRequest("/a")) }
        // The login, then the refresh (held).
        try await eventually(fixture.debugState) { fixture.server.tokenRequestCount == 2 }
        let second = Task { await fixture.load(apiRequest("/b")) }
        try await eventually(fixture.debugState) { fixture.oauth.waitingCount == 2 }
        #expect(!fixture.server.resourceRequests.contains { $0.path == "/b" }, "sent with the rejected token")
        #expect(fixture.oauth.situation == .authorizing)
        fixture.server.releaseTokenRequests()
        #expect(try await first.finished().response?.status == .ok)
        #expect(try await second.finished().response?.status == .ok)
        let sentB = fixture.server.resourceRequests.filter { $0.path == "/b" }
        #expect(sentB.count == 1)
        #expect(
            sentB.first?.headers["Authorization"] != fixture.server.resourceRequests.first?.headers["Authorization"])
        #expect(fixture.server.tokenRequestCount == 2)
    }

    @Test func aRefreshedTokenThatIsDeadOnArrivalIsNeverSent() async throws {
        let fixture = Fixture(
            configuration: oauthConfiguration(refreshLimit: .init(maximumRefreshes: 3, window: .seconds(60))))
        try await fixture.logIn()
        let sentBefore = fixture.server.resourceRequests.count
        fixture.server.state.withLock { $0.lifetime = 0 }  // every new token expires as it is issued
        fixture.clock.advance(by: 3_600)
        let waiting = (0..<5).map { _ in Task { await fixture.load() } }
        for load in waiting {
            let result = try await load.finished()
            #expect(fixture.oauthError(result) == .refreshLoop(refreshes: 3, window: .seconds(60)), "\(result)")
        }
        #expect(fixture.server.resourceRequests.count == sentBefore, "a dead token went out")
        #expect(fixture.server.tokenRequestCount == 1 + 3)
    }

    @Test func setNeedsTokenRefreshRefreshesBeforeTheNextRequest() async throws {
        let fixture = Fixture()
        fixture.oauth.setNeedsTokenRefresh()  // without credentials: nothing to do
        try await fixture.logIn()
        let before = fixture.oauth.credentials?.accessToken
        #expect(fixture.oauth.situation == .authorized)
        fixture.oauth.setNeedsTokenRefresh()
        #expect(fixture.oauth.situation == .needsRefresh)
        #expect(await fixture.load().response?.status == .ok)
        #expect(fixture.server.tokenRequestCount == 2)
        #expect(fixture.server.tokenRequests.last.map { fixture.server.form($0)["grant_type"] } == "refresh_token")
        #expect(fixture.oauth.credentials?.accessToken != before)
        #expect(
            fixture.server.resourceRequests.last?.headers["Authorization"]
                == "Bearer \(fixture.oauth.credentials!.accessToken)")
        #expect(fixture.oauth.situation == .authorized)
    }
}

/// A token response's `Date` header sets the server's clock against this device's.
@Suite(.noHang) struct OAuthClockSkewTests {
    private static let tokenJSON = Data(#"{"access_token":"t","token_type":"Bearer","expires_in":3600}"#.utf8)

    @Test func expiryIsInTheServersClockAndComparedThroughTheOffset() throws {
        let device = Date(timeIntervalSince1970: 1_800_000_000)
        let server = device.addingTimeInterval(-600)  // this device runs ten minutes ahead
        let credentials = try OAuthCredentials(tokenResponse: Self.tokenJSON, receivedAt: device, serverDate: server)
        #expect(credentials.serverClockOffset == -600)
        #expect(credentials.issuedAt == server)
        #expect(credentials.expirationDate == server.addingTimeInterval(3_600))
        #expect(credentials.lifetime == .seconds(3_600))
        // The token lasts an hour from its arrival by either clock.
        #expect(!credentials.expires(within: .seconds(60), at: device.addingTimeInterval(3_539)))
        #expect(credentials.expires(within: .seconds(60), at: device.addingTimeInterval(3_541)))
        #expect(credentials.serverTime(at: device) == server)
    }

    @Test func withoutADateTheDevicesClockIsUsed() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let credentials = try OAuthCredentials(tokenResponse: Self.tokenJSON, receivedAt: now)
        #expect(credentials.serverClockOffset == nil)
        #expect(credentials.expirationDate == now.addingTimeInterval(3_600))
    }

    @Test func theLoaderRefreshesOnTheServersScheduleWhateverTheDeviceClockSays() async throws {
        let clock = TestClock()
        let serverNow = clock.now.addingTimeInterval(-7 * 24 * 3_600)  // the device's clock is a week ahead
        let mock = MockLoader()
            .then { request in
                .success(
                    HTTPResponse(
                        request: request, status: .ok,
                        headers: ["Date": Self.httpDate(serverNow)], body: Self.tokenJSON))
            }
            .then(status: .ok)
        var configuration = oauthConfiguration(
            endpoints: .known(
                OAuthEndpoints(
                    authorization: URL(string: "https://id.example.com/authorize")!,
                    token: URL(string: "https://id.example.com/token")!)))
        configuration.scopes = []
        let expired = OAuthCredentials(
            accessToken: "old", refreshToken: "r", expirationDate: clock.now.addingTimeInterval(-1))
        let oauth = OAuth(configuration: configuration, credentials: expired, now: clock.read)
        let chain = oauth --> mock
        #expect(await chain.load(apiRequest()).response?.status == .ok)
        let refreshed = try #require(oauth.credentials)
        #expect(refreshed.expirationDate == serverNow.addingTimeInterval(3_600))
        #expect(abs((refreshed.serverClockOffset ?? 0) + 7 * 24 * 3_600) < 1)
        #expect(oauth.situation == .authorized)
        clock.advance(by: 3_539)
        #expect(oauth.situation == .authorized)
        clock.advance(by: 2)
        #expect(oauth.situation == .needsRefresh)
    }

    private static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

/// A loader registered in `Auth` under a method of the app's own authenticates that method's requests.
@Suite(.noHang) struct AuthRegistrationTests {
    @Test func anOAuthLoaderUnderAnotherMethodSendsItsToken() async {
        let mock = MockLoader().then(status: .ok)
        let oauth = OAuth(configuration: oauthConfiguration(), credentials: OAuthCredentials(accessToken: "t0k"))
        let chain = Auth(loaders: [.partner: oauth]) --> mock
        var request = HTTPRequest(host: "api.example.com")
        request.authenticationMethod = .partner
        #expect(await chain.load(request).response?.status == .ok)
        #expect(mock.receivedRequests.first?.headers["Authorization"] == "Bearer t0k")
    }

    @Test func aBasicAuthLoaderUnderAnotherMethodSendsItsCredentials() async {
        let mock = MockLoader().then(status: .ok)
        let chain = Auth(loaders: [.partner: BasicAuth(origins: ["api.example.com"], credentials: ann)]) --> mock
        var request = HTTPRequest(host: "api.example.com")
        request.authenticationMethod = .partner
        #expect(await chain.load(request).response?.status == .ok)
        #expect(mock.receivedRequests.first?.headers["Authorization"] == ann.authorizationHeaderValue)
    }
}

extension AuthenticationMethod {
    fileprivate static let partner = AuthenticationMethod(rawValue: "partner")
}

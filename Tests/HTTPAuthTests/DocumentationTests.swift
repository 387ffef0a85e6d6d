import Foundation
import HTTP
import HTTPAuth
import HTTPTestSupport
import Testing

// Every `swift` block of Sources/HTTPAuth/HTTPAuth.docc/Authentication.md is in this file, and
// `DocumentationTests.samplesMatchTheArticle` fails when one is not.

// Authentication.md, "Mark the requests that need credentials".
func reportsRequest() -> HTTPRequest {
    var request = HTTPRequest(path: "/reports")
    request.authenticationMethod = .basic
    return request
}

// Authentication.md, "Provide credentials".
final class LoginController: BasicAuthDelegate {
    func credentials(for loader: BasicAuth) async -> BasicCredentials? {
        // Show a login screen, read the Keychain…; nil fails the waiting requests with .cannotAuthenticate.
        BasicCredentials(username: "ann", password: "s3cret")
    }
}

// Authentication.md, "Assemble the chain". Builds a URLSessionLoader, never loads through it.
func makeAuthenticatedChain(login: LoginController) -> HTTPLoader {
    ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
        --> Auth(loaders: [.basic: BasicAuth(origins: ["api.example.com"], delegate: login)])
        --> Retry()
        --> URLSessionLoader()
}

// Authentication.md, "Log in with OAuth 2 and OpenID Connect".
func makeOAuthConfiguration() -> OAuthConfiguration {
    OAuthConfiguration(
        issuer: URL(string: "https://id.example.com")!,
        clientID: "my-app",
        redirectURI: URL(string: "com.example.app:/oauth/callback")!,
        scopes: ["openid", "profile", "offline_access"],
        resourceOrigins: ["api.example.com"]
    )
}

final class SessionController: OAuthDelegate {
    let store: any CredentialStore
    let browser: @Sendable (URL) async -> URL?

    init(store: any CredentialStore, browser: @escaping @Sendable (URL) async -> URL?) {
        self.store = store
        self.browser = browser
    }

    func savedCredentials(for loader: OAuth) async throws -> OAuthCredentials? {
        try await store.load(OAuthCredentials.self, for: "session")
    }

    func save(_ credentials: OAuthCredentials, for loader: OAuth) async throws {
        try await store.save(credentials, for: "session")
    }

    func deleteCredentials(for loader: OAuth) async throws {
        try await store.delete(for: "session")
    }

    func logIn(at url: URL, for loader: OAuth) async -> URL? {
        // ASWebAuthenticationSession on Apple platforms; nil when the user closes it.
        await browser(url)
    }

    func logOut(at url: URL, for loader: OAuth) async {
        _ = await browser(url)
    }
}

// Builds a URLSessionLoader, never loads through it.
func makeProductionChain(session: SessionController, login: LoginController) -> HTTPLoader {
    ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
        --> Auth(loaders: [
            .basic: BasicAuth(origins: ["legacy.example.com"], delegate: login),
            .oauth: OAuth(configuration: makeOAuthConfiguration(), delegate: session),
        ])
        --> Retry()
        --> Throttle(maximumNumberOfRequests: 6)
        --> URLSessionLoader()
}

// Authentication.md, "A server calling an API on its own behalf". Builds a URLSessionLoader, never loads through it.
func makeWorkerChain(secret: String) -> HTTPLoader {
    let grant = ClientCredentialsGrant(
        tokenEndpoint: URL(string: "https://id.example.com/oauth2/token")!,
        clientID: "reports-worker",
        clientSecret: secret,
        scopes: ["reports.read"]
    )
    return ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
        --> Auth(loaders: [.oauth: CredentialLoader(scheme: grant, method: .oauth, origins: ["api.example.com"])])
        --> Retry()
        --> URLSessionLoader()
}

// Authentication.md, "Sign in on a TV or in a terminal". Builds a URLSessionLoader, never loads through it.
final class TerminalCodeScreen: DeviceAuthorizationDelegate {
    func showUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {
        print("To sign in, open \(authorization.verificationURI) and enter \(authorization.userCode)")
    }
}

func makeTVChain(screen: TerminalCodeScreen) -> HTTPLoader {
    let grant = DeviceAuthorizationGrant(
        deviceAuthorizationEndpoint: URL(string: "https://id.example.com/oauth2/device")!,
        tokenEndpoint: URL(string: "https://id.example.com/oauth2/token")!,
        clientID: "tv-app",
        scopes: ["videos.read", "offline_access"],
        revocationEndpoint: URL(string: "https://id.example.com/oauth2/revoke")!,
        delegate: screen
    )
    return ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
        --> Auth(loaders: [.oauth: CredentialLoader(scheme: grant, method: .oauth, origins: ["api.example.com"])])
        --> Retry()
        --> URLSessionLoader()
}

// Authentication.md, "Watch the session".
func watchSession(of oauth: OAuth) async {
    for await state in oauth.sessionStates() {
        switch state {
        case .loggedIn, .refreshed: print("signed in")
        case .loggedOut(let reason?): print("signed out: \(reason)")
        case .loggedOut(nil): print("signed out")
        }
    }
}

// Authentication.md, "Test it with a mock" (OAuth).
@Test func sendsTheBearerToken() async {
    let mock = MockLoader().then(status: .ok)
    let credentials = OAuthCredentials(accessToken: "t0k3n", expirationDate: .distantFuture)
    let chain = OAuth(configuration: makeOAuthConfiguration(), credentials: credentials) --> mock
    var request = HTTPRequest(host: "api.example.com", path: "/me")
    request.authenticationMethod = .oauth
    _ = await chain.load(request)
    #expect(mock.receivedRequests.first?.headers["Authorization"] == "Bearer t0k3n")
}

// Authentication.md, "Test it with a mock".
@Test func sendsTheCredentialsOnce() async {
    let mock = MockLoader().then(status: .ok)
    let chain =
        BasicAuth(origins: ["api.example.com"], credentials: BasicCredentials(username: "ann", password: "pw"))
        --> mock
    var request = HTTPRequest(host: "api.example.com", path: "/reports")
    request.authenticationMethod = .basic
    _ = await chain.load(request)
    #expect(mock.receivedRequests.first?.headers["Authorization"] == "Basic YW5uOnB3")
}

@Suite(.noHang) struct DocumentationTests {
    @Test func theMarkedRequestIsAuthenticatedWithTheDelegatesCredentials() async {
        let login = LoginController()
        let mock = MockLoader().then(status: .ok)
        let chain =
            ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
            --> Auth(loaders: [.basic: BasicAuth(origins: ["api.example.com"], delegate: login)])
            --> mock
        _ = await chain.load(reportsRequest())
        let expected = BasicCredentials(username: "ann", password: "s3cret").authorizationHeaderValue
        #expect(mock.receivedRequests.first?.headers["Authorization"] == expected)
        withExtendedLifetime(login) {}
    }

    @Test func theChainIsAssembledAsDescribed() {
        let login = LoginController()
        let chain = makeAuthenticatedChain(login: login)
        #expect(chain.nextLoader is Auth)
        #expect(chain.nextLoader?.nextLoader is Retry)
    }

    @Test func theSessionControllerLogsInStoresAndLogsOut() async throws {
        let clock = TestClock()
        let server = FakeAuthorizationServer(clock: clock)
        let store = InMemoryCredentialStore()
        let pages = Box([URL]())
        let session = SessionController(store: store) { url in
            pages.withLock { $0.append(url) }
            return url.path == "/authorize" ? server.signIn(at: url) : nil
        }
        let oauth = OAuth(configuration: makeOAuthConfiguration(), delegate: session, now: clock.read)
        let chain = oauth --> server
        let watcher = Task { await watchSession(of: oauth) }
        var request = HTTPRequest(host: "api.example.com", path: "/me")
        request.authenticationMethod = .oauth
        #expect(await chain.load(request).response?.status == .ok)
        #expect(try await store.load(OAuthCredentials.self, for: "session") == oauth.credentials)
        await chain.reset()
        #expect(try await store.load(OAuthCredentials.self, for: "session") == nil)
        #expect(pages.value.map(\.path) == ["/authorize", "/logout"])
        watcher.cancel()
        withExtendedLifetime(session) {}
    }

    @Test func theWorkerChainAuthenticatesWithTheClientCredentialsGrant() throws {
        let auth = try #require(makeWorkerChain(secret: "s").nextLoader as? Auth)
        let loader = try #require(auth.loaders[.oauth] as? CredentialLoader<ClientCredentialsGrant>)
        #expect(loader.scheme.scopes == ["reports.read"] && loader.origins == ["api.example.com"])
    }

    @Test func theTVChainSignsInWithTheDeviceGrantAndItsScreen() async throws {
        let screen = TerminalCodeScreen()
        let auth = try #require(makeTVChain(screen: screen).nextLoader as? Auth)
        let loader = try #require(auth.loaders[.oauth] as? CredentialLoader<DeviceAuthorizationGrant>)
        #expect(loader.scheme.delegate === screen && loader.scheme.scopes == ["videos.read", "offline_access"])
        #expect(loader.scheme.revocationEndpoint != nil && loader.origins == ["api.example.com"])
        // The grant, moved onto a mock server, shows the code through the sample's screen and gets its tokens.
        let code =
            #"{"device_code":"d","user_code":"C0DE","verification_uri":"https://id.example.com/d","#
            + #""expires_in":600}"#
        let server = MockLoader()
            .then(status: .ok, body: Data(code.utf8))
            .then(status: .ok, body: Data(#"{"access_token":"t","token_type":"Bearer","expires_in":3600}"#.utf8))
            .then(status: .ok)
        let clock = DevicePollingClock(movesOnSleep: true)
        let grant = DeviceAuthorizationGrant(
            deviceAuthorizationEndpoint: loader.scheme.deviceAuthorizationEndpoint,
            tokenEndpoint: loader.scheme.tokenEndpoint, clientID: "tv-app", delegate: screen, clock: clock)
        let chain = CredentialLoader(scheme: grant, method: .oauth, origins: ["api.example.com"]) --> server
        var request = HTTPRequest(host: "api.example.com", path: "/videos")
        request.authenticationMethod = .oauth
        #expect(await chain.load(request).response?.status == .ok)
        #expect(server.receivedRequests.last?.headers["Authorization"] == "Bearer t")
        #expect(clock.requestedDurations == [.seconds(5)], "no interval: RFC 8628's 5 s")
    }

    @Test func theProductionChainHasBothMethods() throws {
        let session = SessionController(store: InMemoryCredentialStore()) { _ in nil }
        let login = LoginController()
        let chain = makeProductionChain(session: session, login: login)
        let auth = try #require(chain.nextLoader as? Auth)
        #expect(auth.loaders[.oauth] is OAuth && auth.loaders[.basic] is BasicAuth)
        #expect(auth.nextLoader is Retry)
        withExtendedLifetime((session, login)) {}
    }

    @Test(arguments: ["HTTPAuth.md", "Authentication.md"])
    func samplesMatchTheArticle(article: String) throws {
        let catalog = DocumentationSamples.catalog(of: "HTTPAuth", fromTestFile: #filePath)
        let missing = try DocumentationSamples.samplesMissing(
            from: #filePath, article: catalog.appendingPathComponent(article))
        #expect(missing.isEmpty, "\(article): samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

// Authentication.md, "Log out": the delegate hears what the logout did.
actor Notice {
    private(set) var shown: [String] = []
    func show(_ text: String) { shown.append(text) }
}

final class SignOutNotifier: OAuthDelegate {
    let notice = Notice()

    func logIn(at url: URL, for loader: OAuth) async throws -> URL? { nil }

    func didLogOut(_ logout: OAuthLogout, for loader: OAuth) async {
        if !logout.isSignedOutAtServer { await notice.show("Signed out on this device only") }
    }
}

/// A provider without a revocation endpoint: the logout says the tokens stay valid at the server.
@Test func theLogoutSampleTellsTheUserWhenTheTokensStayValidAtTheServer() async {
    let endpoints = OAuthEndpoints(
        authorization: URL(string: "https://id.example.com/authorize")!,
        token: URL(string: "https://id.example.com/token")!)
    let configuration = OAuthConfiguration(
        endpoints: .known(endpoints), clientID: "my-app", redirectURI: URL(string: "com.example.app:/cb")!,
        resourceOrigins: ["api.example.com"])
    let notifier = SignOutNotifier()
    let oauth = OAuth(
        configuration: configuration, credentials: OAuthCredentials(accessToken: "a1"), delegate: notifier)
    let chain = oauth --> MockLoader()
    await chain.reset()
    #expect(await notifier.notice.shown == ["Signed out on this device only"])
    #expect(oauth.lastLogout?.revocation == .unsupported && oauth.lastLogout?.deletedSavedCredentials == true)
}

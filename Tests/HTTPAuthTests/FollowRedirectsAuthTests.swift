import Foundation
import HTTP
import HTTPAuth
import Testing

/// `FollowRedirects` above the authentication loaders: each hop is authenticated for its own origin.
@Suite(.noHang) struct FollowRedirectsAuthTests {
    private static func hop(_ location: String) -> MockLoader.Handler {
        { request in .success(HTTPResponse(request: request, status: .found, headers: ["Location": location])) }
    }

    @Test func basicAuthAppliesItsCredentialsToEachHopOfItsOriginsAndNoneElsewhere() async throws {
        let mock = MockLoader()
            .then(Self.hop("/next"))
            .then(Self.hop("https://cdn.example.net/file"))
            .then(Self.hop("https://api.example.com/last"))
            .then(status: .ok)
        let chain =
            FollowRedirects() --> Auth(loaders: [.basic: BasicAuth(origins: ["api.example.com"], credentials: ann)])
            --> mock

        let response = try await chain.load(basicRequest("/start")).get()

        #expect(response.status == .ok)
        #expect(response.redirects.count == 3)
        #expect(
            mock.receivedRequests.map { "\($0.host ?? "")\($0.path) \($0.headers["Authorization"] ?? "-")" } == [
                "api.example.com/start \(ann.authorizationHeaderValue)",
                "api.example.com/next \(ann.authorizationHeaderValue)",
                "cdn.example.net/file -",
                "api.example.com/last \(ann.authorizationHeaderValue)",
            ])
    }

    @Test func aRequestsOwnCredentialsStayWithTheOriginItAskedFor() async throws {
        let mock = MockLoader()
            .then(Self.hop("/same-origin"))
            .then(Self.hop("https://elsewhere.example.net/x"))
            .then(status: .ok)
        let chain = FollowRedirects() --> BasicAuth(origins: ["api.example.com"]) --> mock
        var request = HTTPRequest(host: "api.example.com", path: "/start")
        request.basicCredentials = bob

        _ = try await chain.load(request).get()

        #expect(
            mock.receivedRequests.map { $0.headers["Authorization"] } == [
                bob.authorizationHeaderValue, bob.authorizationHeaderValue, nil,
            ])
    }

    @Test func oauthSendsItsTokenOnlyToResourceOrigins() async throws {
        let configuration = OAuthConfiguration(
            endpoints: .known(
                OAuthEndpoints(
                    authorization: URL(string: "https://id.example.com/authorize")!,
                    token: URL(string: "https://id.example.com/token")!)),
            clientID: "app", redirectURI: URL(string: "com.example.app:/cb")!, scopes: [],
            resourceOrigins: ["api.example.com", "files.example.com"])
        let oauth = OAuth(configuration: configuration, credentials: OAuthCredentials(accessToken: "t0ken"))
        let mock = MockLoader()
            .then(Self.hop("https://files.example.com/42"))
            .then(Self.hop("https://s3.example.net/bucket/42?signature=abc"))
            .then(status: .ok)
        let chain = FollowRedirects() --> oauth --> mock
        var request = HTTPRequest(host: "api.example.com", path: "/files/42")
        request.authenticationMethod = .oauth

        let response = try await chain.load(request).get()

        #expect(response.status == .ok)
        #expect(mock.receivedRequests.map { $0.headers["Authorization"] } == ["Bearer t0ken", "Bearer t0ken", nil])
    }

    @Test func withoutARedirectAForeignOriginIsStillRefused() async {
        let mock = MockLoader().then(status: .ok)
        let chain = FollowRedirects() --> BasicAuth(origins: ["api.example.com"], credentials: ann) --> mock
        let foreign = await chain.load(basicRequest(host: "evil.example.net"))
        #expect(foreign.error?.code == .cannotAuthenticate)
        #expect(mock.receivedRequests.isEmpty)
    }
}

@Suite(.noHang, .enabled(if: httpbinURL != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct FollowRedirectsAuthIntegrationTests {
    let base = httpbinURL!

    @Test func aRedirectToAProtectedPageIsAuthenticated() async throws {
        let basic = BasicAuth(
            origins: [try #require(Origin(base))], credentials: BasicCredentials(username: "user", password: "passwd"))
        let chain = FollowRedirects() --> basic --> URLSessionLoader()
        var request = HTTPRequest(url: base.appendingPathComponent("redirect-to"))
        request.query = [URLQueryItem(name: "url", value: "/basic-auth/user/passwd")]
        request.authenticationMethod = .basic

        let response = try await chain.load(request).get()

        #expect(response.status == .ok)
        #expect(response.redirects.count == 1)
        let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect(json?["authenticated"] as? Bool == true)
    }

    @Test func aRedirectToAnotherOriginGoesWithoutCredentials() async throws {
        // localhost and 127.0.0.1 are two origins of the same server; the credentials belong to localhost.
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.host = "localhost"
        let localhost = try #require(components.url)
        let basic = BasicAuth(
            origins: [try #require(Origin(localhost))], credentials: BasicCredentials(username: "user", password: "x"))
        let chain = FollowRedirects() --> basic --> URLSessionLoader()
        var request = HTTPRequest(url: localhost.appendingPathComponent("redirect-to"))
        request.query = [URLQueryItem(name: "url", value: base.appendingPathComponent("headers").absoluteString)]
        request.authenticationMethod = .basic

        let response = try await chain.load(request).get()

        #expect(response.status == .ok)
        #expect(response.url?.host == base.host)
        let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect((json?["headers"] as? [String: String])?["Authorization"] == nil)
        #expect(response.redirects.first?.url?.host == "localhost")
    }
}

import Foundation
import HTTP
import Testing

@testable import HTTPAuth

/// Credentials belong to origins — scheme, host and port — and never travel over plain http except to
/// loopback or an http origin the app lists itself (RFC 6750 §5.3, RFC 7617 §4).
@Suite(.noHang) struct CredentialOriginsTests {
    private func request(_ url: String, method: AuthenticationMethod = .basic) -> HTTPRequest {
        var request = HTTPRequest(url: URL(string: url)!)
        request.authenticationMethod = method
        return request
    }

    @Test func aHostNameMeansHTTPSOnPort443ForBasicAuth() async {
        let mock = MockLoader()
        for _ in 0..<4 { mock.then(status: .ok) }
        let chain = BasicAuth(origins: ["api.example.com"], credentials: ann) --> mock
        #expect(await chain.load(request("https://API.example.com/a")).response?.status == .ok)
        #expect(await chain.load(request("https://api.example.com:443/b")).response?.status == .ok)
        for url in ["http://api.example.com/c", "https://api.example.com:8443/d", "http://api.example.com:443/e"] {
            let error = await chain.load(request(url)).error
            #expect(error?.code == .cannotAuthenticate, "\(url)")
            #expect(error?.message.contains("https://api.example.com") == true)
            #expect(error?.message.contains("bound to scheme, host and port") == true)
        }
        #expect(mock.receivedRequests.map(\.path) == ["/a", "/b"])
    }

    @Test func anHTTPOriginListedExplicitlyGetsTheCredentials() async {
        let mock = MockLoader().then(status: .ok).then(status: .ok)
        let chain = BasicAuth(origins: ["http://intranet.example:8080"], credentials: ann) --> mock
        #expect(await chain.load(request("http://intranet.example:8080/x")).response?.status == .ok)
        #expect(mock.receivedRequests.first?.headers["Authorization"] == ann.authorizationHeaderValue)
        #expect(await chain.load(request("http://intranet.example/x")).error?.code == .cannotAuthenticate)
        #expect(await chain.load(request("https://intranet.example:8080/x")).error?.code == .cannotAuthenticate)
    }

    @Test func aRequestsOwnCredentialsNeverGoOverPlainHTTPExceptToLoopback() async {
        let mock = MockLoader()
        for _ in 0..<5 { mock.then(status: .ok) }
        let chain = BasicAuth(origins: ["http://listed.example"]) --> mock
        func withOwn(_ url: String) -> HTTPRequest {
            var request = HTTPRequest(url: URL(string: url)!)
            request.basicCredentials = bob
            return request
        }
        for url in [
            "https://anywhere.example/1", "http://localhost:8080/2", "http://127.0.0.1/3", "http://[::1]:9/4",
            "http://listed.example/5",
        ] {
            #expect(await chain.load(withOwn(url)).response?.status == .ok, "\(url)")
        }
        let refused = await chain.load(withOwn("http://elsewhere.example/6")).error
        #expect(refused?.code == .cannotAuthenticate)
        #expect(refused?.message.contains("plain http") == true)
        #expect(mock.receivedRequests.count == 5)
        #expect(mock.receivedRequests.allSatisfy { $0.headers["Authorization"] == bob.authorizationHeaderValue })
    }

    @Test func oauthTokensGoOnlyToTheirOrigins() async throws {
        let mock = MockLoader()
        for _ in 0..<3 { mock.then(status: .ok) }
        var configuration = oauthConfiguration()
        configuration.resourceOrigins = ["api.example.com", "http://localhost:8080"]
        let token = OAuthCredentials(accessToken: "t0k3n")
        let chain = OAuth(configuration: configuration, credentials: token) --> mock
        for url in ["https://api.example.com/a", "https://api.example.com:443/b", "http://localhost:8080/c"] {
            #expect(await chain.load(request(url, method: .oauth)).response?.status == .ok, "\(url)")
        }
        for url in ["http://api.example.com/d", "https://api.example.com:8443/e", "http://localhost:8081/f"] {
            let error = await chain.load(request(url, method: .oauth)).error
            #expect(error?.code == .cannotAuthenticate, "\(url)")
            #expect(error?.message.contains("OAuth's tokens belong to") == true)
            #expect(error?.message.contains("t0k3n") == false)
        }
        #expect(mock.receivedRequests.map(\.path) == ["/a", "/b", "/c"])
        #expect(mock.receivedRequests.allSatisfy { $0.headers["Authorization"] == "Bearer t0k3n" })
    }

    /// Deprecated, and still read as it was: a deprecated context, so that calling it is no warning.
    @available(*, deprecated)
    @Test func resourceHostsStillReadAsHTTPSOrigins() {
        var configuration = oauthConfiguration()
        #expect(configuration.resourceOrigins == [Origin(host: "api.example.com")])
        configuration.resourceHosts = ["a.example", "http://127.0.0.1:5000"]
        #expect(
            configuration.resourceOrigins == [
                Origin(host: "a.example"), Origin(scheme: "http", host: "127.0.0.1", port: 5000),
            ])
    }

    /// Random origins and random requests: credentials go out exactly when the request's origin is a listed one.
    @Test func randomOriginsAndRequestsAgreeWithOriginEquality() async {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let schemes = ["http", "https", "HTTPS", "Http"]
        let hosts = [
            "api.example.com", "API.example.COM", "api.example.com.", "b\u{FC}cher.example",
            "xn--bcher-kva.example", "127.0.0.1", "localhost", "[::1]", "other.example",
        ]
        let ports: [Int?] = [nil, 80, 443, 8080]
        func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        for _ in 0..<300 {
            let listed = Set(
                (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    Origin(scheme: pick(schemes), host: pick(hosts), port: pick(ports))
                })
            let mock = MockLoader()
            let chain = BasicAuth(origins: listed, credentials: ann) --> mock
            for _ in 0..<10 {
                mock.then(status: .ok)
                var request = HTTPRequest(scheme: pick(schemes), host: pick(hosts), port: pick(ports))
                request.authenticationMethod = .basic
                let expected = listed.contains(request.origin!)
                let result = await chain.load(request)
                #expect(
                    (result.response != nil) == expected,
                    "seed \(seed): \(request) with origins \(listed.map(\.description).sorted())")
            }
        }
    }
}

@Suite(.noHang) struct BasicCredentialsValidationTests {
    @Test(arguments: [
        (BasicCredentials(username: "a:b", password: "Sekr1t"), "':'"),
        (BasicCredentials(username: ":", password: "Sekr2t"), "':'"),
        (BasicCredentials(username: "ann\n", password: "x"), "U+000A"),
        (BasicCredentials(username: "ann", password: "pa\rss"), "U+000D"),
        (BasicCredentials(username: "ann", password: "Sekr3t\u{0}"), "U+0000"),
        (BasicCredentials(username: "ann", password: "p\u{85}"), "U+0085"),
    ])
    func invalidCredentialsAreRefusedBeforeAnythingIsSent(credentials: BasicCredentials, named: String) async {
        #expect(credentials.invalidityReason?.contains(named) == true)
        #expect(credentials.invalidityReason?.contains(credentials.password) == false)

        let mock = MockLoader().then(status: .ok).then(status: .ok)
        var own = basicRequest()
        own.basicCredentials = credentials
        let ownError = await (BasicAuth(origins: ["api.example.com"]) --> mock).load(own).error
        #expect(ownError?.code == .invalidRequest)
        #expect(ownError?.message.contains("RFC 7617") == true)

        let delegate = ScriptedDelegate(answers: [credentials])
        let loaderError = await (BasicAuth(origins: ["api.example.com"], delegate: delegate) --> mock).load(
            basicRequest()
        )
        .error
        #expect(loaderError?.code == .cannotAuthenticate)
        #expect(loaderError?.message.contains(named) == true)
        #expect(mock.receivedRequests.isEmpty)
    }

    @Test func colonsInThePasswordAndNonASCIITextAreFine() {
        #expect(BasicCredentials(username: "ann", password: "a:b:c").invalidityReason == nil)
        #expect(BasicCredentials(username: "Zoë", password: "пароль 🎉").invalidityReason == nil)
        #expect(BasicCredentials(username: "", password: "").invalidityReason == nil)
    }
}

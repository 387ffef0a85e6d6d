import Foundation
import HTTP
import HTTPAuth
import Testing

/// A pass-through sub-loader that marks requests and counts its resets.
private final class Marker: HTTPLoader, @unchecked Sendable {
    let name: String
    let resets = Box(0)
    init(_ name: String) { self.name = name }
    override func load(_ request: HTTPRequest) async -> HTTPResult {
        var copy = request
        copy.headers["X-Auth"] = name
        return await super.load(copy)
    }
    override func forgetState() async {
        resets.withLock { $0 += 1 }
    }
}

// `.apiKey` is CustomCredentialSchemes.md's, in CustomCredentialSchemeSamples.swift.

@Suite(.noHang) struct AuthTests {
    @Test func routesByAuthenticationMethod() async {
        let downstream = CountingLoader()
        let auth = Auth(loaders: [.basic: Marker("basic"), .oauth: Marker("oauth")])
        let chain = auth --> downstream

        var basic = HTTPRequest(host: "example.com")
        basic.authenticationMethod = .basic
        var oauth = HTTPRequest(host: "example.com")
        oauth.authenticationMethod = .oauth
        _ = await chain.load(basic)
        _ = await chain.load(oauth)
        _ = await chain.load(HTTPRequest(host: "example.com"))
        #expect(downstream.loads.value.map { $0.headers["X-Auth"] } == ["basic", "oauth", nil])
    }

    @Test func anUnknownMethodFailsWithCannotAuthenticate() async {
        let downstream = CountingLoader()
        let chain = Auth(loaders: [.basic: Marker("basic")]) --> downstream
        var request = HTTPRequest(host: "example.com")
        request.authenticationMethod = .apiKey
        let result = await chain.load(request)
        #expect(result.error?.code == .cannotAuthenticate)
        #expect(result.error?.message.contains("'apiKey'") == true)
        #expect(downstream.loads.value.isEmpty)
    }

    @Test func aResetReachesEverySubLoaderAndTheDownstreamExactlyOnce() async {
        let downstream = CountingLoader()
        let basic = Marker("basic")
        let oauth = Marker("oauth")
        let apiKey = Marker("apiKey")
        let chain = Auth(loaders: [.basic: basic, .oauth: oauth, .apiKey: apiKey]) --> downstream
        await chain.reset()
        #expect(basic.resets.value == 1 && oauth.resets.value == 1 && apiKey.resets.value == 1)
        #expect(downstream.resets.value == 1)
        await chain.reset()
        #expect(downstream.resets.value == 2)
    }

    @Test func subLoadersShareAuthsNextLoader() {
        let downstream = CountingLoader()
        let basic = Marker("basic")
        let auth = Auth(loaders: [.basic: basic])
        auth --> downstream
        #expect(auth.nextLoader === downstream)
        #expect(basic.nextLoader?.nextLoader === downstream)  // through Auth's private guard
    }

    @Test func basicAuthInsideAuth() async {
        let mock = MockLoader().then(status: .ok).then(status: .ok)
        let chain = Auth(loaders: [.basic: BasicAuth(origins: ["api.example.com"], credentials: ann)]) --> mock
        _ = await chain.load(basicRequest())
        _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/public"))
        #expect(mock.receivedRequests.map { $0.headers["Authorization"] } == [ann.authorizationHeaderValue, nil])
    }
}

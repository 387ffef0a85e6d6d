import Foundation
import HTTP
import Testing

extension ServerEnvironment {
    fileprivate static let production = ServerEnvironment(
        host: "api.example.com",
        pathPrefix: "/v1",
        headers: ["X-API-Key": "prod-key", "Accept": "application/json"],
        query: [URLQueryItem(name: "client", value: "ios")]
    )
    fileprivate static let staging = ServerEnvironment(scheme: "http", host: "localhost", port: 8080, pathPrefix: "/")
}

@Suite(.noHang) struct ApplyEnvironmentTests {
    private func sent(
        _ request: HTTPRequest, through environment: ServerEnvironment = .production
    ) async -> HTTPRequest? {
        let mock = MockLoader().then(status: .ok)
        _ = await (ApplyEnvironment(environment: environment) --> mock).load(request)
        return mock.receivedRequests.first
    }

    @Test func fillsInRelativeRequests() async {
        var request = HTTPRequest(path: "/people/42", headers: ["Accept": "text/plain"])
        request.query = [URLQueryItem(name: "expand", value: "1")]
        let sent = await sent(request)
        #expect(sent?.url?.absoluteString == "https://api.example.com/v1/people/42?expand=1&client=ios")
        #expect(sent?.headers["X-API-Key"] == "prod-key")
        #expect(sent?.headers["Accept"] == "text/plain")  // the request's own field wins
    }

    @Test func aRequestCanTargetAnotherEnvironment() async {
        var request = HTTPRequest(path: "/health")
        request.serverEnvironment = .staging
        let sent = await sent(request)
        #expect(sent?.url?.absoluteString == "http://localhost:8080/health")
        #expect(sent?.headers["X-API-Key"] == nil)
    }

    @Test func absoluteRequestsPassThroughWithoutTheEnvironmentsSecrets() async {
        let request = HTTPRequest(host: "cdn.example.net", path: "/logo.png")
        let sent = await sent(request)
        #expect(sent?.url?.absoluteString == "https://cdn.example.net/logo.png")
        #expect(sent?.headers["X-API-Key"] == nil)
    }

    @Test(arguments: [
        ("/", "/a", "/a"), ("/v1", "/a", "/v1/a"), ("/v1/", "/a", "/v1/a"), ("v1", "a", "/v1/a"),
        ("/v1", "", "/v1"), ("", "", "/"), ("/", "/", "/"),
    ])
    func joinsPrefixAndPathWithOneSlash(prefix: String, path: String, expected: String) {
        let environment = ServerEnvironment(host: "h", pathPrefix: prefix)
        #expect(environment.apply(to: HTTPRequest(path: path)).path == expected)
    }

    @Test func environmentFromABaseURL() throws {
        let environment = try #require(ServerEnvironment(baseURL: URL(string: "http://127.0.0.1:9000/api?v=2")!))
        #expect(environment.scheme == "http")
        #expect(environment.host == "127.0.0.1")
        #expect(environment.port == 9000)
        #expect(environment.pathPrefix == "/api")
        #expect(environment.query == [URLQueryItem(name: "v", value: "2")])
        #expect(ServerEnvironment(baseURL: URL(string: "file:///tmp")!) == nil)
    }
}

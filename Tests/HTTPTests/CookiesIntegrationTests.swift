import Foundation
import HTTP
import HTTPTestSupport
import Testing

/// `Cookies` below `FollowRedirects` over `URLSessionLoader`, against a real httpbin on loopback, started by
/// `scripts/servers.sh`: `/cookies/set` sets cookies and redirects to `/cookies`, which echoes the `Cookie` field it
/// received; `/response-headers` sets the `Set-Cookie` lines asked for. The AsyncHTTPClient transport's package runs
/// the same scenarios (`CookiesOverAsyncHTTPClientTests`).
@Suite(.noHang, .enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct CookiesIntegrationTests {
    let base = TestServers.httpbin!
    let cookies: Cookies
    let chain: HTTPLoader

    init() {
        cookies = Cookies()
        chain = ResetGuard() --> FollowRedirects() --> cookies --> URLSessionLoader()
    }

    private func request(_ path: String, query: [URLQueryItem] = []) -> HTTPRequest {
        var request = HTTPRequest(url: base.appendingPathComponent(path))
        if !query.isEmpty { request.query = query }
        return request
    }

    private func echoedCookies(_ response: HTTPResponse) -> [String: String]? {
        response.json["cookies"] as? [String: String]
    }

    @Test func cookiesSetOnARedirectReachTheNextHopAndLaterRequests() async throws {
        let set = request(
            "/cookies/set", query: [.init(name: "session", value: "abc"), .init(name: "theme", value: "dark")])
        let response = try await chain.load(set).get()
        #expect(response.status == .ok)
        #expect(response.redirects.count == 1)
        // The hop to /cookies already carried the cookies the redirect set.
        #expect(echoedCookies(response) == ["session": "abc", "theme": "dark"])

        let later = try await chain.load(request("/cookies")).get()
        #expect(echoedCookies(later) == ["session": "abc", "theme": "dark"])
        #expect(cookies.jar.cookies.allSatisfy { $0.isHostOnly && $0.path == "/" })
    }

    @Test func aDeletionFromTheServerRemovesTheCookie() async throws {
        _ = try await chain.load(
            request("/cookies/set", query: [.init(name: "a", value: "1"), .init(name: "b", value: "2")])
        ).get()
        let afterDeletion = try await chain.load(request("/cookies/delete", query: [.init(name: "a", value: nil)]))
            .get()
        #expect(echoedCookies(afterDeletion) == ["b": "2"])
        #expect(cookies.jar.cookies.map(\.name) == ["b"])
    }

    @Test func aResetForgetsTheCookies() async throws {
        _ = try await chain.load(request("/cookies/set", query: [.init(name: "session", value: "abc")])).get()
        await chain.reset()
        let after = try await chain.load(request("/cookies")).get()
        #expect(echoedCookies(after) == [:])
    }

    @Test func aSecureCookieFromALoopbackServerIsKeptAndSentBack() async throws {
        let set = request("/response-headers", query: [.init(name: "Set-Cookie", value: "token=t1; Secure; Path=/")])
        _ = try await chain.load(set).get()
        let later = try await chain.load(request("/cookies")).get()
        #expect(echoedCookies(later) == ["token": "t1"])
    }

    @Test func persistentCookiesOutliveTheChainThroughAFileStoreAndAResetRemovesThem() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("cookies.json")
        let first = Cookies(store: FileCookieStore(file: file))
        let firstChain = ResetGuard() --> FollowRedirects() --> first --> URLSessionLoader()
        let set = request(
            "/response-headers",
            query: [
                .init(name: "Set-Cookie", value: "keep=1; Max-Age=3600; Path=/"),
                .init(name: "Set-Cookie", value: "session=2; Path=/"),
            ])
        _ = try await firstChain.load(set).get()
        await first.waitUntilSaved()

        // The next launch: a new chain and store over the same file sends the persistent cookie only.
        let second = Cookies(store: FileCookieStore(file: file))
        let secondChain = ResetGuard() --> FollowRedirects() --> second --> URLSessionLoader()
        let echoed = try await secondChain.load(request("/cookies")).get()
        #expect(echoedCookies(echoed) == ["keep": "1"])
        await secondChain.reset()
        #expect(!FileManager.default.fileExists(atPath: file.path))
        let afterReset = try await secondChain.load(request("/cookies")).get()
        #expect(echoedCookies(afterReset) == [:])
    }
}

import Foundation
import HTTP
import HTTPAsyncHTTPClient
import Testing

/// `Cookies` below `FollowRedirects` over this transport, against the local httpbin — the same scenarios as the
/// product's `CookiesIntegrationTests` over `URLSessionLoader`: `/cookies/set` sets cookies and redirects to
/// `/cookies`, which echoes the `Cookie` field it received; `/response-headers` sets the `Set-Cookie` lines asked for.
@Suite(
    .timeLimit(.minutes(3)),
    .enabled(if: TestServers.httpbin != nil, "needs the local servers: run through scripts/test.sh"))
struct CookiesOverAsyncHTTPClientTests {
    let httpbin = TestServers.httpbin!

    private func request(_ path: String, query: [URLQueryItem] = []) -> HTTPRequest {
        var request = HTTPRequest(url: URL(string: httpbin.absoluteString + path)!)
        if !query.isEmpty { request.query = query }
        return request
    }

    private func echoedCookies(_ response: HTTPResponse) -> [String: String]? {
        response.json["cookies"] as? [String: String]
    }

    /// Runs `body` with a chain `ResetGuard --> FollowRedirects --> cookies --> AsyncHTTPClientLoader`.
    private func withChain(
        _ cookies: Cookies, _ body: (HTTPLoader) async throws -> Void
    ) async throws {
        try await withLoader { transport in
            try await body(ResetGuard() --> FollowRedirects() --> cookies --> transport)
        }
    }

    @Test func cookiesSetOnARedirectReachTheNextHopAndLaterRequests() async throws {
        let cookies = Cookies()
        try await withChain(cookies) { chain in
            let set = request(
                "/cookies/set", query: [.init(name: "session", value: "abc"), .init(name: "theme", value: "dark")])
            let response = try await chain.load(set).get()
            #expect(response.status == .ok && response.redirects.count == 1)
            #expect(echoedCookies(response) == ["session": "abc", "theme": "dark"])
            let later = try await chain.load(request("/cookies")).get()
            #expect(echoedCookies(later) == ["session": "abc", "theme": "dark"])
        }
    }

    @Test func aDeletionFromTheServerRemovesTheCookie() async throws {
        let cookies = Cookies()
        try await withChain(cookies) { chain in
            _ = try await chain.load(
                request("/cookies/set", query: [.init(name: "a", value: "1"), .init(name: "b", value: "2")])
            ).get()
            let afterDeletion = try await chain.load(request("/cookies/delete", query: [.init(name: "a", value: nil)]))
                .get()
            #expect(echoedCookies(afterDeletion) == ["b": "2"])
            #expect(cookies.jar.cookies.map(\.name) == ["b"])
        }
    }

    @Test func aSecureCookieFromALoopbackServerIsKeptAndSentBack() async throws {
        let cookies = Cookies()
        try await withChain(cookies) { chain in
            let set = request(
                "/response-headers", query: [.init(name: "Set-Cookie", value: "token=t1; Secure; Path=/")])
            _ = try await chain.load(set).get()
            let later = try await chain.load(request("/cookies")).get()
            #expect(echoedCookies(later) == ["token": "t1"])
        }
    }

    @Test func persistentCookiesOutliveTheChainThroughAFileStoreAndAResetRemovesThem() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ahc-cookies-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("cookies.json")
        let first = Cookies(store: FileCookieStore(file: file))
        try await withChain(first) { chain in
            let set = request(
                "/response-headers",
                query: [
                    .init(name: "Set-Cookie", value: "keep=1; Max-Age=3600; Path=/"),
                    .init(name: "Set-Cookie", value: "session=2; Path=/"),
                ])
            _ = try await chain.load(set).get()
            await first.waitUntilSaved()
        }
        // The next launch: a new chain and store over the same file sends the persistent cookie only.
        let second = Cookies(store: FileCookieStore(file: file))
        try await withChain(second) { chain in
            let echoed = try await chain.load(request("/cookies")).get()
            #expect(echoedCookies(echoed) == ["keep": "1"])
            await chain.reset()
            #expect(!FileManager.default.fileExists(atPath: file.path))
            let afterReset = try await chain.load(request("/cookies")).get()
            #expect(echoedCookies(afterReset) == [:])
        }
    }
}

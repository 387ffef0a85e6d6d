import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// The `Cookies` loader over MockLoader: what it sends, what it stores, where it goes in the chain, and reset.
@Suite(.noHang) struct CookiesTests {
    let clock = ManualDate()

    private func setting(
        _ lines: [String], status: HTTPStatus = .ok, headers: HTTPHeaders = [:]
    )
        -> MockLoader.Handler
    {
        { request in
            var fields = headers
            for line in lines { fields.add(line, for: "Set-Cookie") }
            return .success(HTTPResponse(request: request, status: status, headers: fields))
        }
    }

    @Test func storesWhatTheServerSetsAndSendsItBack() async throws {
        let mock = MockLoader()
            .then(setting(["session=abc; Path=/; Secure; HttpOnly", "theme=dark; Max-Age=3600"]))
            .then(status: .ok)
        let cookies = Cookies(now: clock.closure)
        let chain = cookies --> mock
        let first = cacheRequest("/login")
        _ = await chain.load(first)
        #expect(mock.receivedRequests[0].headers["Cookie"] == nil)
        #expect(cookies.jar.cookies.map(\.name) == ["session", "theme"])

        _ = await chain.load(cacheRequest("/people/42"))
        #expect(mock.receivedRequests[1].headers["Cookie"] == "session=abc; theme=dark")
    }

    @Test func eachCookieGoesOnlyWhereItsScopeSays() async throws {
        let mock = MockLoader().then(
            setting(["api=1", "wide=2; Domain=example.com", "docs=3; Path=/docs", "secure=4; Secure"]))
        for _ in 0..<5 { mock.then(status: .ok) }
        let chain = Cookies(now: clock.closure) --> mock
        _ = await chain.load(HTTPRequest(url: URL(string: "https://api.example.com/")!))
        for url in [
            "https://api.example.com/docs/x", "https://www.example.com/", "http://api.example.com/",
            "https://example.org/", "https://api.example.com/other",
        ] {
            _ = await chain.load(HTTPRequest(url: URL(string: url)!))
        }
        let sent = mock.receivedRequests.dropFirst().map { $0.headers["Cookie"] }
        #expect(
            sent == [
                "docs=3; api=1; wide=2; secure=4", "wide=2", "api=1; wide=2", nil, "api=1; wide=2; secure=4",
            ])
    }

    @Test func aCookieSetOnARedirectIsStoredAndSentOnTheNextHopOfItsOriginOnly() async throws {
        let mock = MockLoader()
            .then(setting(["step=1; Path=/"], status: .found, headers: ["Location": "/next"]))
            .then(setting(["other=x"], status: .found, headers: ["Location": "https://elsewhere.example.net/end"]))
            .then(status: .ok)
        let cookies = Cookies(now: clock.closure)
        let chain = FollowRedirects() --> cookies --> mock
        let response = try await chain.load(cacheRequest("/start")).get()
        #expect(response.status == .ok)
        let sent = mock.receivedRequests.map { $0.headers["Cookie"] }
        #expect(sent == [nil, "step=1", nil])
        #expect(cookies.jar.cookies.map(\.name) == ["step", "other"])
    }

    @Test func aCookieFromAResponseInsideAnErrorIsStoredToo() async throws {
        let response = HTTPResponse(
            request: cacheRequest(), status: .found, headers: ["Set-Cookie": "kept=1", "Location": "/x"])
        let mock = MockLoader().then { request in
            .failure(HTTPError(.tooManyRedirects, request: request, response: response))
        }
        let cookies = Cookies(now: clock.closure)
        _ = await (cookies --> mock).load(cacheRequest())
        #expect(cookies.jar.cookies.map(\.name) == ["kept"])
    }

    @Test func aRequestsOwnCookieFieldIsKeptAndWinsOverTheJarsCookieOfTheSameName() async throws {
        let mock = MockLoader().then(setting(["a=jar", "b=jar"])).then(status: .ok)
        let chain = Cookies(now: clock.closure) --> mock
        _ = await chain.load(cacheRequest())
        _ = await chain.load(cacheRequest(headers: ["Cookie": "a=mine; c=3"]))
        #expect(mock.receivedRequests[1].headers.values(for: "Cookie") == ["a=mine; c=3; b=jar"])
    }

    @Test func expiredCookiesAreNotSentAndADeletionRemovesTheCookie() async throws {
        let mock = MockLoader()
            .then(setting(["short=1; Max-Age=10", "long=2; Max-Age=600"]))
            .then(status: .ok)
            .then(setting(["long=; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]))
            .then(status: .ok)
        let cookies = Cookies(now: clock.closure)
        let chain = cookies --> mock
        _ = await chain.load(cacheRequest())
        clock.advance(by: 11)
        _ = await chain.load(cacheRequest())
        #expect(mock.receivedRequests[1].headers["Cookie"] == "long=2")
        _ = await chain.load(cacheRequest())
        _ = await chain.load(cacheRequest())
        #expect(mock.receivedRequests[3].headers["Cookie"] == nil)
        #expect(cookies.jar.cookies.isEmpty)
    }

    @Test func aResetForgetsEveryCookie() async throws {
        let mock = MockLoader().then(setting(["session=abc; Max-Age=3600"])).then(status: .ok)
        let cookies = Cookies(now: clock.closure)
        let chain = ResetGuard() --> cookies --> mock
        _ = await chain.load(cacheRequest())
        #expect(cookies.jar.cookies.count == 1)
        await chain.reset()
        #expect(cookies.jar.cookies.isEmpty)
        _ = await chain.load(cacheRequest())
        #expect(mock.receivedRequests.last?.headers["Cookie"] == nil)
    }

    @Test func anAppCanStoreAndRemoveCookiesThroughTheLoader() async throws {
        let mock = MockLoader().then(status: .ok).then(status: .ok)
        let cookies = Cookies(now: clock.closure)
        let chain = cookies --> mock
        cookies.withJar {
            $0.store(
                Cookie(name: "consent", value: "yes", domain: "api.example.com", creationDate: clock.now),
                now: clock.now)
        }
        _ = await chain.load(cacheRequest())
        #expect(mock.receivedRequests[0].headers["Cookie"] == "consent=yes")
        cookies.withJar { $0.removeAll { $0.name == "consent" } }
        _ = await chain.load(cacheRequest())
        #expect(mock.receivedRequests[1].headers["Cookie"] == nil)
    }

    @Test func aCookiesLoaderAboveTheCacheLetsVaryCookieSelectTheResponse() async throws {
        let mock = MockLoader()
            .then(setting(["user=alice"], headers: ["Cache-Control": "max-age=600", "Vary": "Cookie"]))
            .then(status: .ok, headers: ["Cache-Control": "max-age=600", "Vary": "Cookie"], body: Data("alice".utf8))
        let cookies = Cookies(now: clock.closure)
        let cache = Cache(now: clock.closure)
        let chain = cookies --> cache --> mock
        _ = await chain.load(cacheRequest("/me"))  // stored for a request without cookies
        let second = try await chain.load(cacheRequest("/me")).get()
        #expect(second.text == "alice")  // the cookie now sent selects no stored variant: the server answered
        let third = try await chain.load(cacheRequest("/me")).get()
        #expect(third.text == "alice" && third.cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(third.headers["Set-Cookie"] == nil)
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func cookieValuesNeverAppearInLogsOrCURLCommands() async throws {
        let lines = Locked<[String]>([])
        let mock = MockLoader().then(setting(["session=s3cr3t"])).then(status: .ok)
        let printer = PrintLoader(includesHeaders: true, sink: { line in lines.withLock { $0.append(line) } })
        let chain = Cookies(now: clock.closure) --> printer --> mock
        _ = await chain.load(cacheRequest())
        let second = try await chain.load(cacheRequest()).get()
        #expect(second.request.headers["Cookie"] == "session=s3cr3t")  // sent, as it should be
        #expect(Redaction.standard.hides("Cookie") && Redaction.standard.hides("set-cookie"))
        #expect(!second.request.cURLCommand().contains("s3cr3t"))
        #expect(!lines.withLock { $0 }.joined(separator: "\n").contains("s3cr3t"))
        #expect(!lines.withLock { $0 }.isEmpty)
    }

    /// Every view the chain writes of a request, a response or an error — descriptions, header lists, cURL commands,
    /// PrintLoader's log, a recording and its HAR export — hides the `Cookie` and `Set-Cookie` values.
    @Test func cookieValuesAreRedactedInEveryLog() async throws {
        let lines = Locked<[String]>([])
        let mock = MockLoader()
            .then(setting(["session=s3cr3t; Max-Age=60", "other=s3cr3t2"]))
            .then(setting(["late=s3cr3t3"], status: .unauthorized))
        let printer = PrintLoader(includesHeaders: true, sink: { line in lines.withLock { $0.append(line) } })
        let recorder = Recorder()
        let chain = Cookies(now: clock.closure) --> printer --> recorder --> mock
        let first = try await chain.load(cacheRequest()).get()
        let second = try await chain.load(cacheRequest()).get()
        #expect(second.request.headers["Cookie"] == "session=s3cr3t; other=s3cr3t2")  // sent, as it should be
        let error = HTTPError(.invalidResponse, request: second.request, response: second)
        var views = [
            first.description, second.description, second.request.description, error.description,
            second.headers.description, second.request.headers.description, first.headers.description,
            second.request.cURLCommand(), String(decoding: try recorder.cassette.jsonData(), as: UTF8.self),
            String(decoding: try recorder.cassette.harData(), as: UTF8.self),
        ]
        views += second.request.headers.map(\.description) + first.headers.map(\.description)
        views += lines.withLock { $0 }
        #expect(!lines.withLock { $0 }.isEmpty)
        for view in views {
            #expect(!view.contains("s3cr3t"), "\(view)")
        }
    }

    @Test func itDescribesHowManyCookiesItHolds() async {
        let mock = MockLoader().then(setting(["a=1", "b=2"]))
        let cookies = Cookies(now: clock.closure)
        _ = await (cookies --> mock).load(cacheRequest())
        #expect(cookies.configurationDescription == "cookies: 2")
    }
}

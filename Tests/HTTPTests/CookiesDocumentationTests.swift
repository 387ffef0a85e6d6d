import Foundation
import HTTP
import HTTPTestSupport
import Testing

// The code samples of HTTP.docc/KeepingCookies.md ("Keeping cookies"), kept identical to the article (the
// comparison ignores indentation, blank lines, `import` lines and a leading `private`). The chain that would reach
// the network is compiled and never run; the others run against MockLoader.

extension ServerEnvironment {
    fileprivate static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

// "Overview". Loads over the network: compiled, never run.
private func overviewSample() -> HTTPLoader {
    let cookies = Cookies()
    let chain =
        ApplyEnvironment(environment: .production)
        --> FollowRedirects()
        --> cookies
        --> Cache()
        --> URLSessionLoader()
    return chain
}

@Suite(.noHang) struct CookiesDocumentationTests {
    @Test func lookingAtAndChangingTheJar() async throws {
        let mock = MockLoader()
            .then(
                status: .ok,
                headers: HTTPHeaders([
                    .init(name: "Set-Cookie", value: "session=abc; Secure; HttpOnly"),
                    .init(name: "Set-Cookie", value: "id=1; Domain=ads.example.com; Max-Age=600"),
                ]))
        let cookies = Cookies()
        cookies.nextLoader = mock
        _ = await cookies.load(HTTPRequest(url: URL(string: "https://api.ads.example.com/")!))

        var printed: [String] = []
        func print(_ value: Any) { printed.append("\(value)") }
        for cookie in cookies.jar.cookies {
            print(cookie)  // "session (api.example.com/, Secure, HttpOnly, session)"
        }
        #expect(printed.first == "session (api.ads.example.com/, Secure, HttpOnly, session)")
        #expect(!printed.joined().contains("abc"))

        cookies.withJar { jar in
            jar.removeAll { $0.domain.hasSuffix("ads.example.com") }
        }
        #expect(cookies.jar.cookies.isEmpty)
    }

    @Test func keepingCookiesAcrossLaunches() async throws {
        let now = Date()
        let savedCookies = [
            Cookie(
                name: "session", value: "abc", domain: "api.example.com", expiresDate: now + 3_600, creationDate: now)
        ]
        let restored = Cookies(jar: CookieJar(cookies: savedCookies))
        let mock = MockLoader().then(status: .ok)
        restored.nextLoader = mock
        _ = await restored.load(HTTPRequest(host: "api.example.com", path: "/me"))
        #expect(mock.receivedRequests.first?.headers["Cookie"] == "session=abc")
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let article = root.appendingPathComponent("Sources/HTTP/HTTP.docc/KeepingCookies.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(missing.isEmpty, "KeepingCookies.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

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
        let cookieFile = FileManager.default.temporaryDirectory.appendingPathComponent("cookies.json")
        let lasting = Cookies(store: FileCookieStore(file: cookieFile))
        defer { try? FileManager.default.removeItem(at: cookieFile) }
        let mock = MockLoader()
            .then(status: .ok, headers: ["Set-Cookie": "session=abc; Max-Age=3600"])
        lasting.nextLoader = mock
        _ = await lasting.load(HTTPRequest(host: "api.example.com", path: "/login"))
        await lasting.waitUntilSaved()

        let nextLaunch = Cookies(store: FileCookieStore(file: cookieFile))
        let next = MockLoader().then(status: .ok)
        nextLaunch.nextLoader = next
        _ = await nextLaunch.load(HTTPRequest(host: "api.example.com", path: "/me"))
        #expect(next.receivedRequests.first?.headers["Cookie"] == "session=abc")
        await (ResetGuard() --> nextLaunch).reset()
        #expect(!FileManager.default.fileExists(atPath: cookieFile.path))
    }

    @Test func publicSuffixes() async throws {
        let suffixes = PublicSuffixList(rules: ["co.uk", "github.io", "*.ck", "!www.ck"])
        let strict = Cookies(jar: CookieJar(publicSuffixes: suffixes))
        let mock = MockLoader()
            .then(
                status: .ok,
                headers: HTTPHeaders([
                    .init(name: "Set-Cookie", value: "wide=1; Domain=co.uk"),
                    .init(name: "Set-Cookie", value: "site=2; Domain=example.co.uk"),
                ]))
        strict.nextLoader = mock
        _ = await strict.load(HTTPRequest(url: URL(string: "https://www.example.co.uk/")!))
        #expect(strict.jar.cookies.map(\.name) == ["site"])
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let article = root.appendingPathComponent("Sources/HTTP/HTTP.docc/KeepingCookies.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(missing.isEmpty, "KeepingCookies.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

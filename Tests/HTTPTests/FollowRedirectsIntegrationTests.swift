import Foundation
import HTTP
import HTTPTestSupport
import Testing

/// `FollowRedirects` over `URLSessionLoader` against a real httpbin on loopback, started by `scripts/servers.sh`.
@Suite(.noHang, .enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct FollowRedirectsIntegrationTests {
    let base = TestServers.httpbin!
    let chain = FollowRedirects() --> URLSessionLoader()

    private func request(
        _ path: String, query: [URLQueryItem] = [], method: HTTPMethod = .get, body: any HTTPBody = EmptyBody()
    ) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: base.appendingPathComponent(path), body: body)
        if !query.isEmpty { request.query = query }
        return request
    }

    /// `/redirect-to?url=…&status_code=…`.
    private func redirect(
        to url: String, status: Int = 302, method: HTTPMethod = .get, body: any HTTPBody = EmptyBody()
    )
        -> HTTPRequest
    {
        request(
            "/redirect-to",
            query: [URLQueryItem(name: "url", value: url), URLQueryItem(name: "status_code", value: "\(status)")],
            method: method, body: body)
    }

    @Test(arguments: ["redirect", "relative-redirect", "absolute-redirect"])
    func chainsOfRedirectsEndAtTheTarget(kind: String) async throws {
        let response = try await chain.load(request("/\(kind)/3")).get()
        #expect(response.status == .ok)
        #expect(response.url?.path == "/get")
        #expect(response.redirects.map(\.status) == [.found, .found, .found])
        #expect(response.redirects.first?.url?.path == "/\(kind)/3")
        #expect(response.redirects.last?.location?.path == "/get")
        #expect(response.metrics?.redirects.count == 3)
    }

    /// RFC 9110 §15.4 on the wire: httpbin's /anything echoes the method and the body it received.
    @Test(arguments: [301, 302, 303, 307, 308])
    func aPostIsRedirectedAsRFC9110Says(status: Int) async throws {
        let body = JSONBody(["name": "Zoë"])
        let response = try await chain.load(redirect(to: "/anything", status: status, method: .post, body: body)).get()
        #expect(response.status == .ok)
        let keepsPost = status == 307 || status == 308
        #expect(response.json["method"] as? String == (keepsPost ? "POST" : "GET"))
        #expect((response.json["json"] as? [String: String])?["name"] == (keepsPost ? "Zoë" : nil))
        let headers = response.json["headers"] as? [String: String]
        #expect(headers?["Content-Type"] == (keepsPost ? "application/json; charset=utf-8" : nil))
    }

    @Test func aHeadStaysAHeadAfterA303() async throws {
        let response = try await chain.load(redirect(to: "/anything", status: 303, method: .head)).get()
        #expect(response.status == .ok)
        #expect(response.request.method == .head)
        #expect(response.body.isEmpty)
    }

    @Test func a307ResendsAStreamedBodyThatCanBeMadeAgain() async throws {
        let body = StreamBody(length: 5, contentType: "text/plain") {
            AsyncStream { continuation in
                continuation.yield(Data("he".utf8))
                continuation.yield(Data("llo".utf8))
                continuation.finish()
            }
        }
        let response = try await chain.load(redirect(to: "/anything", status: 307, method: .put, body: body)).get()
        #expect(response.json["method"] as? String == "PUT")
        #expect(response.json["data"] as? String == "hello")
    }

    @Test func a308WithABodySentOnlyOnceEndsWithAClearError() async throws {
        let body = StreamBody(
            length: 5,
            AsyncStream {
                $0.yield(Data("hello".utf8)); $0.finish()
            })
        let error = try #require(
            await chain.load(redirect(to: "/anything", status: 308, method: .post, body: body)).error)
        #expect(error.code == .bodyNotReplayable)
        #expect(error.response?.status == .permanentRedirect)
    }

    @Test func credentialsAreDroppedOnlyWhenTheOriginChanges() async throws {
        let secrets: HTTPHeaders = [
            "Authorization": "Bearer secret", "Cookie": "session=secret", "Proxy-Authorization": "Basic x",
            "X-Keep": "1", "X-API-Key": "k3y",
        ]
        // localhost and 127.0.0.1 are different origins for the same server.
        var crossOrigin = redirect(to: base.appendingPathComponent("/headers").absoluteString)
        crossOrigin.host = "localhost"
        crossOrigin.headers = secrets
        let cross = try await chain.load(crossOrigin).get()
        let crossEchoed = try #require(cross.json["headers"] as? [String: String])
        #expect(cross.url?.host == base.host)
        #expect(crossEchoed["Authorization"] == nil && crossEchoed["Cookie"] == nil)
        #expect(crossEchoed["Proxy-Authorization"] == nil && crossEchoed["X-Api-Key"] == nil)
        #expect(crossEchoed["X-Keep"] == "1")

        var sameOrigin = redirect(to: "/headers")
        sameOrigin.headers = secrets
        let same = try #require(try await chain.load(sameOrigin).get().json["headers"] as? [String: String])
        #expect(same["Authorization"] == "Bearer secret" && same["Cookie"] == "session=secret")
        #expect(same["X-Api-Key"] == "k3y")
    }

    @Test func theHopLimitAndUnusableLocationsEndWithErrorsCarryingTheRedirect() async throws {
        let tooMany = try #require(
            await (FollowRedirects(maximumNumberOfRedirects: 2) --> URLSessionLoader())
                .load(request("/redirect/5")).error)
        #expect(tooMany.code == .tooManyRedirects)
        #expect(tooMany.response?.status == .found)
        #expect(tooMany.response?.redirects.count == 2)

        for location in ["file:///etc/passwd", "javascript:alert(1)"] {
            let unusable = try #require(await chain.load(redirect(to: location)).error)
            #expect(unusable.code == .unusableRedirect, "\(location)")
            #expect(unusable.response?.headers["Location"] == location)
        }
    }

    @Test func aStreamedLoadStreamsTheFinalBody() async throws {
        let streamed = try await chain.stream(redirect(to: "/stream/5")).get()
        #expect(streamed.head.status == .ok)
        #expect(streamed.head.redirects.count == 1)
        var lines = 0
        for try await line in streamed.body.lines where !line.isEmpty { lines += 1 }
        #expect(lines == 5)
    }

    @Test func aDownloadsFileHoldsOnlyTheFinalBody() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "redirect-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // /redirect/1 answers with an HTML page before the JSON of /get.
        let json = folder.appending(path: "get.json")
        let viaPage = try await chain.download(request("/redirect/1"), to: json).get()
        #expect(viaPage.fileURL == json)
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]
        #expect((saved?["url"] as? String)?.hasSuffix("/get") == true)

        // /range serves a known pattern.
        let destination = folder.appending(path: "range")
        let response = try await chain.download(redirect(to: "/range/1000"), to: destination).get()
        #expect(response.status == .ok)
        #expect(response.fileURL == destination)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        #expect(try Data(contentsOf: destination) == Data((0..<1000).map { alphabet[$0 % 26] }))
    }

    @Test func thePrintLoaderAboveShowsEachHop() async throws {
        let lines = Box<[String]>([])
        let printed =
            PrintLoader { line in lines.withLock { $0.append(line) } } --> FollowRedirects() --> URLSessionLoader()
        _ = try await printed.load(request("/redirect/2")).get()
        let hops = lines.value.filter { $0.hasPrefix("↪") }
        #expect(hops.count == 2)
        #expect(hops.first?.contains("302 Found GET \(base.absoluteString)/redirect/2 → GET ") == true)
    }
}

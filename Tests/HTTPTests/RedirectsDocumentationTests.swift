import Foundation
import HTTP
import HTTPTestSupport
import Testing

// The code samples of HTTP.docc/Redirects.md ("Following redirects"), kept identical to the article. Samples whose
// chains end in a URLSessionLoader are built and checked here, never sent; the behaviour they describe runs against
// MockLoader.

extension ServerEnvironment {
    fileprivate static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

@Suite(.noHang) struct RedirectsDocumentationTests {
    @Test func theChainSample() {
        let chain =
            ApplyEnvironment(environment: .production)
            --> FollowRedirects()
            --> Cache()
            --> Retry()
            --> Throttle(maximumNumberOfRequests: 6)
            --> URLSessionLoader()

        #expect(chain.nextLoader is FollowRedirects)
        #expect(chain.nextLoader?.nextLoader is Cache)
        #expect((chain.nextLoader as? FollowRedirects)?.maximumNumberOfRedirects == 20)
    }

    @Test func postRedirectGetSample() async throws {
        let mock = MockLoader()
            .then(status: .seeOther, headers: ["Location": "/v1/orders/17"])
            .then(status: .ok, body: Data(#"{"id":17}"#.utf8))
        let chain = ApplyEnvironment(environment: .production) --> FollowRedirects() --> mock

        let order = HTTPRequest(method: .post, path: "/orders", body: JSONBody(["item": "coffee"]))
        let confirmation = try await chain.load(order).get()
        // 303 See Other, Location: /orders/17 — the order was sent once, the confirmation read with a GET
        print(confirmation.request.method, confirmation.request.path)  // GET /v1/orders/17

        #expect(confirmation.request.method == .get && confirmation.request.path == "/v1/orders/17")
        #expect(mock.receivedRequests.map(\.method) == [.post, .get])
        #expect(mock.receivedRequests[1].body is EmptyBody)
    }

    @Test func redactionSample() async throws {
        let following = FollowRedirects(redaction: .standard.adding("X-Session"))

        let mock = MockLoader().then(status: .found, headers: ["Location": "https://cdn.example.net/x"]).then(
            status: .ok)
        var request = HTTPRequest(url: URL(string: "https://api.example.com/x")!)
        request.headers = ["X-Session": "s3ss", "X-API-Key": "k3y", "X-Trace": "t"]
        _ = try await (following --> mock).load(request).get()
        #expect(mock.receivedRequests[1].headers == ["X-Trace": "t"])
    }

    @Test func doNotFollowSample() async throws {
        var login = HTTPRequest(method: .post, path: "/login", body: FormBody(["user": "alice"]))
        login.redirectPolicy = .doNotFollow  // the 302 and its Location come back as the response

        let mock = MockLoader().then(status: .found, headers: ["Location": "/home"])
        let response = try await (ApplyEnvironment(environment: .production) --> FollowRedirects() --> mock)
            .load(login).get()
        #expect(response.status == .found && response.headers["Location"] == "/home")
        #expect(HTTPRequest(path: "/login").redirectPolicy == .follow)
    }

    @Test func decideSample() async throws {
        var report = HTTPRequest(path: "/reports/latest")
        report.redirectPolicy = .decide { hop in
            guard hop.nextRequest.host?.hasSuffix(".example.com") == true else { return .stop }
            var next = hop.nextRequest
            next.headers["X-Redirected-From"] = hop.response.url?.path
            return .follow(next)
        }

        // Followed within example.com, with the header; stopped at another domain.
        let mock = MockLoader()
            .then(status: .found, headers: ["Location": "https://files.example.com/r/1.pdf"])
            .then(status: .found, headers: ["Location": "https://tracker.example.net/r/1.pdf"])
        let chain = ApplyEnvironment(environment: .production) --> FollowRedirects() --> mock
        let response = try await chain.load(report).get()
        #expect(response.status == .found && response.headers["Location"] == "https://tracker.example.net/r/1.pdf")
        #expect(mock.receivedRequests.count == 2)
        #expect(mock.receivedRequests[1].headers["X-Redirected-From"] == "/v1/reports/latest")
    }

    @Test func whereTheRedirectsWentSample() async throws {
        let mock = MockLoader()
            .then(status: .found, headers: ["Location": "https://files.example.com/r/2026-11.pdf"])
            .then(status: .ok)
        let chain = ApplyEnvironment(environment: .production) --> FollowRedirects() --> mock

        let response = try await chain.load(HTTPRequest(path: "/reports/latest")).get()
        for redirect in response.redirects {
            print(redirect.status, redirect.url?.absoluteString ?? "", "→", redirect.location?.absoluteString ?? "")
        }
        print("served by", response.url?.absoluteString ?? "")

        #expect(response.redirects.count == 1)
        #expect(response.redirects.first?.url?.absoluteString == "https://api.example.com/v1/reports/latest")
        #expect(response.redirects.first?.location?.absoluteString == "https://files.example.com/r/2026-11.pdf")
        #expect(response.url?.absoluteString == "https://files.example.com/r/2026-11.pdf")
    }

    @Test func printLoaderLinesAsTheArticleShows() async throws {
        let lines = Box<[String]>([])
        let mock = MockLoader()
            .then(status: .found, headers: ["Location": "https://files.example.com/r/2026-11.pdf"])
            .then(status: .ok)
        let chain =
            PrintLoader { line in lines.withLock { $0.append(line) } }
            --> ApplyEnvironment(environment: .production) --> FollowRedirects() --> mock
        _ = try await chain.load(HTTPRequest(path: "/reports/latest")).get()
        let hop = try #require(lines.value.first { $0.hasPrefix("↪") })
        #expect(
            hop.hasSuffix(
                "302 Found GET https://api.example.com/v1/reports/latest → GET https://files.example.com/r/2026-11.pdf")
        )
    }

    @Test func errorSamples() async {
        let strict =
            ApplyEnvironment(environment: .production)
            --> FollowRedirects(maximumNumberOfRedirects: 5)
            --> URLSessionLoader()
        #expect((strict.nextLoader as? FollowRedirects)?.maximumNumberOfRedirects == 5)

        // The switch of the article runs over MockLoader: an unusable Location, then a loop.
        let unusable = MockLoader()
        for _ in 0..<2 { unusable.then(status: .found, headers: ["Location": "file:///etc/passwd"]) }
        let refusing = ApplyEnvironment(environment: .production) --> FollowRedirects() --> unusable
        await handle(strict: refusing)
        let error = await refusing.load(HTTPRequest(path: "/export")).error
        #expect(error?.code == .unusableRedirect)
        #expect(
            error?.message
                == "the server answered 302 Found with the Location 'file:///etc/passwd', which has the scheme 'file'; "
                + "only http and https locations are followed")

        let loop = MockLoader()
        for _ in 0..<2 { loop.then(status: .found, headers: ["Location": "/v1/export"]) }
        let looping = ApplyEnvironment(environment: .production) --> FollowRedirects() --> loop
        await handle(strict: looping)
        #expect(loop.receivedRequests.count == 1)
    }

    private func handle(strict: HTTPLoader) async {
        switch await strict.load(HTTPRequest(path: "/export")) {
        case .success(let response):
            print(response.status)
        case .failure(let error) where error.code == .unusableRedirect:
            // the server answered 302 Found with the Location 'file:///etc/passwd', which has the scheme 'file'; …
            print(error.message)
        case .failure(let error) where error.code == .tooManyRedirects || error.code == .redirectLoop:
            print("redirected in circles after", error.response?.redirects.count ?? 0, "hops")
        case .failure(let error):
            print(error)
        }
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        let article = DocumentationSamples.catalog(of: "HTTP", fromTestFile: #filePath)
            .appendingPathComponent("Redirects.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(missing.isEmpty, "Redirects.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

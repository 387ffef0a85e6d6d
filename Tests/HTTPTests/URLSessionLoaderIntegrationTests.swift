import Foundation
import HTTP
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct IntegrationServerTests {
    /// The test command sets HTTP_REQUIRE_SERVERS=1: then the integration suites must not be skipped.
    @Test func serversArePresentWhenRequired() {
        if TestServers.areRequired {
            #expect(TestServers.httpbin != nil, "HTTP_REQUIRE_SERVERS=1 but HTTPBIN_URL is not set")
            #expect(TestServers.nginx != nil, "HTTP_REQUIRE_SERVERS=1 but NGINX_URL is not set")
        }
    }
}

/// `URLSessionLoader` against a real httpbin on loopback, started by `scripts/servers.sh`.
@Suite(.enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct URLSessionLoaderIntegrationTests {
    let base = TestServers.httpbin!
    let loader = URLSessionLoader()

    private func request(_ path: String, method: HTTPMethod = .get, body: any HTTPBody = EmptyBody()) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: base.appendingPathComponent(path), body: body)
        request.headers["Accept"] = "application/json"
        return request
    }

    private struct Payload: Codable, Sendable, Equatable {
        var name: String
        var tags: [String]
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch, .delete])
    func jsonFormAndMultipartBodiesAreEchoed(method: HTTPMethod) async throws {
        let json = try await loader.load(
            request("/anything", method: method, body: JSONBody(Payload(name: "Zoë", tags: ["a"])))
        ).get()
        #expect(json.status == .ok)
        #expect(json.json["method"] as? String == method.rawValue)
        #expect((json.json["json"] as? [String: Any])?["name"] as? String == "Zoë")
        #expect((json.json["headers"] as? [String: String])?["Content-Type"] == "application/json; charset=utf-8")

        let form = try await loader.load(request("/anything", method: method, body: FormBody(["q": "a+b & c"]))).get()
        #expect((form.json["form"] as? [String: String])?["q"] == "a+b & c")

        var multipart = MultipartFormBody()
        multipart.addField(named: "title", value: "Holiday")
        multipart.addFile(named: "notes", filename: "notes.txt", contentType: "text/plain", data: Data("sun".utf8))
        let upload = try await loader.load(request("/anything", method: method, body: multipart)).get()
        #expect((upload.json["form"] as? [String: String])?["title"] == "Holiday")
        #expect((upload.json["files"] as? [String: String])?["notes"] == "sun")
    }

    @Test(arguments: [HTTPMethod.get, .head, .options, .delete])
    func bodilessMethods(method: HTTPMethod) async throws {
        let response = try await loader.load(request("/anything", method: method)).get()
        #expect(response.status == .ok)
        if method == .head { #expect(response.body.isEmpty) }
        if method == .get { #expect(response.json["method"] as? String == "GET") }
    }

    @Test func aNotFoundStatusIsAResponseNotAnError() async throws {
        let response = try await loader.load(request("/status/404")).get()
        #expect(response.status == .notFound)
    }

    @Test func responseHeadersArrive() async throws {
        var req = request("/response-headers")
        req.query = [URLQueryItem(name: "X-Custom", value: "yes please"), URLQueryItem(name: "X-Dup", value: "a")]
        let response = try await loader.load(req).get()
        #expect(response[header: "x-custom"] == "yes please")
        #expect(response.headers["X-DUP"] == "a")
    }

    @Test func redirectsAreFollowed() async throws {
        let response = try await loader.load(request("/redirect/3")).get()
        #expect(response.status == .ok)
        #expect(response.url?.path == "/get")
    }

    @Test func aRequestCanRefuseToFollowRedirects() async throws {
        var req = request("/redirect/1")
        req.redirectPolicy = .doNotFollow
        let response = try await loader.load(req).get()
        #expect(response.status == .found)
        #expect(response[header: "Location"]?.hasSuffix("/get") == true)
    }

    @Test func credentialsNeverFollowARedirectToAnotherOrigin() async throws {
        // localhost and 127.0.0.1 are different origins for the same server.
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.host = "localhost"
        components.path = "/redirect-to"
        components.queryItems = [
            URLQueryItem(name: "url", value: base.appendingPathComponent("/headers").absoluteString)
        ]
        var req = HTTPRequest(url: try #require(components.url))
        req.headers = [
            "Authorization": "Bearer secret", "Cookie": "session=secret", "Proxy-Authorization": "Basic x",
            "X-Keep": "1",
        ]
        let response = try await loader.load(req).get()
        let echoed = try #require(response.json["headers"] as? [String: String])
        #expect(response.url?.host == base.host)
        #expect(echoed["Authorization"] == nil)
        #expect(echoed["Cookie"] == nil)
        #expect(echoed["Proxy-Authorization"] == nil)
        #expect(echoed["X-Keep"] == "1")
    }

    @Test func credentialsFollowARedirectWithinTheSameOrigin() async throws {
        var req = request("/redirect-to")
        req.query = [URLQueryItem(name: "url", value: "/headers")]
        req.headers["Authorization"] = "Bearer same-origin"
        let response = try await loader.load(req).get()
        #expect((response.json["headers"] as? [String: String])?["Authorization"] == "Bearer same-origin")
    }

    @Test func gzipIsDecoded() async throws {
        let response = try await loader.load(request("/gzip")).get()
        #expect(response.json["gzipped"] as? Bool == true)
    }

    // The two tests below time a load in a task of its own, at high priority, from inside that task: what they
    // measure is the loader, not how long the test's own task waits to be scheduled again while the other
    // suites keep the cooperative pool busy (under ThreadSanitizer that wait reached 1.4–2.6 s here; measured
    // this way, the timeout takes 1.00–1.03 s and the cancellation under 20 ms).

    @Test func aTimeoutFailsWithTimedOut() async throws {
        // httpbin answers /delay/10 after ten seconds; a one-second timeout ends the load long before that.
        var timed = request("/delay/10")
        timed.timeout = .seconds(1)
        let (result, elapsed) = await Task(priority: .high) { [loader] in
            let start = ContinuousClock.now
            let result = await loader.load(timed)
            return (result, ContinuousClock.now - start)
        }.value
        #expect(result.error?.code == .timedOut)
        #expect(elapsed < .seconds(3))
    }

    @Test func cancellingTheTaskCancelsTheRequestAtOnce() async throws {
        let slow = request("/delay/10")
        let load = Task(priority: .high) { [loader] in
            let result = await loader.load(slow)
            return (result, finishedAt: ContinuousClock.now)
        }
        // The cancellation comes from a high-priority task too: on a loaded machine the test's own task may wake
        // from its sleep only after the server has answered.
        let cancelledAt = await Task(priority: .high) {
            try? await Task.sleep(for: .milliseconds(100))
            let now = ContinuousClock.now
            load.cancel()
            return now
        }.value
        let (result, finishedAt) = await load.value
        #expect(result.error?.code == .cancelled)
        // The server would answer ten seconds after the request; a prompt cancellation returns long before.
        #expect(finishedAt - cancelledAt < .seconds(1))
    }

    @Test func cancellingAnHTTPTaskCancelsTheRequest() async throws {
        let results = Locked<[HTTPResult]>([])
        let task = loader.load(request("/delay/10")) { result in results.withLock { $0.append(result) } }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        #expect(results.value.first?.error?.code == .cancelled)
        await loader.reset()  // returns once the URLSession task has really ended
        #expect(results.value.count == 1)
    }

    @Test func downloadsArriveByteExact() async throws {
        // httpbin caps /bytes and /range at 100 KiB, and its seeded /bytes shares one random generator across
        // threads; /range serves a known pattern, so every byte can be checked.
        let size = 102_400
        let response = try await loader.load(request("/range/\(size)")).get()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        #expect(response.body.count == size)
        #expect(response.body == Data((0..<size).map { alphabet[$0 % 26] }))

        // /bytes/1048576 is served capped at 100 KiB: every byte the server declares arrives.
        let bytes = try await loader.load(request("/bytes/1048576")).get()
        #expect(bytes.body.count == 102_400)
        #expect(bytes[header: "Content-Length"] == "\(bytes.body.count)")
    }

    @Test func aSessionMadeByTheCallerWorksWithTheLoadersDelegate() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let custom = URLSessionLoader { delegate in
            URLSession(configuration: URLSessionLoader.defaultConfiguration, delegate: delegate, delegateQueue: queue)
        }
        #expect(custom.session.delegateQueue === queue)
        var req = request("/redirect-to")
        req.query = [URLQueryItem(name: "url", value: "/get")]
        req.redirectPolicy = .doNotFollow
        #expect(try await custom.load(req).get().status == .found)
        #expect(try await custom.load(request("/get")).get().status == .ok)
    }

    @Test func aMegabyteRoundTripsByteExact() async throws {
        var generator = SplitMix64(seed: 42)
        let payload = Data((0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let body = DataBody(payload, contentType: "application/octet-stream")
        let response = try await loader.load(request("/anything", method: .post, body: body)).get()
        let echoed = try #require(response.json["data"] as? String)
        let prefix = "data:application/octet-stream;base64,"
        #expect(echoed.hasPrefix(prefix))
        #expect(Data(base64Encoded: String(echoed.dropFirst(prefix.count))) == payload)
    }

    @Test func basicAuthWithAHandSetHeader() async throws {
        let path = "/basic-auth/user/passwd"
        let unauthorized = try await loader.load(request(path)).get()
        #expect(unauthorized.status == .unauthorized)
        #expect(unauthorized[header: "WWW-Authenticate"]?.hasPrefix("Basic") == true)
        var req = request(path)
        req.headers["Authorization"] = "Basic " + Data("user:passwd".utf8).base64EncodedString()
        let authorized = try await loader.load(req).get()
        #expect(authorized.status == .ok)
        #expect(authorized.json["authenticated"] as? Bool == true)
    }

    @Test func concurrentLoadsWithRandomCancellationsEachCompleteOnce() async throws {
        let count = 300
        let outcomes = await withTaskGroup(of: HTTPError.Code?.self, returning: [HTTPError.Code?].self) { group in
            for index in 0..<count {
                let req = request("/bytes/64")
                let load = Task { await loader.load(req) }
                group.addTask {
                    if index.isMultiple(of: 3) {
                        try? await Task.sleep(for: .microseconds(Int.random(in: 0...3_000)))
                        load.cancel()
                    }
                    return await load.value.error?.code
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count == count)
        #expect(outcomes.allSatisfy { $0 == nil || $0 == .cancelled })
        #expect(outcomes.contains { $0 == nil })
    }
}

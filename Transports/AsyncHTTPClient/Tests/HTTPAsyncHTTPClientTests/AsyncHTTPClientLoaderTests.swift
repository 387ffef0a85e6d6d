import AsyncHTTPClient
import Foundation
import HTTP
import HTTPAsyncHTTPClient
import NIOCore
import NIOHTTP1
import Testing

/// Runs `body` with a loader of its own, shut down afterwards.
func withLoader<T>(
    _ loader: AsyncHTTPClientLoader = AsyncHTTPClientLoader(), _ body: (AsyncHTTPClientLoader) async throws -> T
) async throws -> T {
    do {
        let value = try await body(loader)
        await loader.shutdown()
        return value
    } catch {
        await loader.shutdown()
        throw error
    }
}

/// The request and response mapping, errors, cancellation, metrics and events, against the local httpbin.
@Suite(
    .timeLimit(.minutes(3)), .enabled(if: TestServers.haveHTTP, "needs the local servers: run through scripts/test.sh"))
struct AsyncHTTPClientLoaderTests {
    let httpbin = TestServers.httpbin!

    func request(_ path: String, method: HTTP.HTTPMethod = .get, body: any HTTPBody = EmptyBody()) -> HTTPRequest {
        HTTPRequest(method: method, url: URL(string: httpbin.absoluteString + path)!, body: body)
    }

    @Test func aGetReturnsStatusHeadersAndBody() async throws {
        try await withLoader { loader async throws in
            var request = request("/get?answer=42")
            request.headers["X-Test"] = "hello"
            let response = try await loader.load(request).get()
            #expect(response.status == .ok)
            #expect(response.headers["Content-Type"] == "application/json")
            let json = response.json
            #expect((json["args"] as? [String: String])?["answer"] == "42")
            #expect((json["headers"] as? [String: String])?["X-Test"] == "hello")
        }
    }

    @Test(arguments: [404, 500, 429])
    func everyStatusIsAResponse(status: Int) async throws {
        try await withLoader { loader async throws in
            let response = try await loader.load(request("/status/\(status)")).get()
            #expect(response.status.rawValue == status)
        }
    }

    @Test func aRedirectComesBackUnfollowed() async throws {
        try await withLoader { loader async throws in
            let response = try await loader.load(request("/redirect-to?url=/get&status_code=302")).get()
            #expect(response.status.rawValue == 302)
            #expect(response.headers["Location"] == "/get")
        }
    }

    @Test func followRedirectsInTheChainFollowsWhatTheTransportHandsBack() async throws {
        try await withLoader { loader async throws in
            let chain = FollowRedirects() --> loader
            let response = try await chain.load(request("/redirect/2")).get()
            #expect(response.status == .ok)
            #expect(response.url?.path == "/get")
            #expect(response.redirects.count == 2)
        }
    }

    @Test func aJSONBodyIsSentWithItsHeaders() async throws {
        try await withLoader { loader async throws in
            let response = try await loader.load(request("/anything", method: .post, body: JSONBody(["a": 1]))).get()
            let json = response.json
            #expect((json["json"] as? [String: Int]) == ["a": 1])
            #expect((json["headers"] as? [String: String])?["Content-Type"] == "application/json; charset=utf-8")
        }
    }

    @Test func aMalformedRequestFailsBeforeSending() async throws {
        try await withLoader { loader async throws in
            var request = request("/get")
            request.headers["X-Bad"] = "a\r\nInjected: yes"
            let error = try #require(await loader.load(request).error)
            #expect(error.code == .invalidRequest)
            #expect(error.metrics == nil, "nothing was handed to the transport")
        }
    }

    @Test func aClosedPortCannotConnectAtOnce() async throws {
        try await withLoader { loader async throws in
            let started = ContinuousClock.now
            let error = try #require(await loader.load(HTTPRequest(url: URL(string: "http://127.0.0.1:9/")!)).error)
            #expect(error.code == .cannotConnect, "\(error)")
            #expect(error.message.contains("127.0.0.1:9"), "\(error.message)")
            #expect(ContinuousClock.now - started < .seconds(5), "a refused connection is not retried")
        }
    }

    @Test func aSlowServerTimesOut() async throws {
        try await withLoader { loader async throws in
            var request = request("/delay/5")
            request.timeout = .milliseconds(500)
            let started = ContinuousClock.now
            let error = try #require(await loader.load(request).error)
            #expect(error.code == .timedOut, "\(error)")
            #expect(ContinuousClock.now - started < .seconds(4))
        }
    }

    /// Alone, a load goes through AsyncHTTPClient's delegate API; beside another, through its async API: the
    /// deadline covers the whole transfer either way.
    @Test(arguments: [false, true])
    func theTimeoutCoversTheBodyAsWellAsTheHead(besideAnotherLoad: Bool) async throws {
        try await withLoader { loader async throws in
            let otherStarted = Box(false)
            let chain = observing(loader, started: otherStarted)
            let other = besideAnotherLoad ? Task { [request = request("/delay/2")] in await chain.load(request) } : nil
            if other != nil { try await eventually { otherStarted.value } }
            // The head at once, then ten bytes over ten seconds; two seconds for the head even on a loaded machine (under
            // ThreadSanitizer beside two CPU burners, with the suite's other tests, it once took longer than 700 ms).
            var request = request("/drip")
            request.query = [URLQueryItem(name: "numbytes", value: "10"), URLQueryItem(name: "duration", value: "10")]
            request.timeout = .seconds(2)
            let started = ContinuousClock.now
            let error = try #require(await loader.load(request).error)
            #expect(error.code == .timedOut, "\(error)")
            #expect(error.response?.status == .ok, "the head that had arrived is kept: \(error)")
            #expect(error.metrics?.responseHeadReceived != nil)
            #expect(ContinuousClock.now - started < .seconds(8), "the timeout ended the body, not the server")
            if let other { #expect(try await other.finished().response?.status == .ok) }
        }
    }

    /// `loader` observed: `started` becomes true when it hands a request to AsyncHTTPClient.
    func observing(_ loader: HTTPLoader, started: Box<Bool>) -> HTTPLoader {
        Observe { event in if event.kind == .attemptStarted { started.withLock { $0 = true } } } --> loader
    }

    @Test func cancellingTheTaskCancelsTheLoadPromptly() async throws {
        try await withLoader { loader async throws in
            let started = Box(false)
            let chain = observing(loader, started: started)
            let load = Task { [request = request("/delay/10")] in await chain.load(request) }
            try await eventually { started.value }
            let cancelled = ContinuousClock.now
            load.cancel()
            let error = try #require(try await load.finished().error)
            #expect(error.code == .cancelled)
            #expect(ContinuousClock.now - cancelled < .seconds(5), "long before the server would have answered")
            // The loader is idle again: a drain returns at once.
            let reset: Void? = await withDeadline(seconds: 5) { await loader.reset() }
            #expect(reset != nil)
        }
    }

    @Test func aLoadCarriesMetricsAndEmitsEvents() async throws {
        try await withLoader { loader async throws in
            let events = Box<[HTTPEvent.Kind]>([])
            let chain = Observe { event in events.withLock { $0.append(event.kind) } } --> loader
            let response = try await chain.load(request("/anything", method: .post, body: DataBody(Data(count: 1000))))
                .get()
            let metrics = try #require(response.metrics)
            #expect(metrics.requestBodyBytesSent == 1000)
            #expect(metrics.responseBodyBytesReceived == Int64(response.body.count))
            #expect(metrics.responseHeadReceived != nil)
            #expect(metrics.requestSent != nil)
            #expect(metrics.end >= metrics.responseHeadReceived!)
            #expect(
                events.value == [.loadStarted, .attemptStarted, .responseHeadReceived, .attemptFinished, .loadFinished])
        }
    }

    @Test func uploadProgressReachesTheBodysLength() async throws {
        try await withLoader { loader async throws in
            let reports = Box<[HTTPProgress]>([])
            var request = request("/anything", method: .post, body: DataBody(Data(count: 300_000)))
            request.progressHandler = { progress in reports.withLock { $0.append(progress) } }
            _ = try await loader.load(request).get()
            let last = try #require(reports.value.last)
            #expect(last.bytesSent == 300_000)
            #expect(last.totalBytesToSend == 300_000)
            #expect(last.bytesReceived == last.totalBytesToReceive)
        }
    }

    @Test func afterShutdownLoadsFailAtOnce() async throws {
        let loader = AsyncHTTPClientLoader()
        await loader.shutdown()
        await loader.shutdown()  // twice is fine
        let error = try #require(await loader.load(request("/get")).error)
        #expect(error.code == .cannotConnect)
        #expect(error.message.contains("shut down"))
    }

    @Test func shutdownLetsTheLoadsInFlightFinish() async throws {
        let loader = AsyncHTTPClientLoader()
        let started = Box(false)
        let chain = observing(loader, started: started)
        let inFlight = Task { [request = request("/delay/1")] in await chain.load(request) }
        try await eventually { started.value }
        await loader.shutdown()
        #expect(try await inFlight.value.get().status == .ok)
        #expect(await loader.load(request("/get")).error?.code == .cannotConnect)
    }

    @Test func aBorrowedClientIsNeverShutDown() async throws {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let loader = AsyncHTTPClientLoader(client: client)
        #expect(try await loader.load(request("/get")).get().status == .ok)
        await loader.shutdown()
        #expect(await loader.load(request("/get")).error?.code == .cannotConnect)
        // The client is still the caller's, and still works.
        let response = try await client.execute(request: HTTPClient.Request(url: httpbin.absoluteString + "/get")).get()
        #expect(response.status == .ok)
        try await client.shutdown()
    }

    @Test func aResetDrainsLoadsInFlightAndRefusesNewOnes() async throws {
        try await withLoader { loader async throws in
            let started = Box(false)
            let chain = observing(loader, started: started)
            // Three seconds: long enough that the reset below begins while the load is in flight, even on a machine
            // as busy as ThreadSanitizer beside two CPU burners (a second was not).
            let inFlight = Task { [request = request("/delay/3")] in await chain.load(request) }
            try await eventually { started.value }
            // The reset refuses new loads at once, waits for the one in flight, and then accepts loads again.
            let reset = Task { await chain.reset(mode: .drain) }
            try await eventually { loader.isResetting }
            #expect(await loader.load(request("/get")).error?.code == .resetInProgress)
            #expect(try await inFlight.finished().get().status == .ok, "a drained load finishes")
            try await reset.finished()
            #expect(try await loader.load(request("/get")).get().status == .ok, "loads are accepted again")
        }
    }

    @Test func aCancellingResetCancelsLoadsInFlight() async throws {
        try await withLoader { loader async throws in
            let started = Box(false)
            let chain = observing(loader, started: started)
            let inFlight = Task { [request = request("/delay/10")] in await chain.load(request) }
            try await eventually { started.value }
            // The server would answer after ten seconds: only the cancel can end the load with `.cancelled`.
            await loader.reset(mode: .cancel)
            #expect(try await inFlight.finished(within: 5).error?.code == .cancelled)
        }
    }

    @Test func describesItsConfiguration() async throws {
        try await withLoader { loader async throws in
            #expect(loader.configurationDescription.contains("connectTimeout: 10 s"))
        }
    }
}

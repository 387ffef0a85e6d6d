import Foundation
import HTTP
import HTTPTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Every `swift` code block of the DocC articles that name this file (Sources/HTTP/HTTP.docc: HTTP.md,
// BuildingAChain.md, WritingALoader.md, TestingWithMockLoader.md, URLSessionBehaviour.md) is in this file, and
// `DocumentationExamplesTests.SamplesMatchTheArticles` fails when one is not: edit a sample here and in its
// article together. The comparison ignores indentation, blank lines, `import` lines and a leading `private` or
// `fileprivate`: declarations that sit at file scope here are private so they cannot clash with other test files.
//
// Samples that would reach the network (a `URLSessionLoader` that loads) are compiled and never run; everything
// else runs against `MockLoader` and is checked against what its article says.

@Suite(.noHang) struct DocumentationExamplesTests {}

// MARK: - HTTP.md

// HTTP.md, "Overview". Loads over the network: compiled, never run.
private func overviewSample() async {
    let chain = ResetGuard() --> ApplyEnvironment(environment: .production) --> URLSessionLoader()

    switch await chain.load(HTTPRequest(path: "/people/42")) {
    case .success(let response): print(response.status)  // 200 OK, 404 Not Found, …: every status is a response
    case .failure(let error): print(error)  // no response: cannotConnect, timedOut, cancelled, invalidRequest, …
    }
}

// MARK: - BuildingAChain.md

// BuildingAChain.md, "Describe your servers".
extension ServerEnvironment {
    fileprivate static let development = ServerEnvironment(
        scheme: "http", host: "localhost", port: 8080, pathPrefix: "/v1")
    fileprivate static let staging = ServerEnvironment(
        host: "staging.example.com", pathPrefix: "/v1", headers: ["X-Debug": "1"])
    fileprivate static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

// BuildingAChain.md, "One chain per environment".
private func makeChain(
    for environment: ServerEnvironment,
    verbose: Bool,
    terminal: HTTPLoader = URLSessionLoader()
) -> ResetGuard {
    ResetGuard()
        --> ApplyEnvironment(environment: environment)
        --> ModifyRequest { request in
            var copy = request
            copy.headers["X-Request-ID"] = request.id.uuidString
            return copy
        }
        --> (verbose ? PrintLoader() : nil)
        --> terminal
}

// BuildingAChain.md, "Load".
private struct Person: Decodable, Sendable {
    var name: String
}

private struct UnexpectedStatus: Error {
    var status: HTTPStatus
}

/// The person with `id`, or `nil` when the server has none.
private func person(_ id: Int, from chain: HTTPLoader) async throws -> Person? {
    let response = try await chain.load(HTTPRequest(path: "/people/\(id)")).get()
    switch response.status {
    case .ok: return try JSONDecoder().decode(Person.self, from: response.body)
    case .notFound: return nil
    default: throw UnexpectedStatus(status: response.status)
    }
}

extension DocumentationExamplesTests {
    @Suite(.noHang) struct BuildingAChain {
        @Test func requestsGoWhereTheirEnvironmentSays() async throws {
            // BuildingAChain.md, "Describe your servers".
            let relative = HTTPRequest(path: "/people/42")
            // sent to https://api.example.com/v1/people/42

            var elsewhere = HTTPRequest(path: "/people/42")
            elsewhere.serverEnvironment = .staging
            // sent to https://staging.example.com/v1/people/42, with X-Debug: 1

            let absolute = HTTPRequest(url: URL(string: "https://cdn.example.com/avatars/42.png")!)
            // sent as it is

            let mock = MockLoader().then(status: .ok).then(status: .ok).then(status: .ok)
            let chain = ApplyEnvironment(environment: .production) --> mock
            for request in [relative, elsewhere, absolute] { _ = await chain.load(request) }
            let sent = mock.receivedRequests
            try #require(sent.count == 3)
            #expect(sent[0].url?.absoluteString == "https://api.example.com/v1/people/42")
            #expect(sent[1].url?.absoluteString == "https://staging.example.com/v1/people/42")
            #expect(sent[1].headers["X-Debug"] == "1")
            #expect(sent[2].url?.absoluteString == "https://cdn.example.com/avatars/42.png")
            #expect(sent[2].headers.isEmpty)
            #expect(ServerEnvironment.development.scheme == "http")
        }

        @Test func modifyRequestAddsHeaders() async throws {
            // BuildingAChain.md, "Change requests on the way".
            let addRequestHeaders = ModifyRequest { request in
                var copy = request
                if copy.headers["Accept"] == nil { copy.headers["Accept"] = "application/json" }
                copy.headers["X-Request-ID"] = request.id.uuidString
                return copy
            }

            let mock = MockLoader().then(status: .ok).then(status: .ok)
            let chain = addRequestHeaders --> mock
            let plain = HTTPRequest(host: "api.example.com", path: "/people/42")
            var picky = plain
            picky.headers["Accept"] = "text/csv"
            _ = await chain.load(plain)
            _ = await chain.load(picky)
            let sent = mock.receivedRequests
            try #require(sent.count == 2)
            #expect(sent[0].headers["Accept"] == "application/json")
            #expect(sent[1].headers["Accept"] == "text/csv")
            // Copies share the id, so both carry the same X-Request-ID.
            #expect(sent[0].headers["X-Request-ID"] == plain.id.uuidString)
            #expect(sent[1].headers["X-Request-ID"] == plain.id.uuidString)
        }

        @Test func aThrowingModifierFailsTheRequestBeforeItIsSent() async throws {
            // BuildingAChain.md, "Change requests on the way".
            struct PlainHTTPRefused: Error {}

            let requireHTTPS = ModifyRequest { request in
                guard request.scheme == "https" else { throw PlainHTTPRefused() }
                return request
            }

            let mock = MockLoader().then(status: .ok)
            let chain = requireHTTPS --> mock
            let result = await chain.load(HTTPRequest(scheme: "http", host: "api.example.com"))
            let error = try #require(throws: HTTPError.self) { try result.get() }
            #expect(error.code == .invalidRequest)
            #expect(error.underlyingError is PlainHTTPRefused)
            #expect(mock.receivedRequests.isEmpty)
            #expect(try await chain.load(HTTPRequest(host: "api.example.com")).get().status == .ok)
        }

        @Test func printLoaderWritesRedactedLinesToItsSink() async throws {
            // BuildingAChain.md, "Log what goes through".
            let (lines, sink) = AsyncStream.makeStream(of: String.self)
            let logger = PrintLoader(redaction: .standard.adding("X-Session"), includesHeaders: true) { line in
                sink.yield(line)
            }

            let mock = MockLoader().then(status: .ok, body: Data(repeating: 0x20, count: 213))
            let chain = logger --> mock
            var request = HTTPRequest(host: "api.example.com", path: "/v1/people/42")
            request.headers["Authorization"] = "Bearer secret-token"
            request.headers["X-Session"] = "secret-session"
            _ = await chain.load(request)
            sink.finish()
            var written: [String] = []
            for await line in lines { written.append(line) }

            let tag = try #require(mock.receivedRequests.first?.loadID).description
            try #require(written.count == 2)
            #expect(
                written[0]
                    == "→ \(tag) GET https://api.example.com/v1/people/42"
                    + " [Authorization: Bearer <redacted>; X-Session: <redacted>]")
            #expect(written[1].hasPrefix("← \(tag) 200 OK GET https://api.example.com/v1/people/42 · 213 bytes · "))
            #expect(!written.joined().contains("secret"))
        }

        @Test func resetGuardRefusesLoadsWhileTheChainResets() async throws {
            let (started, markStarted) = AsyncStream.makeStream(of: Void.self)
            let (release, releaseHandler) = AsyncStream.makeStream(of: Void.self)
            let mock = MockLoader().then { request in
                markStarted.yield()
                for await _ in release { break }
                return .success(HTTPResponse(request: request))
            }
            let chain = makeChain(for: .production, verbose: false, terminal: mock)
            let inFlight = Task { await chain.load(HTTPRequest(path: "/slow")) }
            for await _ in started { break }

            // MockLoader's reset waits for the running handler, so the reset lasts until the handler is released.
            let reset = Task { await chain.reset() }
            var during = await chain.load(HTTPRequest(path: "/during"))
            let deadline = ContinuousClock.now + .seconds(standardDeadline)
            while during.error?.code != .resetInProgress {  // until the reset has reached the guard
                try #require(ContinuousClock.now < deadline, "the reset did not reach the guard: \(during)")
                try await Task.sleep(for: .milliseconds(1))
                during = await chain.load(HTTPRequest(path: "/during"))
            }
            releaseHandler.yield()
            try await reset.finished()

            #expect(try await inFlight.finished().get().status == .ok)  // the load in flight completed
            mock.then(status: .ok)
            #expect(try await chain.load(HTTPRequest(path: "/after")).get().status == .ok)
        }

        @Test func aChainPerEnvironment() async throws {
            // BuildingAChain.md, "One chain per environment". Builds URLSessionLoaders, never loads through them.
            #if DEBUG
            let chain = makeChain(for: .development, verbose: true)
            #else
            let chain = makeChain(for: .production, verbose: false)
            #endif

            #expect(chain.nextLoader is ApplyEnvironment)
            #expect(chain.nextLoader?.nextLoader is ModifyRequest)
            #if DEBUG
            #expect((chain.nextLoader as? ApplyEnvironment)?.environment.host == "localhost")
            #expect(chain.nextLoader?.nextLoader?.nextLoader is PrintLoader)
            #expect(chain.nextLoader?.nextLoader?.nextLoader?.nextLoader is URLSessionLoader)
            #else
            #expect(chain.nextLoader?.nextLoader?.nextLoader is URLSessionLoader)
            #endif

            // The same function with a mock in place of the network: the optional link is skipped when nil.
            let mock = MockLoader().then(status: .ok)
            let quiet = makeChain(for: .staging, verbose: false, terminal: mock)
            #expect(quiet.nextLoader?.nextLoader?.nextLoader === mock)
            let sent = try await quiet.load(HTTPRequest(path: "/people/42")).get().request
            #expect(sent.url?.absoluteString == "https://staging.example.com/v1/people/42")
            #expect(sent.headers["X-Request-ID"] == sent.id.uuidString)
            #expect(sent.headers["X-Debug"] == "1")
        }

        @Test func loadingAPerson() async throws {
            let json = Data(#"{"name":"Zoë"}"#.utf8)
            let mock = MockLoader()
                .then(status: .ok, body: json)
                .then(status: .notFound)
                .then(status: .internalServerError)
                .then(failWith: .cannotConnect)
            let chain = makeChain(for: .production, verbose: false, terminal: mock)

            #expect(try await person(42, from: chain)?.name == "Zoë")
            #expect(try await person(43, from: chain) == nil)  // a 404 is a response, and means "none" here
            await #expect(throws: UnexpectedStatus.self) { try await person(44, from: chain) }
            await #expect(throws: HTTPError.self) { try await person(45, from: chain) }
            #expect(
                mock.receivedRequests.map(\.path) == [
                    "/v1/people/42", "/v1/people/43", "/v1/people/44", "/v1/people/45",
                ])
        }

        @Test func cancellingALoadCancelsTheTask() async throws {
            let (started, markStarted) = AsyncStream.makeStream(of: Void.self)
            let mock = MockLoader().then { request in
                markStarted.yield()
                try? await Task.sleep(for: .seconds(60))
                return .success(HTTPResponse(request: request))
            }
            let chain = makeChain(for: .production, verbose: false, terminal: mock)
            let load = Task { await chain.load(HTTPRequest(path: "/people/42")) }
            for await _ in started { break }
            load.cancel()
            let result = await value(of: load)
            #expect(try #require(throws: HTTPError.self) { try result.get() }.code == .cancelled)
        }

        @Test func completionHandlersRunExactlyOnce() async throws {
            let mock = MockLoader().then { request in
                try? await Task.sleep(for: .seconds(60))
                return .success(HTTPResponse(request: request))
            }
            let chain = makeChain(for: .production, verbose: false, terminal: mock)
            let reported = Locked<[HTTPResult]>([])
            let report: @Sendable (HTTPResult) -> Void = { result in reported.withLock { $0.append(result) } }

            // BuildingAChain.md, "Completion handlers".
            let task = chain.load(HTTPRequest(path: "/people/42")) { result in
                // Called exactly once, on an arbitrary thread: hop to your own queue or actor if you need one.
                report(result)
            }
            // Later, when the answer is no longer wanted:
            task.cancel()  // `report` is called now with .cancelled, unless it was called already

            #expect(reported.value.count == 1)
            #expect(reported.value.first?.error?.code == .cancelled)
            await withCheckedContinuation { continuation in
                chain.reset { continuation.resume() }  // called once the chain has quiesced
            }
            #expect(reported.value.count == 1)
        }
    }
}

// MARK: - WritingALoader.md

// WritingALoader.md's `RequestsPerHost`, `Gate` and `RetryOnceWhenUnavailable` are in Tests/HTTPTestSupport/ArticleLoaders.swift, so that the
// reset-order and stress tests of every target can put them in their chains.

extension DocumentationExamplesTests {
    @Suite(.noHang) struct WritingALoader {
        @Test func requestsPerHostSitsAfterApplyEnvironment() {
            // WritingALoader.md, "Override only what you change". Builds a URLSessionLoader, never loads.
            let counter = RequestsPerHost()
            let chain = ApplyEnvironment(environment: .production) --> counter --> URLSessionLoader()

            #expect(chain.nextLoader === counter)
            #expect(counter.nextLoader is URLSessionLoader)
        }

        @Test func everyHeldLoadCompletesOnceUnderRandomCancellation() async throws {
            let gate = Gate()
            let mock = MockLoader()
            for _ in 0..<200 { mock.then(status: .ok) }
            gate --> mock
            gate.close()
            let loads = (0..<200).map { _ in Task { await gate.load(HTTPRequest(host: "api.example.com")) } }
            try await eventually { gate.heldCount == 200 }
            for (index, load) in loads.enumerated() where index.isMultiple(of: 2) { load.cancel() }
            #expect(gate.heldCount == 100)  // a cancelled load leaves the queue at once
            gate.open()
            var codes: [HTTPError.Code?] = []
            for load in loads { codes.append(try await load.finished().error?.code) }
            #expect(
                codes.enumerated().allSatisfy { index, code in code == (index.isMultiple(of: 2) ? .cancelled : nil) })
            #expect(mock.receivedRequests.count == 100)
            #expect(gate.heldCount == 0)
        }

        @Test func retryOnceWhenUnavailableSendsAgainOnlyAfterA503() async {
            // WritingALoader.md, "Send again after an answer: count the whole load".
            let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok).then(status: .notFound)
            let retry = RetryOnceWhenUnavailable()
            retry --> mock
            #expect(await retry.load(HTTPRequest(host: "api.example.com")).response?.status == .ok)
            #expect(await retry.load(HTTPRequest(host: "api.example.com")).response?.status == .notFound)
            #expect(mock.receivedRequests.count == 3)
        }

        @Test func retryOnceWhenUnavailableAtTheHeadSendsNothingOnceAResetHasBegun() async throws {
            let gate = GateLoader()
            let retry = RetryOnceWhenUnavailable()
            retry --> gate
            let load = Task { await retry.load(HTTPRequest(host: "api.example.com")) }
            try await gate.waitForRunning(1)
            let reset = Task { await retry.reset() }
            try await eventually { retry.isResetting }
            // Counted at the head too: the reset waits for the whole load, not only for the attempt in flight.
            #expect(retry.participation.inFlight.runningCount == 1)
            gate.releaseOldest(with: .serviceUnavailable)

            let result = try await load.finished()
            try await reset.finished()
            #expect(result.error?.code == .resetInProgress)
            #expect(gate.arrivals.count == 1)
        }
    }
}

// TestingWithMockLoader.md, "Give every wait a deadline".
/// Polls `condition` until it holds, sleeping between polls; the test fails and stops after `seconds`.
private func waitUntil(seconds: Double = 30, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        try #require(ContinuousClock.now < deadline, "condition not met within \(seconds) s")
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// The task's value; after `seconds` the task is cancelled and the test fails.
private func value<T: Sendable>(of task: Task<T, Never>, within seconds: Double = 30) async -> T {
    let deadline = Task {
        try await Task.sleep(for: .seconds(seconds))
        task.cancel()
    }
    let value = await task.value
    deadline.cancel()
    if case .success = await deadline.result { Issue.record("the task took longer than \(seconds) s") }
    return value
}

// MARK: - TestingWithMockLoader.md

extension DocumentationExamplesTests {
    @Suite(.noHang) struct TestingWithMockLoader {
        // TestingWithMockLoader.md, "Queue answers".
        @Test func answersInOrder() async throws {
            let mock = MockLoader()
                .then { request in .success(HTTPResponse(request: request, body: Data(#"{"name":"Zoë"}"#.utf8))) }
                .then(status: .notFound, headers: ["Content-Type": "application/problem+json"])
                .then(failWith: .timedOut, message: "the server did not answer")
            let request = HTTPRequest(host: "api.example.com", path: "/people/42")

            let first = try await mock.load(request).get()
            #expect(String(decoding: first.body, as: UTF8.self) == #"{"name":"Zoë"}"#)

            let second = try await mock.load(request).get()
            #expect(second.status == .notFound)  // a 404 is a response, not an error

            let third = await mock.load(request)
            let timeout = try #require(throws: HTTPError.self) { try third.get() }
            #expect(timeout.code == .timedOut)

            let fourth = await mock.load(request)  // no handler left
            #expect(throws: HTTPError.self) { try fourth.get() }
            #expect(mock.pendingHandlerCount == 0)
        }

        // TestingWithMockLoader.md, "Check what was sent".
        @Test func relativeRequestsGoToTheEnvironment() async throws {
            let mock = MockLoader().then(status: .ok)
            let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
            let chain = ApplyEnvironment(environment: production) --> mock

            _ = await chain.load(HTTPRequest(path: "/people/42"))

            let sent = try #require(mock.receivedRequests.first)
            #expect(sent.url?.absoluteString == "https://api.example.com/v1/people/42")
        }

        // TestingWithMockLoader.md, "Answer from the request, or later".
        @Test func aHandlerCanActLikeAServer() async throws {
            let mock = MockLoader().then { request in
                guard request.headers["Authorization"] == "Bearer good" else {
                    return .success(HTTPResponse(request: request, status: .unauthorized))
                }
                try? await Task.sleep(for: .milliseconds(10))  // a slow server
                return .success(HTTPResponse(request: request, status: .noContent))
            }
            var request = HTTPRequest(method: .delete, host: "api.example.com", path: "/people/42")
            request.headers["Authorization"] = "Bearer good"

            #expect(try await mock.load(request).get().status == .noContent)
        }

        // TestingWithMockLoader.md, "Test cancellation".
        @Test func cancellingTheTaskCancelsTheLoad() async throws {
            let (started, markStarted) = AsyncStream.makeStream(of: Void.self)
            let mock = MockLoader().then { request in
                markStarted.yield()
                try? await Task.sleep(for: .seconds(60))  // ends early when the load is cancelled
                return .success(HTTPResponse(request: request))
            }

            let load = Task { await mock.load(HTTPRequest(host: "api.example.com")) }
            for await _ in started { break }
            load.cancel()

            let result = await value(of: load)
            let error = try #require(throws: HTTPError.self) { try result.get() }
            #expect(error.code == .cancelled)
        }

        // TestingWithMockLoader.md, "Test cancellation".
        @Test func cancellingAnHTTPTaskCompletesItAtOnce() async throws {
            let (started, markStarted) = AsyncStream.makeStream(of: Void.self)
            let mock = MockLoader().then { request in
                markStarted.yield()
                try? await Task.sleep(for: .seconds(60))
                return .success(HTTPResponse(request: request))
            }
            let (results, deliver) = AsyncStream.makeStream(of: HTTPResult.self)

            let task = mock.load(HTTPRequest(host: "api.example.com")) { result in deliver.yield(result) }
            for await _ in started { break }
            task.cancel()
            deliver.finish()

            var delivered: [HTTPResult] = []
            for await result in results { delivered.append(result) }
            #expect(delivered.count == 1)
            let error = try #require(throws: HTTPError.self) { try delivered.first?.get() }
            #expect(error.code == .cancelled)
            #expect(task.isFinished)
            await mock.reset()  // returns once the handler has returned
        }

        // TestingWithMockLoader.md, "Test your own loader".
        @Test func countsRequestsPerHostUntilReset() async {
            let counter = RequestsPerHost()
            let mock = MockLoader().then(status: .ok).then(status: .notFound).then(failWith: .cannotConnect)
            let chain = ApplyEnvironment(environment: .production) --> counter --> mock

            _ = await chain.load(HTTPRequest(path: "/people/1"))
            _ = await chain.load(HTTPRequest(path: "/people/2"))
            _ = await chain.load(HTTPRequest(url: URL(string: "https://cdn.example.com/a.png")!))

            #expect(counter.count(for: "api.example.com") == 2)
            #expect(counter.count(for: "cdn.example.com") == 1)
            await chain.reset()
            #expect(counter.count(for: "api.example.com") == 0)
        }

        @Test func aHeldRequestThatIsCancelledNeverReachesTheServer() async throws {
            let gate = Gate()
            let mock = MockLoader().then(status: .ok)
            gate --> mock
            gate.close()

            let load = Task { await gate.load(HTTPRequest(host: "api.example.com")) }
            try await waitUntil { gate.heldCount > 0 }
            load.cancel()

            let result = await value(of: load)
            #expect(try #require(throws: HTTPError.self) { try result.get() }.code == .cancelled)
            #expect(gate.heldCount == 0)
            #expect(mock.receivedRequests.isEmpty)
        }

        @Test func openingTheGateSendsHeldRequestsAndResetRefusesThem() async throws {
            let gate = Gate()
            let mock = MockLoader().then(status: .ok)
            gate --> mock
            gate.close()

            let sent = Task { await gate.load(HTTPRequest(host: "api.example.com")) }
            try await waitUntil { gate.heldCount > 0 }
            gate.open()
            #expect(try await value(of: sent).get().status == .ok)

            gate.close()
            let refused = Task { await gate.load(HTTPRequest(host: "api.example.com")) }
            try await waitUntil { gate.heldCount > 0 }
            await gate.reset()
            let result = await value(of: refused)
            #expect(try #require(throws: HTTPError.self) { try result.get() }.code == .resetInProgress)
            #expect(mock.receivedRequests.count == 1)
        }
    }

    // TestingWithMockLoader.md, "Organise tests in suites".
    // Nested: the time limit of DocumentationExamplesTests applies to it.
    @Suite struct PeopleAPITests {
        let mock = MockLoader()
        let chain: ResetGuard

        init() {
            chain = makeChain(for: .staging, verbose: false, terminal: mock)
        }

        @Test(arguments: [HTTPStatus.notFound, .internalServerError, .tooManyRequests])
        func everyStatusIsAResponse(status: HTTPStatus) async throws {
            mock.then(status: status)
            let response = try await chain.load(HTTPRequest(path: "/people/42")).get()
            #expect(response.status == status)
            #expect(mock.receivedRequests.first?.headers["X-Debug"] == "1")
        }

        @Test func aFailureCarriesTheRequest() async throws {
            mock.then(failWith: .cannotConnect, message: "connection refused")
            let result = await chain.load(HTTPRequest(path: "/people/42"))
            let error = try #require(throws: HTTPError.self) { try result.get() }
            #expect(error.code == .cannotConnect)
            #expect(error.request.host == "staging.example.com")
            #expect(error.description.contains("connection refused"))
        }
    }
}

// MARK: - URLSessionBehaviour.md

// URLSessionBehaviour.md, "Cookies". Builds a loader with the shared cookie storage: compiled, never run.
private func optingBackIn() -> URLSessionLoader {
    let configuration = URLSessionLoader.defaultConfiguration
    configuration.httpCookieStorage = HTTPCookieStorage.shared
    configuration.httpCookieAcceptPolicy = .always
    configuration.httpShouldSetCookies = true
    let loader = URLSessionLoader(configuration: configuration)
    return loader
}

extension DocumentationExamplesTests {
    @Suite(.noHang) struct URLSessionBehaviour {
        @Test func theDefaultConfigurationTurnsURLSessionsOwnStateOff() {
            let configuration = URLSessionLoader.defaultConfiguration
            #expect(configuration.httpCookieStorage == nil)
            #expect(configuration.httpShouldSetCookies == false)
            #expect(configuration.httpCookieAcceptPolicy == .never)
            #expect(configuration.urlCache == nil)
            #expect(configuration.requestCachePolicy == .reloadIgnoringLocalCacheData)
            #expect(configuration.urlCredentialStorage == nil)
        }

        @Test func timeoutsAreKeptToTheMillisecondWithAWholeSecondBackstopOnLinux() throws {
            // URLSessionBehaviour.md, "Timeouts".
            var upload = HTTPRequest(method: .put, host: "api.example.com", path: "/photos/7")
            upload.timeout = .milliseconds(1_500)  // fails after 1.5 s on every platform
            let interval = try upload.urlRequest().timeoutInterval  // 1.5 on Apple platforms, 2.0 on Linux (backstop)

            #if canImport(FoundationNetworking)
            #expect(interval == 2)
            #else
            #expect(interval == 1.5)
            #endif
        }

        @Test func pinsAndClientCertificatesAreSetPerRequest() throws {
            // URLSessionBehaviour.md, "Pinning and client certificates".
            let pinning = try PublicKeyPinning(pins: [
                "d6qzRu9zOECb90Uez27xWltNsj0e1Md7GkYYkVoZWmM=",  // the CA's key
                "E9CZ9INDbd+2eRQozYqqbQ2yXLVKB9+xcprMF+44U1g=",  // a backup key, not in use yet
            ])
            var payment = HTTPRequest(method: .post, host: "api.example.com", path: "/payments")
            payment.serverTrustPolicy = .evaluated(by: pinning)

            var avatar = HTTPRequest(host: "cdn.example.net", path: "/avatars/42.png")
            avatar.serverTrustPolicy = .platformDefault  // not the loader's pins: another company's servers

            // The loader's settings give way to the request's
            let loader = TLSSettings(serverTrustEvaluator: try PublicKeyPinning(pins: [TrustFixtures.root.pin]))
            #expect(loader.resolved(for: payment) == TLSSettings(serverTrustEvaluator: pinning))
            #expect(loader.resolved(for: avatar) == TLSSettings())
            // Where URLSession cannot check pins, the pinned request fails closed; the other one is sent
            let refusal = TransportCapabilities.urlSession.refusal(of: payment, with: loader.resolved(for: payment))
            #expect((refusal != nil) == !TransportCapabilities.urlSession.canEvaluateServerTrust)
            #expect(TransportCapabilities.urlSession.refusal(of: avatar, with: loader.resolved(for: avatar)) == nil)
        }

        // URLSessionBehaviour.md, "Header validation".
        @Test func headerInjectionIsRefusedBeforeSending() throws {
            var request = HTTPRequest(host: "api.example.com", path: "/search")
            request.headers["X-Query"] = "shoes\r\nX-Admin: true"

            let error = try #require(throws: HTTPError.self) { try request.validate() }
            #expect(error.code == .invalidRequest)
            #expect(
                error.message == "header field 'X-Query' has a value containing CR, which could inject header fields")
        }
    }
}

// MARK: - The articles and this file agree

extension DocumentationExamplesTests {
    @Suite(.noHang) struct SamplesMatchTheArticles {
        static let thisFile = URL(fileURLWithPath: #filePath)
        /// This file, and the one with the article's loaders.
        static let sources = [
            thisFile,
            thisFile.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("HTTPTestSupport/ArticleLoaders.swift"),
        ]
        static let catalog = thisFile.deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/HTTP/HTTP.docc")

        /// The articles whose samples live in this file. Each says so in a comment naming this file; any other
        /// article of the catalog that says so is checked too.
        static let articles = [
            "HTTP.md", "BuildingAChain.md", "WritingALoader.md", "TestingWithMockLoader.md", "URLSessionBehaviour.md",
        ]

        static func checkedArticles() throws -> [String] {
            let files = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }
            let marked = try files.filter { file in
                try String(contentsOf: catalog.appendingPathComponent(file), encoding: .utf8)
                    .contains("DocumentationExamplesTests.swift")
            }
            return Array(Set(articles).union(marked)).sorted()
        }

        @Test func theArticlesSayTheirSamplesAreTestedHere() throws {
            for article in Self.articles {
                let markdown = try String(contentsOf: Self.catalog.appendingPathComponent(article), encoding: .utf8)
                #expect(markdown.contains("DocumentationExamplesTests.swift"), "\(article) does not name this file")
            }
        }

        @Test(arguments: try checkedArticles())
        func everySwiftSampleIsInThisFile(article: String) throws {
            let markdown = try String(contentsOf: Self.catalog.appendingPathComponent(article), encoding: .utf8)
            let source = try Self.sources.map { Self.normalized(try String(contentsOf: $0, encoding: .utf8)) }.joined()
            let samples = Self.swiftBlocks(in: markdown)
            #expect(!samples.isEmpty, "\(article) has no swift code block")
            for sample in samples {
                #expect(
                    source.contains(Self.normalized(sample)),
                    "\(article): this sample is not in DocumentationExamplesTests.swift or ArticleLoaders.swift:\n\(sample)"
                )
            }
        }

        static func swiftBlocks(in markdown: String) -> [String] { DocumentationSamples.swiftBlocks(in: markdown) }
        static func normalized(_ code: String) -> String { DocumentationSamples.normalized(code) }
    }
}

// MARK: - Describing chains (BuildingAChain.md, "Print a chain"; WritingALoader.md, "Describe your configuration")

// WritingALoader.md, "Describe your configuration".
/// Sends every request with the API version it was written for.
private final class APIVersion: HTTPLoader, @unchecked Sendable {  // Sendable: `version` is a `let`
    let version: Int
    init(_ version: Int) { self.version = version }

    override var configurationDescription: String { "version: \(version)" }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        var copy = request
        copy.headers["API-Version"] = String(version)
        return await super.load(copy)
    }
}

extension DocumentationExamplesTests {
    @Suite(.noHang) struct DescribingChains {
        @Test func aChainPrintsOneLinePerLoader() {
            // BuildingAChain.md, "Print a chain".
            let described = makeChain(for: .production, verbose: true, terminal: MockLoader())
            print(described)

            #expect(
                described.description == """
                    ResetGuard
                    --> ApplyEnvironment(environment: https://api.example.com/v1)
                    --> ModifyRequest
                    --> PrintLoader(redaction: standard)
                    --> MockLoader
                    """)
        }

        @Test func aLoaderDescribesItsConfiguration() async throws {
            let configuration = URLSessionLoader.defaultConfiguration
            configuration.timeoutIntervalForRequest = 60
            configuration.httpMaximumConnectionsPerHost = 6
            let chain = APIVersion(3) --> URLSessionLoader(configuration: configuration)
            #expect(
                chain.description == """
                    APIVersion(version: 3)
                    --> URLSessionLoader(timeout: 60 s, connectionsPerHost: 6)
                    """)
            let mock = MockLoader().then(status: .ok)
            _ = await (APIVersion(3) --> mock).load(HTTPRequest(host: "api.example.com"))
            #expect(mock.receivedRequests.first?.headers["API-Version"] == "3")
        }
    }
}

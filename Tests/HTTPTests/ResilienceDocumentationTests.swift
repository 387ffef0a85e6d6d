import Foundation
import HTTP
import HTTPTestSupport
import Testing

// The code samples of HTTP.docc/Resilience.md ("Sharing loads and breaking circuits"), kept identical to the
// article. Samples whose chains end in a URLSessionLoader are built and checked here, never sent; the behaviour they
// describe runs against MockLoader.

extension ServerEnvironment {
    fileprivate static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

@Suite(.noHang) struct ResilienceDocumentationTests {
    @Test func deduplicateSample() async throws {
        let deduplicate = Deduplicate(ignoringHeaderFields: ["X-Request-ID"])
        let chain =
            ApplyEnvironment(environment: .production)
            --> deduplicate
            --> Retry()
            --> URLSessionLoader()

        #expect(chain.nextLoader === deduplicate)
        #expect(deduplicate.nextLoader is Retry)
        #expect(deduplicate.ignoredHeaderFields == ["X-Request-ID"])
        #expect(deduplicate.methods == [.get, .head])

        // What the article says: two requests that differ only in X-Request-ID share a load, and each caller gets
        // its own request back.
        let gate = GateLoader()
        let sharing = Deduplicate(ignoringHeaderFields: ["X-Request-ID"])
        let gated = ApplyEnvironment(environment: .production) --> sharing --> gate
        let first = HTTPRequest(path: "/me", headers: ["X-Request-ID": "1"])
        let second = HTTPRequest(path: "/me", headers: ["X-Request-ID": "2"])
        let loads = [Task { await gated.load(first) }, Task { await gated.load(second) }]
        try await eventually { sharing.waitingCount == 2 }
        gate.releaseOldest()
        let responses = [try await loads[0].finished().response, try await loads[1].finished().response]
        #expect(responses[0]?.request.id == first.id && responses[1]?.request.id == second.id)
        #expect(responses[1]?.request.headers["X-Request-ID"] == "2")
        #expect(gate.arrivals == ["/v1/me"])
    }

    @Test func optOutSample() {
        var poll = HTTPRequest(path: "/jobs/42/status")
        poll.deduplication = .never  // every poll reaches the server

        #expect(poll.deduplication == .never)
        #expect(HTTPRequest().deduplication == .automatic)
    }

    @Test func circuitBreakerSamples() async throws {
        var configuration = CircuitBreaker.Configuration()
        configuration.failureRateThreshold = 0.25  // open when a quarter of the requests fail…
        configuration.minimumNumberOfRequests = 20  // …once there were 20 in the window
        configuration.failureStatuses.insert(.tooManyRequests)
        let breaker = CircuitBreaker(configuration: configuration)

        let chain =
            ApplyEnvironment(environment: .production)
            --> Retry()
            --> breaker
            --> URLSessionLoader()

        #expect(chain.nextLoader?.nextLoader === breaker)
        #expect(breaker.configuration.failureStatuses.contains(.tooManyRequests))
        #expect(breaker.configuration.minimumNumberOfRequests == 20)

        let watcher = Task {
            for await transition in breaker.transitions() {
                print(transition)  // "https://api.example.com: closed → open"
            }
        }
        watcher.cancel()
        try await watcher.finished()
    }

    @Test func errorHandlingSampleAgainstAnOpenCircuit() async {
        let clock = ManualClock()
        var configuration = CircuitBreaker.Configuration()
        configuration.minimumNumberOfRequests = 2
        let testBreaker = CircuitBreaker(configuration: configuration, clock: clock)
        let mock = MockLoader().then(status: .serviceUnavailable).then(failWith: .cannotConnect)
        let chain = ApplyEnvironment(environment: .production) --> testBreaker --> mock
        _ = await chain.load(HTTPRequest(path: "/people/42"))
        _ = await chain.load(HTTPRequest(path: "/people/42"))
        #expect(testBreaker.state(for: "api.example.com") == .open)

        switch await chain.load(HTTPRequest(path: "/people/42")) {
        case .success(let response):
            print(response.status)
        case .failure(let error) where error.code == .circuitOpen:
            let retryAfter = error.openCircuit?.retryAfter ?? .zero
            print("the server is failing; try again in \(retryAfter)")
        case .failure(let error):
            print(error)
        }

        // What the sample's second case reads:
        clock.advance(by: .seconds(1))
        let error = await chain.load(HTTPRequest(path: "/people/42")).error
        #expect(error?.code == .circuitOpen)
        #expect(error?.openCircuit?.retryAfter == .seconds(4))
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func manualClockSample() {
        let clock = ManualClock()
        let configuration = CircuitBreaker.Configuration()
        let testBreaker = CircuitBreaker(configuration: configuration, clock: clock)
        #expect(testBreaker.state(for: "api.example.com") == .closed)
    }

    @Test func recommendedChain() {
        let production =
            ResetGuard()
            --> ApplyEnvironment(environment: .production)
            --> Deduplicate()
            --> Retry()
            --> CircuitBreaker()
            --> Throttle(maximumNumberOfRequests: 6)
            --> URLSessionLoader()

        #expect(production.nextLoader?.nextLoader is Deduplicate)
        #expect(production.nextLoader?.nextLoader?.nextLoader?.nextLoader is CircuitBreaker)
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        let article = DocumentationSamples.catalog(of: "HTTP", fromTestFile: #filePath)
            .appendingPathComponent("Resilience.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(missing.isEmpty, "Resilience.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

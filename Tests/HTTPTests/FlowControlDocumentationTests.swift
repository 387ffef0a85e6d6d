import Foundation
import HTTP
import HTTPTestSupport
import Testing

// The code samples of HTTP.docc/FlowControl.md ("Throttling and retrying"), kept identical to the article.

private struct RetryOnConflict: HTTPRetryStrategy {
    func retryDecision(for result: HTTPResult, context: RetryContext) -> RetryDecision {
        guard context.attempt < 3, result.response?.status == .conflict else { return .doNotRetry }
        return .retry(after: .milliseconds(100 * context.attempt))
    }
}

@Suite(.noHang) struct FlowControlDocumentationTests {
    @Test func throttleSample() {
        let throttle = Throttle(maximumNumberOfRequests: 4)
        let chain = Retry() --> throttle --> URLSessionLoader()

        throttle.maximumNumberOfRequests = 8  // takes effect at once: waiting requests start

        var thumbnail = HTTPRequest(path: "/thumbnails/42")
        thumbnail.throttlePriority = .low  // waits behind .normal and .high requests

        var refresh = HTTPRequest(method: .post, path: "/oauth/token")
        refresh.throttle = .never  // skips the queue and takes no slot

        #expect(chain.nextLoader === throttle)
        #expect(throttle.maximumNumberOfRequests == 8)
        #expect(thumbnail.throttlePriority == .low && refresh.throttle == .never)
    }

    @Test func strategySamples() {
        let retry = Retry(strategy: .exponential(initialDelay: .milliseconds(200), maximumNumberOfAttempts: 4))

        var upload = HTTPRequest(method: .put, path: "/avatar")
        upload.retryStrategy = Backoff.constant(delay: .seconds(1), maximumNumberOfAttempts: 2)

        var poll = HTTPRequest(path: "/status")
        poll.retryStrategy = Backoff.never  // this one is never retried

        var payment = HTTPRequest(method: .post, path: "/payments")
        payment.idempotencyKey = UUID().uuidString

        #expect((retry.defaultStrategy as? Backoff)?.maximumNumberOfAttempts == 4)
        #expect((upload.retryStrategy as? Backoff)?.schedule == .constant(.seconds(1)))
        #expect((poll.retryStrategy as? Backoff) == Backoff.never)
        #expect(payment.isIdempotent && !HTTPRequest(method: .post).isIdempotent)
    }

    @Test func customStrategySample() async throws {
        let clock = ManualClock()
        let mock = MockLoader().then(status: .conflict).then(status: .conflict).then(status: .conflict)
        let chain = Retry(strategy: RetryOnConflict(), budget: nil, clock: clock) --> mock
        let load = Task { await chain.load(HTTPRequest(method: .put, host: "example.com")) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(200))
        let result = try await load.finished()
        #expect(result.response?.status == .conflict)
        #expect(result.response?.request.attemptNumber == 3)
        #expect(clock.requestedDurations == [.milliseconds(100), .milliseconds(200)])
    }

    @Test func combinedStrategySample() async throws {
        let retry = Retry(strategy: .firstDecision(of: [RetryOnConflict(), .standard]))

        var upload = HTTPRequest(method: .put, path: "/avatar")
        let onceASecond = Backoff.constant(delay: .seconds(1), maximumNumberOfAttempts: 3)
        upload.retryStrategy = .firstDecision(of: [RetryOnConflict(), onceASecond])

        #expect((retry.defaultStrategy as? FirstDecisionStrategy)?.strategies.count == 2)
        // The request's own combination: a 409 is retried after 100 ms, a 503 after 1 s.
        upload.host = "example.com"
        let clock = ManualClock()
        let mock = MockLoader().then(status: .conflict).then(status: .serviceUnavailable).then(status: .ok)
        let chain = Retry(strategy: Backoff.never, budget: nil, clock: clock) --> mock
        let load = Task { await chain.load(upload) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await load.finished().response?.status == .ok)
        #expect(clock.requestedDurations == [.milliseconds(100), .seconds(1)])
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        let article = DocumentationSamples.catalog(of: "HTTP", fromTestFile: #filePath)
            .appendingPathComponent("FlowControl.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(missing.isEmpty, "FlowControl.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test func recommendedProductionChain() {
        let production =
            ResetGuard()
            --> ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
            --> Retry()
            --> Throttle(maximumNumberOfRequests: 6)
            --> URLSessionLoader()
        #expect(production.nextLoader?.nextLoader is Retry)
        #expect(production.nextLoader?.nextLoader?.nextLoader is Throttle)
    }
}

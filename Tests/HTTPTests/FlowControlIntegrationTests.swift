import Foundation
import HTTP
import Testing

/// Retry and Throttle against real servers: httpbin for statuses, nginx for a real rate limiter.
@Suite(.noHang, .enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct RetryHTTPBinIntegrationTests {
    let base = TestServers.httpbin!

    @Test func aServiceUnavailableIsRetriedWithBackoffUntilTheAttemptsRunOut() async throws {
        let recorder = AttemptRecorder()
        let strategy = Backoff.exponential(initialDelay: .milliseconds(50), maximumNumberOfAttempts: 3, jitter: .none)
        let chain = Retry(strategy: strategy, budget: nil) --> recorder --> URLSessionLoader()
        let request = HTTPRequest(url: base.appendingPathComponent("/status/503"))
        let response = try await chain.load(request).get()
        #expect(response.status == .serviceUnavailable)
        #expect(response.request.attemptNumber == 3)  // the caller sees how many attempts were made
        let attempts = recorder.attempts(of: request.id)
        #expect(attempts.map(\.request.attemptNumber) == [1, 2, 3])
        #expect(attempts[1].sentAt - attempts[0].sentAt >= .milliseconds(50))
        #expect(attempts[2].sentAt - attempts[1].sentAt >= .milliseconds(100))
    }

    @Test func aPostIsNotRetriedUnlessItOptsIn() async throws {
        let recorder = AttemptRecorder()
        let chain =
            Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 3), budget: nil) --> recorder
            --> URLSessionLoader()
        let post = HTTPRequest(method: .post, url: base.appendingPathComponent("/status/503"))
        #expect(try await chain.load(post).get().request.attemptNumber == 1)
        #expect(recorder.attempts(of: post.id).count == 1)

        var keyed = HTTPRequest(method: .post, url: base.appendingPathComponent("/status/503"))
        keyed.idempotencyKey = UUID().uuidString
        let response = try await chain.load(keyed).get()
        #expect(response.request.attemptNumber == 3)
        let keys = recorder.attempts(of: keyed.id).map { $0.request.headers["Idempotency-Key"] }
        #expect(keys == Array(repeating: keyed.idempotencyKey, count: 3))
    }

    @Test func throttledConcurrentRequestsAllComplete() async throws {
        let throttle = Throttle(maximumNumberOfRequests: 3)
        let recorder = AttemptRecorder()
        let chain = Retry() --> throttle --> recorder --> URLSessionLoader()
        let statuses = await withTaskGroup(of: HTTPStatus?.self, returning: [HTTPStatus?].self) { group in
            for _ in 0..<12 {
                group.addTask {
                    try? await chain.load(HTTPRequest(url: base.appendingPathComponent("/delay/0.2"))).get().status
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: .ok, count: 12))
        #expect(throttle.runningCount == 0 && throttle.waitingCount == 0)
    }
}

@Suite(.noHang, .enabled(if: TestServers.nginx != nil, "needs NGINX_URL: run through scripts/test.sh"))
struct RetryRateLimitIntegrationTests {
    let base = TestServers.nginx!

    @Test func aBurstThroughRetryEndsInSuccessAndNoRetryComesSoonerThanAdvertised() async throws {
        let recorder = AttemptRecorder()
        let strategy = Backoff.exponential(initialDelay: .milliseconds(100), maximumNumberOfAttempts: 6, jitter: .none)
        let chain = Retry(strategy: strategy, budget: nil) --> recorder --> URLSessionLoader()
        let requests = (0..<30).map { _ in HTTPRequest(url: base.appendingPathComponent("/limited")) }
        let statuses = await withTaskGroup(of: HTTPStatus?.self, returning: [HTTPStatus?].self) { group in
            for request in requests { group.addTask { try? await chain.load(request).get().status } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: .ok, count: requests.count))

        var retried = 0
        for request in requests {
            let attempts = recorder.attempts(of: request.id)
            for (previous, next) in zip(attempts, attempts.dropFirst()) {
                retried += 1
                // nginx answered 429 with Retry-After: 1; the next attempt must not come sooner.
                #expect(next.sentAt - previous.sentAt >= .seconds(1))
            }
        }
        #expect(retried > 0, "the burst never hit the rate limit, so nothing was tested")
    }
}

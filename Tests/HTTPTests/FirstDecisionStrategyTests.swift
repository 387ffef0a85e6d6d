import Foundation
import HTTP
import Testing

/// Retries one status after a fixed delay, and records what it was asked.
private struct Spy: HTTPRetryStrategy {
    let status: HTTPStatus?
    let delay: Duration
    let asked = Locked<[String]>([])

    init(retrying status: HTTPStatus?, after delay: Duration, declaresStatus: Bool = true) {
        self.status = status
        self.delay = delay
        self.declaresStatus = declaresStatus
    }

    /// Whether ``mayRetry(_:)`` answers for `status` only (otherwise: the protocol's default, `true`).
    let declaresStatus: Bool

    func retryDecision(for result: HTTPResult, context: RetryContext) -> RetryDecision {
        asked.withLock { $0.append(result.response.map { "\($0.status.rawValue)" } ?? "failure") }
        guard context.attempt < 4, result.response?.status == status else { return .doNotRetry }
        return .retry(after: delay)
    }

    func mayRetry(_ status: HTTPStatus) -> Bool { !declaresStatus || status == self.status }
}

@Suite(.noHang) struct FirstDecisionStrategyTests {
    private let clock = ManualClock()

    private func retry(_ strategy: any HTTPRetryStrategy) -> Retry {
        Retry(strategy: strategy, budget: nil, clock: clock)
    }

    private func request() -> HTTPRequest {
        HTTPRequest(method: .put, host: "example.com", path: "/avatar")
    }

    @Test func theFirstStrategyThatDecidesToRetryWins() async throws {
        let conflict = Spy(retrying: .conflict, after: .milliseconds(100))
        let standard = Backoff.constant(delay: .seconds(2), maximumNumberOfAttempts: 4)
        let mock = MockLoader().then(status: .conflict).then(status: .serviceUnavailable).then(status: .conflict)
            .then(status: .ok)
        let result = try await clock.load(request(), through: retry(.firstDecision(of: [conflict, standard])) --> mock)
        #expect(result.response?.status == .ok)
        #expect(result.response?.request.attemptNumber == 4)
        // 409 → the conflict strategy's 100 ms; 503 → the backoff's 2 s, the conflict strategy not asked.
        #expect(clock.requestedDurations == [.milliseconds(100), .seconds(2), .milliseconds(100)])
        #expect(conflict.asked.value == ["409", "409"])
    }

    @Test func orderDecidesWhenSeveralWouldRetry() async throws {
        let slow = Spy(retrying: .serviceUnavailable, after: .seconds(9))
        let fast = Spy(retrying: .serviceUnavailable, after: .seconds(1))
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        _ = try await clock.load(request(), through: retry(.firstDecision(of: [slow, fast])) --> mock)
        #expect(clock.requestedDurations == [.seconds(9)])
        #expect(fast.asked.value.isEmpty)
    }

    @Test func doNotRetryMeansAskTheNextAndNoneRetryingReturnsTheResult() async throws {
        let first = Spy(retrying: .conflict, after: .seconds(1), declaresStatus: false)
        let second = Spy(retrying: .gone, after: .seconds(1), declaresStatus: false)
        let mock = MockLoader().then(status: .badRequest).then(status: .ok)
        let result = try await clock.load(request(), through: retry(.firstDecision(of: [first, second])) --> mock)
        #expect(result.response?.status == .badRequest)
        #expect(mock.receivedRequests.count == 1)
        #expect(first.asked.value == ["400"] && second.asked.value == ["400"])
    }

    @Test func failuresAreOfferedToEveryMember() async throws {
        let conflict = Spy(retrying: .conflict, after: .seconds(1))
        let mock = MockLoader().then(failWith: .timedOut).then(status: .ok)
        let strategy = FirstDecisionStrategy([
            conflict, Backoff.constant(delay: .seconds(3), maximumNumberOfAttempts: 2),
        ])
        let result = try await clock.load(request(), through: retry(strategy) --> mock)
        #expect(result.response?.status == .ok)
        #expect(conflict.asked.value == ["failure"])
        #expect(clock.requestedDurations == [.seconds(3)])
    }

    @Test func mayRetryWhenAnyMemberMay() async throws {
        let conflict = Spy(retrying: .conflict, after: .seconds(1))
        let gone = Spy(retrying: .gone, after: .seconds(1))
        let strategy = FirstDecisionStrategy([conflict, gone])
        #expect(strategy.mayRetry(.conflict) && strategy.mayRetry(.gone))
        #expect(!strategy.mayRetry(.ok) && !strategy.mayRetry(.serviceUnavailable))
        #expect(!FirstDecisionStrategy([]).mayRetry(.serviceUnavailable))

        // Retry asks nothing about a status no member may retry.
        let mock = MockLoader().then(status: .ok)
        _ = try await clock.load(request(), through: retry(strategy) --> mock)
        #expect(conflict.asked.value.isEmpty && gone.asked.value.isEmpty)
    }

    @Test func anEmptyCombinationNeverRetries() async throws {
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let result = try await clock.load(request(), through: retry(.firstDecision(of: [])) --> mock)
        #expect(result.response?.status == .serviceUnavailable)
        #expect(
            FirstDecisionStrategy([]).retryDecision(for: result, context: RetryContext(attempt: 1, now: Date()))
                == .doNotRetry)
    }

    @Test func combinationsNestAndWorkPerRequest() async throws {
        let conflict = Spy(retrying: .conflict, after: .seconds(1))
        let gone = Spy(retrying: .gone, after: .seconds(2))
        var upload = request()
        upload.retryStrategy = .firstDecision(of: [.firstDecision(of: [conflict, gone]), Backoff.never])
        let mock = MockLoader().then(status: .gone).then(status: .conflict).then(status: .ok)
        let result = try await clock.load(upload, through: retry(Backoff.never) --> mock)
        #expect(result.response?.status == .ok)
        #expect(clock.requestedDurations == [.seconds(2), .seconds(1)])
    }

    @Test func eachMemberSeesTheAttemptNumber() async throws {
        // The backoff allows three attempts in all, whatever the other member decided before.
        let conflict = Spy(retrying: .conflict, after: .seconds(1))
        let backoff = Backoff.constant(delay: .seconds(5), maximumNumberOfAttempts: 3)
        let mock = MockLoader().then(status: .conflict).then(status: .serviceUnavailable)
            .then(status: .serviceUnavailable).then(status: .ok)
        let result = try await clock.load(request(), through: retry(.firstDecision(of: [conflict, backoff])) --> mock)
        #expect(result.response?.status == .serviceUnavailable)
        #expect(result.response?.request.attemptNumber == 3)
        #expect(clock.requestedDurations == [.seconds(1), .seconds(5)])
    }
}

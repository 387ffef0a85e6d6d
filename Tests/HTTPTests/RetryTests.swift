import Foundation
import HTTP
import HTTPTestSupport
import Testing

@Suite(.noHang) struct RetryTests {
    private let clock = ManualClock()

    private func retry(_ strategy: any HTTPRetryStrategy, budget: RetryBudget? = nil, now: Date = Date()) -> Retry {
        Retry(strategy: strategy, budget: budget, clock: clock, now: { now })
    }

    private func request(_ method: HTTPMethod = .get) -> HTTPRequest {
        HTTPRequest(method: method, host: "example.com", path: "/thing")
    }

    /// Loads `request` through `loader`, advancing the clock past every retry wait.
    private func loadAdvancingClock(
        _ loader: HTTPLoader, _ request: HTTPRequest, step: Duration = .seconds(3600),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> HTTPResult {
        try await clock.load(request, through: loader, advancingBy: step, sourceLocation: sourceLocation)
    }

    @Test func retriesUntilSuccessSendingFreshNumberedCopies() async throws {
        let mock = MockLoader().then(status: .serviceUnavailable).then(failWith: .cannotConnect).then(status: .ok)
        let chain = retry(Backoff.constant(delay: .seconds(2), maximumNumberOfAttempts: 3)) --> mock
        let original = request()
        let result = try await loadAdvancingClock(chain, original)
        #expect(result.response?.status == .ok)
        #expect(result.response?.request.attemptNumber == 3)
        #expect(mock.receivedRequests.map(\.attemptNumber) == [1, 2, 3])
        #expect(mock.receivedRequests.allSatisfy { $0.id == original.id })
        #expect(clock.requestedDurations == [.seconds(2), .seconds(2)])
    }

    @Test func returnsTheLastResultWhenAttemptsRunOut() async throws {
        let mock = MockLoader().then(status: .badGateway).then(status: .badGateway).then(status: .badGateway)
        let chain = retry(Backoff.immediately(maximumNumberOfAttempts: 3)) --> mock
        let result = try await loadAdvancingClock(chain, request())
        #expect(result.response?.status == .badGateway)
        #expect(result.response?.request.attemptNumber == 3)
        #expect(mock.pendingHandlerCount == 0)
    }

    /// A failure after retries says how many attempts were made; a failure of the only attempt does not.
    @Test func aFailureAfterRetriesSaysHowManyAttemptsWereMade() async throws {
        let mock = MockLoader().then(failWith: .cannotConnect).then(failWith: .cannotConnect)
            .then(failWith: .cannotConnect, message: "connection refused")
        let chain = retry(Backoff.immediately(maximumNumberOfAttempts: 3)) --> mock
        let error = try #require(try await loadAdvancingClock(chain, request()).error)
        #expect(error.code == .cannotConnect)
        #expect(error.message == "connection refused (after 3 attempts)")
        #expect(error.request.attemptNumber == 3)

        let once = retry(Backoff.immediately(maximumNumberOfAttempts: 3)) --> MockLoader().then(failWith: .cancelled)
        let single = try #require(try await loadAdvancingClock(once, request()).error)
        #expect(!single.message.contains("attempts"))
    }

    @Test func exponentialDelaysGrowAndAreCapped() async throws {
        let strategy = Backoff.exponential(
            initialDelay: .seconds(1),
            multiplier: 2,
            maximumNumberOfAttempts: 5,
            maximumDelay: .seconds(5),
            jitter: .none
        )
        let mock = MockLoader()
        for _ in 0..<5 { mock.then(failWith: .timedOut) }
        let result = try await loadAdvancingClock(retry(strategy) --> mock, request())
        #expect(result.error?.code == .timedOut)
        #expect(clock.requestedDurations == [.seconds(1), .seconds(2), .seconds(4), .seconds(5)])
    }

    @Test func jitterStaysWithinItsBounds() {
        let full = Backoff.constant(delay: .seconds(10), maximumNumberOfAttempts: 2, jitter: .full)
        let equal = Backoff.constant(delay: .seconds(10), maximumNumberOfAttempts: 2, jitter: .equal)
        let fullDelays = (0..<200).map { _ in full.delay(afterAttempt: 1) }
        let equalDelays = (0..<200).map { _ in equal.delay(afterAttempt: 1) }
        #expect(fullDelays.allSatisfy { $0 >= .zero && $0 <= .seconds(10) })
        #expect(equalDelays.allSatisfy { $0 >= .seconds(5) && $0 <= .seconds(10) })
        #expect(Set(fullDelays).count > 100)  // actually random
    }

    @Test(arguments: [
        (HTTPStatus.tooManyRequests, "Retry-After", "7", Duration.seconds(7)),
        (.serviceUnavailable, "Retry-After", "Sat, 21 Nov 2026 12:00:30 GMT", .seconds(30)),
        (.tooManyRequests, "RateLimit-Reset", "12", .seconds(12)),
        (.tooManyRequests, "X-RateLimit-Reset", "1795262445", .seconds(45)),  // a Unix time 45 s from now
        (.tooManyRequests, "X-RateLimit-Reset", "3", .seconds(3)),
    ])
    func waitsAsLongAsTheServerAsks(status: HTTPStatus, header: String, value: String, expected: Duration) async throws
    {
        let now = try #require(RetryAfter.httpDate("Sat, 21 Nov 2026 12:00:00 GMT"))
        #expect(now.timeIntervalSince1970 == 1_795_262_400)
        let mock = MockLoader().then(status: status, headers: [header: value]).then(status: .ok)
        let chain = retry(Backoff.constant(delay: .seconds(1), maximumNumberOfAttempts: 2), now: now) --> mock
        let result = try await loadAdvancingClock(chain, request())
        #expect(result.response?.status == .ok)
        #expect(clock.requestedDurations == [expected])
    }

    @Test func aServerAskingForTooLongGetsNoRetry() async throws {
        var strategy = Backoff.constant(delay: .seconds(1), maximumNumberOfAttempts: 3)
        strategy.maximumRetryAfter = .seconds(10)
        let mock = MockLoader().then(status: .tooManyRequests, headers: ["Retry-After": "11"]).then(status: .ok)
        let result = try await loadAdvancingClock(retry(strategy) --> mock, request())
        #expect(result.response?.status == .tooManyRequests)
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func httpDatesInEveryFormat() throws {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110)
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(RetryAfter.httpDate("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(RetryAfter.httpDate("Sun Nov  6 08:49:37 1994") == expected)
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
        #expect(RetryAfter.httpDate("yesterday") == nil)
        #expect(RetryAfter.parse("-5", now: expected) == nil)
        #expect(RetryAfter.parse(" 120 ", now: expected) == .seconds(120))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:00 GMT", now: expected) == .zero)  // in the past
    }

    @Test func postIsNotRetriedUnlessItOptsIn() async throws {
        let failing = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let post = try await loadAdvancingClock(
            retry(Backoff.immediately(maximumNumberOfAttempts: 3)) --> failing, request(.post))
        #expect(post.response?.status == .serviceUnavailable)
        #expect(failing.receivedRequests.count == 1)

        var keyed = request(.post)
        keyed.idempotencyKey = "order-42"
        let withKey = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let keyedResult = try await loadAdvancingClock(
            retry(Backoff.immediately(maximumNumberOfAttempts: 3)) --> withKey, keyed)
        #expect(keyedResult.response?.status == .ok)
        #expect(withKey.receivedRequests.map { $0.headers["Idempotency-Key"] } == ["order-42", "order-42"])

        var asserted = request(.patch)
        asserted.isIdempotent = true
        let optedIn = MockLoader().then(failWith: .cannotConnect).then(status: .ok)
        let assertedResult = try await loadAdvancingClock(
            retry(Backoff.immediately(maximumNumberOfAttempts: 3)) --> optedIn, asserted)
        #expect(assertedResult.response?.status == .ok)
    }

    @Test(arguments: [
        HTTPError.Code.cancelled, .resetInProgress, .invalidRequest, .insecureConnection, .cannotAuthenticate,
    ])
    func neverRetriesFailuresThatAreNotTransient(code: HTTPError.Code) async throws {
        var strategy = Backoff.immediately(maximumNumberOfAttempts: 3)
        strategy.retryableCodes.insert(code)  // even when listed, the first three are never retried
        let expectedAttempts = [.cancelled, .resetInProgress, .invalidRequest].contains(code) ? 1 : 2
        let mock = MockLoader().then(failWith: code).then(status: .ok)
        _ = try await loadAdvancingClock(retry(strategy) --> mock, request())
        #expect(mock.receivedRequests.count == expectedAttempts)

        let standard = MockLoader().then(failWith: code).then(status: .ok)
        let result = try await loadAdvancingClock(
            retry(Backoff.immediately(maximumNumberOfAttempts: 3)) --> standard, request())
        #expect(result.error?.code == code)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retriesTransientStatuses(code: Int) async throws {
        let mock = MockLoader().then(status: HTTPStatus(rawValue: code)).then(status: .ok)
        let result = try await loadAdvancingClock(
            retry(Backoff.immediately(maximumNumberOfAttempts: 2)) --> mock, request())
        #expect(result.response?.status == .ok)
    }

    @Test(arguments: [400, 401, 404, 501])
    func doesNotRetryOtherStatuses(code: Int) async throws {
        let mock = MockLoader().then(status: HTTPStatus(rawValue: code)).then(status: .ok)
        let result = try await loadAdvancingClock(
            retry(Backoff.immediately(maximumNumberOfAttempts: 2)) --> mock, request())
        #expect(result.response?.status.rawValue == code)
    }

    @Test func aRequestsOwnStrategyWins() async throws {
        var optedOut = request()
        optedOut.retryStrategy = Backoff.never
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let result = try await loadAdvancingClock(
            retry(Backoff.immediately(maximumNumberOfAttempts: 5)) --> mock, optedOut)
        #expect(result.response?.status == .serviceUnavailable)
    }

    @Test func theBudgetKeepsRetriesABoundedFractionWhenEverythingFails() async throws {
        let budget = RetryBudget(maximumTokens: 10, tokensPerSuccess: 0.1)
        let mock = MockLoader()
        for _ in 0..<1_000 { mock.then(status: .serviceUnavailable) }
        let chain = retry(Backoff.immediately(maximumNumberOfAttempts: 5), budget: budget) --> mock
        for _ in 0..<100 { _ = try await loadAdvancingClock(chain, request()) }
        // Without a budget: 500 attempts. With it: 100 first attempts plus at most maximumTokens / 2 retries.
        #expect(mock.receivedRequests.count <= 100 + 5)
        #expect(mock.receivedRequests.count > 100)
        #expect(!budget.allowsRetry)
        for _ in 0..<60 { budget.recordSuccess() }
        #expect(budget.allowsRetry)
    }

    @Test func cancellingDuringTheWaitEndsItAtOnce() async throws {
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let chain = retry(Backoff.constant(delay: .seconds(60), maximumNumberOfAttempts: 2))
        chain --> mock
        let load = Task { await chain.load(request()) }
        try await clock.waitForSleepers(1)
        #expect(chain.waitingCount == 1)
        load.cancel()
        let result = try await load.finished()  // without advancing the clock
        #expect(result.error?.code == .cancelled)
        #expect(result.error?.response?.status == .serviceUnavailable)
        #expect(chain.waitingCount == 0)
        #expect(mock.receivedRequests.count == 1)
    }

    /// Holds the thread deciding about an attempt until the test releases it, then retries at once.
    private struct HeldDecision: HTTPRetryStrategy {
        let latch: ThreadLatch
        func retryDecision(for result: HTTPResult, context: RetryContext) -> RetryDecision {
            latch.arriveAndWait()
            return context.attempt < 2 ? .retry(after: .zero) : .doNotRetry
        }
    }

    @Test func atTheHeadOfAChainAResetWaitsForTheDecisionAboutAnAttempt() async throws {
        let gate = GateLoader()
        let deciding = ThreadLatch()
        defer { deciding.release() }
        let chain = retry(HeldDecision(latch: deciding))
        chain --> gate  // no ResetGuard above: Retry's own loads are counted by Retry
        // On a thread of its own: the latch holds it while Retry decides.
        let request = request()
        let load = Task(executorPreference: DedicatedThreadExecutor()) { await chain.load(request) }
        try await gate.waitForRunning(1)
        gate.releaseOldest(with: .serviceUnavailable)
        try await eventually { deciding.arrivalCount == 1 }

        let resetDone = Locked(false)
        let reset = Task {
            await chain.reset()
            resetDone.withLock { $0 = true }
        }
        try await eventually { chain.isResetting }
        // The attempt's answer has returned, so nothing is in flight below Retry: only its own count keeps the reset
        // from ending before the decision is made.
        #expect(chain.participation.inFlight.runningCount == 1)
        #expect(gate.participation.inFlight.runningCount == 0)
        #expect(!resetDone.value, "a draining reset returned while the head decided about an attempt")
        deciding.release()

        let result = try await load.finished()
        try await reset.finished()
        #expect(!deciding.timedOut)
        #expect(result.error?.code == .resetInProgress)
        #expect(result.error?.response?.status == .serviceUnavailable)
        #expect(gate.resets == 1)
        #expect(chain.waitingCount == 0)
    }

    @Test func resetFailsWaitingRetriesAndWaitsForAttemptsInFlight() async throws {
        let gate = GateLoader()
        let chain = retry(Backoff.constant(delay: .seconds(60), maximumNumberOfAttempts: 3))
        chain --> gate
        let waiting = Task { await chain.load(HTTPRequest(host: "example.com", path: "/waiting")) }
        try await gate.waitForRunning(1)
        gate.releaseOldest(with: .serviceUnavailable)
        try await clock.waitForSleepers(1)
        let inFlight = Task { await chain.load(HTTPRequest(host: "example.com", path: "/in-flight")) }
        try await gate.waitForRunning(1)

        let resetDone = Locked(false)
        let reset = Task {
            await chain.reset()
            resetDone.withLock { $0 = true }
        }
        let abandoned = try await waiting.finished()
        #expect(abandoned.error?.code == .resetInProgress)
        #expect(!resetDone.value)
        gate.releaseOldest(with: .serviceUnavailable)  // the attempt in flight fails, and may not wait again
        #expect(try await inFlight.finished().error?.code == .resetInProgress)
        try await reset.finished()
        #expect(gate.resets == 1)
        #expect(chain.waitingCount == 0)
    }
}

/// The seed's question (part 12): throttle --> retry, or retry --> throttle?
@Suite(.noHang) struct RetryAndThrottleOrderTests {
    private func run(retryFirst: Bool) async throws -> [String] {
        let clock = ManualClock()
        let gate = GateLoader()
        let retry = Retry(
            strategy: Backoff.constant(delay: .seconds(1), maximumNumberOfAttempts: 3), budget: nil, clock: clock)
        let throttle = Throttle(maximumNumberOfRequests: 1)
        let chain: HTTPLoader = retryFirst ? (retry --> throttle --> gate) : (throttle --> retry --> gate)
        let a = Task { await chain.load(HTTPRequest(host: "example.com", path: "/A")) }
        try await gate.waitForRunning(1)
        let b = Task { await chain.load(HTTPRequest(host: "example.com", path: "/B")) }
        try await eventually { throttle.waitingCount == 1 }
        // A fails; while it waits to retry, B may or may not get the slot.
        gate.releaseOldest(with: .serviceUnavailable)
        try await clock.waitForSleepers(1)
        if retryFirst {
            try await gate.waitForRunning(1)  // B got the slot during A's wait
            gate.release(path: "/B")
        }
        clock.advance(by: .seconds(1))
        try await gate.waitForRunning(1)
        gate.release(path: "/A", with: .serviceUnavailable)
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        try await gate.waitForRunning(1)
        gate.release(path: "/A")
        if !retryFirst {
            try await gate.waitForRunning(1)
            gate.release(path: "/B")
        }
        _ = try await a.finished()
        _ = try await b.finished()
        return gate.arrivals
    }

    @Test func throttleBeforeRetryHoldsTheSlotThroughEveryAttempt() async throws {
        #expect(try await run(retryFirst: false) == ["/A", "/A", "/A", "/B"])
    }

    @Test func retryBeforeThrottleGivesTheSlotAwayWhileWaiting() async throws {
        #expect(try await run(retryFirst: true) == ["/A", "/B", "/A", "/A"])
    }
}

import Foundation
import HTTP
import Testing

@Suite(.noHang) struct BackoffTests {
    private let clock = ManualClock()
    /// Sat, 21 Nov 2026 12:00:00 GMT.
    private let now = Date(timeIntervalSince1970: 1_795_262_400)
    private let century = Duration.seconds(3_155_760_000)

    private func retry(_ strategy: Backoff) -> Retry {
        Retry(strategy: strategy, budget: nil, clock: clock, now: { [now] in now })
    }

    private func request() -> HTTPRequest {
        HTTPRequest(host: "example.com", path: "/thing")
    }

    private func seconds(_ values: Double...) -> [Duration] {
        values.map { Duration.seconds($0) }
    }

    private func exponential(
        initial: Duration = .seconds(1), multiplier: Double, maximumDelay: Duration = .seconds(30),
        jitter: Backoff.Jitter = .none
    ) -> Backoff {
        Backoff(
            schedule: .exponential(initial: initial, multiplier: multiplier), maximumNumberOfAttempts: 10,
            maximumDelay: maximumDelay, jitter: jitter)
    }

    // MARK: Server-requested waits on every retried status

    @Test(arguments: [413, 408, 429, 500, 502, 503, 504, 599])
    func honoursRetryAfterOnEveryStatusItRetries(code: Int) async throws {
        var strategy = Backoff.constant(delay: .seconds(1), maximumNumberOfAttempts: 3)
        strategy.retryableStatuses.formUnion([.contentTooLarge, HTTPStatus(rawValue: 599)])
        let mock = MockLoader()
            .then(status: HTTPStatus(rawValue: code), headers: ["Retry-After": "7"])
            .then(status: HTTPStatus(rawValue: code), headers: ["Retry-After": "Sat, 21 Nov 2026 12:00:30 GMT"])
            .then(status: .ok)
        let result = try await clock.load(request(), through: retry(strategy) --> mock)
        #expect(result.response?.status == .ok)
        #expect(clock.requestedDurations == [.seconds(7), .seconds(30)])
    }

    @Test(arguments: [413, 500, 503])
    func givesUpWhenTheServerAsksForLongerThanItsMaximum(code: Int) async throws {
        var strategy = Backoff.constant(delay: .seconds(1), maximumNumberOfAttempts: 3)
        strategy.retryableStatuses.insert(.contentTooLarge)
        strategy.maximumRetryAfter = .seconds(10)
        let mock = MockLoader()
            .then(status: HTTPStatus(rawValue: code), headers: ["Retry-After": "Sat, 21 Nov 2026 13:00:00 UTC"])
            .then(status: .ok)
        let result = try await clock.load(request(), through: retry(strategy) --> mock)
        #expect(result.response?.status.rawValue == code)
        #expect(mock.receivedRequests.count == 1)
        #expect(clock.requestedDurations.isEmpty)
    }

    @Test func aStatusItDoesNotRetryIsReturnedWhateverItsRetryAfter() async throws {
        let mock = MockLoader().then(status: .contentTooLarge, headers: ["Retry-After": "5"]).then(status: .ok)
        let result = try await clock.load(
            request(), through: retry(.constant(delay: .seconds(1), maximumNumberOfAttempts: 3)) --> mock)
        #expect(result.response?.status == .contentTooLarge)
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func aServerErrorFromARateLimitedAPIIsRetriedOnScheduleWhileQuotaRemains() async throws {
        // The reset an hour away is when the quota window ends, not a wait: the 502 is retried after 1 s.
        let headers: HTTPHeaders = ["X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": "1795266000"]
        let mock = MockLoader().then(status: .badGateway, headers: headers).then(status: .ok)
        let result = try await clock.load(
            request(), through: retry(.constant(delay: .seconds(1), maximumNumberOfAttempts: 2)) --> mock)
        #expect(result.response?.status == .ok)
        #expect(clock.requestedDurations == [.seconds(1)])
    }

    @Test func aLenientlyWrittenDateIsHonouredInsteadOfTheSchedule() async throws {
        // A server's hour-long wait written with UTC and a lower-case month: not a 0.5 s retry.
        var strategy = Backoff.standard
        strategy.maximumRetryAfter = .seconds(7200)
        let mock = MockLoader()
            .then(status: .serviceUnavailable, headers: ["Retry-After": "Sat, 21 nov 2026 13:00:00 UTC"])
            .then(status: .ok)
        let result = try await clock.load(request(), through: retry(strategy) --> mock)
        #expect(result.response?.status == .ok)
        #expect(clock.requestedDurations == [.seconds(3600)])
    }

    // MARK: The schedule

    @Test func exponentialSchedulesGrowShrinkAndStayWithinTheirBounds() {
        #expect((1...6).map { exponential(multiplier: 2).delay(afterAttempt: $0) } == seconds(1, 2, 4, 8, 16, 30))
        #expect((1...4).map { exponential(multiplier: 0.5).delay(afterAttempt: $0) } == seconds(1, 0.5, 0.25, 0.125))
        #expect((1...3).map { exponential(multiplier: 1).delay(afterAttempt: $0) } == seconds(1, 1, 1))
        #expect((1...3).map { exponential(multiplier: 0).delay(afterAttempt: $0) } == [.seconds(1), .zero, .zero])
        #expect((1...3).map { exponential(multiplier: .infinity).delay(afterAttempt: $0) } == seconds(1, 30, 30))
        #expect((1...3).map { exponential(multiplier: .nan).delay(afterAttempt: $0) } == seconds(1, 1, 1))
        #expect((1...3).map { exponential(multiplier: -2).delay(afterAttempt: $0) } == [.seconds(1), .zero, .zero])
        // Attempt numbers below 1 count as 1.
        #expect([Int.min, -1, 0].map { exponential(multiplier: 2).delay(afterAttempt: $0) } == seconds(1, 1, 1))
    }

    @Test func largeAttemptNumbersTakeConstantTime() {
        // A loop per attempt would not finish these.
        #expect(exponential(multiplier: 2).delay(afterAttempt: .max) == .seconds(30))
        #expect(exponential(multiplier: 1).delay(afterAttempt: .max) == .seconds(1))
        #expect(exponential(multiplier: 0.5).delay(afterAttempt: .max) == .zero)
        #expect(exponential(multiplier: 1.000_000_000_1).delay(afterAttempt: .max) == .seconds(30))
        #expect(exponential(multiplier: 0.999_999_999_9).delay(afterAttempt: .max) == .zero)
    }

    @Test func oddDurationsAreClamped() {
        let huge = Duration.seconds(Int64.max) * 10
        #expect(exponential(initial: .seconds(-5), multiplier: 2).delay(afterAttempt: 3) == .zero)
        #expect(exponential(initial: huge, multiplier: 2).delay(afterAttempt: 1) == .seconds(30))
        #expect(
            exponential(initial: .seconds(1), multiplier: 2, maximumDelay: .seconds(-1)).delay(afterAttempt: 3) == .zero
        )
        #expect(
            exponential(initial: .seconds(1), multiplier: 2, maximumDelay: huge).delay(afterAttempt: 200) == century)
        #expect(
            Backoff(schedule: .constant(huge), maximumNumberOfAttempts: 2, maximumDelay: huge).delay(afterAttempt: 1)
                == century)
        #expect(Backoff(schedule: .constant(.seconds(-3)), maximumNumberOfAttempts: 2).delay(afterAttempt: 1) == .zero)
        for jitter in [Backoff.Jitter.full, .equal] {
            let negative = exponential(multiplier: 2, maximumDelay: .seconds(-1), jitter: jitter)
            #expect(negative.delay(afterAttempt: 2) == .zero)
            let enormous = exponential(initial: huge, multiplier: 2, maximumDelay: huge, jitter: jitter)
            #expect(enormous.delay(afterAttempt: 2) <= century)
        }
    }

    @Test func jitterIsReproducibleWithASeededGenerator() {
        let strategy = exponential(multiplier: 2, jitter: .full)
        var first = SplitMix64(seed: 7)
        var second = SplitMix64(seed: 7)
        let a = (1...20).map { strategy.delay(afterAttempt: $0, using: &first) }
        let b = (1...20).map { strategy.delay(afterAttempt: $0, using: &second) }
        #expect(a == b)
        #expect(Set(a).count > 15)  // actually random
    }

    // MARK: Randomised properties

    private static let durations: [Duration] = [
        .zero, .nanoseconds(1), .milliseconds(1), .milliseconds(500), .seconds(1), .seconds(30), .seconds(3600),
        .seconds(-1), .nanoseconds(-1), .seconds(Int64.max), .seconds(Int64.min), .seconds(Int64.max) * 10,
        .seconds(Int64.min) * 10, .seconds(3_155_760_000), .seconds(3_155_760_001),
    ]
    private static let multipliers: [Double] = [
        0, -0.0, 0.5, 0.999, 1, 1.000_001, 1.5, 2, 10, 1e308, .greatestFiniteMagnitude, .infinity, -.infinity, .nan,
        -1, -2, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
    ]
    private static let attempts: [Int] = [.min, .min + 1, -1, 0, 1, 2, 3, 62, 63, 64, 65, 1_000, .max - 1, .max]

    private static func randomDuration(using random: inout SplitMix64) -> Duration {
        if Bool.random(using: &random) { return durations.randomElement(using: &random)! }
        return .nanoseconds(Int64.random(in: -1_000_000_000_000...1_000_000_000_000_000, using: &random))
    }

    private static func randomBackoff(using random: inout SplitMix64) -> Backoff {
        let schedule: Backoff.Schedule
        switch Int.random(in: 0..<4, using: &random) {
        case 0: schedule = .immediately
        case 1: schedule = .constant(randomDuration(using: &random))
        default:
            let multiplier =
                Bool.random(using: &random)
                ? multipliers.randomElement(using: &random)! : Double.random(in: -3...5, using: &random)
            schedule = .exponential(initial: randomDuration(using: &random), multiplier: multiplier)
        }
        return Backoff(
            schedule: schedule, maximumNumberOfAttempts: 3, maximumDelay: randomDuration(using: &random),
            jitter: [.none, .full, .equal].randomElement(using: &random)!)
    }

    private static func randomAttempt(using random: inout SplitMix64) -> Int {
        Bool.random(using: &random)
            ? attempts.randomElement(using: &random)! : Int.random(in: .min ... .max, using: &random)
    }

    @Test func delaysNeverTrapAndStayBetweenZeroAndTheMaximum() {
        let seed = randomSeed("delaysNeverTrapAndStayBetweenZeroAndTheMaximum")
        var random = SplitMix64(seed: seed)
        for _ in 0..<20_000 {
            let strategy = Self.randomBackoff(using: &random)
            let attempt = Self.randomAttempt(using: &random)
            let delay = strategy.delay(afterAttempt: attempt, using: &random)
            let bound = min(max(strategy.maximumDelay, .zero), century)
            #expect(delay >= .zero && delay <= bound, "seed \(seed): \(strategy) after \(attempt) gave \(delay)")
            if strategy.jitter == .equal {
                let unjittered = Backoff(
                    schedule: strategy.schedule, maximumNumberOfAttempts: 3, maximumDelay: strategy.maximumDelay)
                let scheduled = unjittered.delay(afterAttempt: attempt)
                #expect(delay >= scheduled / 2 && delay <= scheduled, "seed \(seed): \(strategy) after \(attempt)")
            }
        }
    }

    @Test func delaysNeverShrinkForMultipliersOfOneOrMoreWithoutJitter() {
        let seed = randomSeed("delaysNeverShrinkForMultipliersOfOneOrMoreWithoutJitter")
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            let multiplier =
                Bool.random(using: &random)
                ? Self.multipliers.filter { $0 >= 1 }.randomElement(using: &random)!
                : Double.random(in: 1...4, using: &random)
            let strategy = Backoff(
                schedule: .exponential(initial: Self.randomDuration(using: &random), multiplier: multiplier),
                maximumNumberOfAttempts: 3, maximumDelay: Self.randomDuration(using: &random))
            var attempts = (0..<20).map { _ in Self.randomAttempt(using: &random) }
            attempts += (1...70)
            attempts.sort()
            let delays = attempts.map { strategy.delay(afterAttempt: $0) }
            let firstDecrease = delays.indices.dropLast().first { delays[$0] > delays[$0 + 1] }
            #expect(firstDecrease == nil, "seed \(seed): \(strategy) shrinks between attempts \(attempts)")
        }
    }
}

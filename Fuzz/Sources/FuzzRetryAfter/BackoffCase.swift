import Foundation
import FuzzSupport
import HTTP

/// A `Backoff` with any configuration, asked for a delay and a decision about any result.
struct BackoffCase {
    enum Schedule {
        case immediately
        case constant(Duration)
        case exponential(initial: Duration, multiplier: Double)
    }

    enum Outcome {
        case response(status: Int, fields: [(name: String, value: String)])
        case failure(String)
    }

    var schedule: Schedule
    var maximumNumberOfAttempts: Int
    var maximumDelay: Duration
    var jitter: Backoff.Jitter
    var retryableStatuses: [Int]
    var retryableCodes: [String]
    var maximumRetryAfter: Duration
    var delayAttempt: Int
    var outcome: Outcome
    var attempt: Int
    var now: Date

    static let jitters: [Backoff.Jitter] = [.none, .full, .equal]
    static let statuses = [408, 429, 500, 502, 503, 504, 200, 404]
    static let codes = ["cannotConnect", "timedOut", "cancelled", "resetInProgress", "invalidRequest", "unknown"]

    static func read(_ input: inout FuzzInput) -> BackoffCase {
        let schedule: Schedule =
            switch input.choice(3) {
            case 0: .immediately
            case 1: .constant(input.duration())
            default: .exponential(initial: input.duration(), multiplier: input.double())
            }
        return BackoffCase(
            schedule: schedule, maximumNumberOfAttempts: input.smallInt(), maximumDelay: input.duration(),
            jitter: input.pick(jitters),
            retryableStatuses: (0..<input.count(upTo: 4)).map { _ in input.bool() ? input.pick(statuses) : input.int()
            },
            retryableCodes: (0..<input.count(upTo: 3)).map { _ in input.pick(codes) },
            maximumRetryAfter: input.duration(), delayAttempt: input.smallInt(),
            outcome: input.bool()
                ? .response(
                    status: input.bool() ? input.pick(statuses) : input.int(),
                    fields: RetryAfterTarget.readRateLimitFields(&input))
                : .failure(input.pick(codes)),
            attempt: input.smallInt(), now: input.date())
    }

    func write(_ writer: inout SeedWriter) {
        switch schedule {
        case .immediately:
            writer.choice(0, of: 3)
        case .constant(let delay):
            writer.choice(1, of: 3)
            writer.seconds(Int(delay.components.seconds))
        case .exponential(let initial, let multiplier):
            writer.choice(2, of: 3)
            writer.seconds(Int(initial.components.seconds))
            writer.double(multiplier)
        }
        writer.smallInt(maximumNumberOfAttempts)
        writer.seconds(Int(maximumDelay.components.seconds))
        writer.choice(Self.jitters.firstIndex(of: jitter)!, of: Self.jitters.count)
        writer.count(retryableStatuses.count, upTo: 4)
        for status in retryableStatuses {
            writer.bool(true)
            writer.choice(Self.statuses.firstIndex(of: status)!, of: Self.statuses.count)
        }
        writer.count(retryableCodes.count, upTo: 3)
        for code in retryableCodes { writer.choice(Self.codes.firstIndex(of: code)!, of: Self.codes.count) }
        writer.seconds(Int(maximumRetryAfter.components.seconds))
        writer.smallInt(delayAttempt)
        switch outcome {
        case .response(let status, let fields):
            writer.bool(true)
            writer.bool(true)
            writer.choice(Self.statuses.firstIndex(of: status)!, of: Self.statuses.count)
            RetryAfterTarget.writeRateLimitFields(fields, &writer)
        case .failure(let code):
            writer.bool(false)
            writer.choice(Self.codes.firstIndex(of: code)!, of: Self.codes.count)
        }
        writer.smallInt(attempt)
        writer.date(secondsAfterReferenceNow: Int(now.timeIntervalSince(FuzzInput.referenceNow)))
    }

    var backoff: Backoff {
        let schedule: Backoff.Schedule =
            switch self.schedule {
            case .immediately: .immediately
            case .constant(let delay): .constant(delay)
            case .exponential(let initial, let multiplier): .exponential(initial: initial, multiplier: multiplier)
            }
        return Backoff(
            schedule: schedule, maximumNumberOfAttempts: maximumNumberOfAttempts, maximumDelay: maximumDelay,
            jitter: jitter, retryableStatuses: Set(retryableStatuses.map { HTTPStatus(rawValue: $0) }),
            retryableCodes: Set(retryableCodes.map { HTTPError.Code(rawValue: $0) }),
            maximumRetryAfter: maximumRetryAfter)
    }

    var result: HTTPResult {
        switch outcome {
        case .response(let status, let fields):
            .success(
                HTTPResponse(request: HTTPRequest(), status: HTTPStatus(rawValue: status), headers: makeHeaders(fields))
            )
        case .failure(let code):
            .failure(HTTPError(HTTPError.Code(rawValue: code), request: HTTPRequest()))
        }
    }

    /// Whether every duration the app configured is zero or more: only then are the delays' bounds promised.
    var isConfiguredSanely: Bool {
        let scheduled: [Duration] =
            switch schedule {
            case .immediately: []
            case .constant(let delay): [delay]
            case .exponential(let initial, let multiplier): multiplier >= 0 ? [initial] : [.seconds(-1)]
            }
        return (scheduled + [maximumDelay, maximumRetryAfter]).allSatisfy { $0 >= .zero }
    }

    func check() {
        let backoff = self.backoff
        let delay = backoff.delay(afterAttempt: delayAttempt)
        if isConfiguredSanely {
            FuzzCheck.expect(
                delay >= .zero && delay <= maximumDelay,
                "delay(afterAttempt: \(delayAttempt)) is \(delay), outside 0...\(maximumDelay)")
        }
        for status in retryableStatuses + [200, 429, 503] {
            let status = HTTPStatus(rawValue: status)
            FuzzCheck.expect(
                backoff.mayRetry(status) == backoff.retryableStatuses.contains(status),
                "mayRetry(\(status)) disagrees with retryableStatuses")
        }

        let decision = backoff.retryDecision(for: result, context: RetryContext(attempt: attempt, now: now))
        guard case .retry(let wait) = decision else { return }
        FuzzCheck.expect(
            attempt < maximumNumberOfAttempts, "retries after attempt \(attempt) of \(maximumNumberOfAttempts)")
        switch outcome {
        case .failure(let code):
            FuzzCheck.expect(
                !["cancelled", "resetInProgress", "invalidRequest"].contains(code) && retryableCodes.contains(code),
                "retries a failure with code \(code)")
        case .response(let status, _):
            FuzzCheck.expect(retryableStatuses.contains(status), "retries status \(status), which is not retryable")
            if status == 429 || status == 503, case .success(let response) = result,
                let requested = RetryAfter.delay(in: response, now: now)
            {
                FuzzCheck.expect(
                    wait == requested && requested <= maximumRetryAfter,
                    "waits \(wait) where the server asks for \(requested) (at most \(maximumRetryAfter) accepted)")
            }
        }
        if isConfiguredSanely { FuzzCheck.expect(wait >= .zero, "waits a negative \(wait)") }
    }

    var swift: String {
        let schedule =
            switch self.schedule {
            case .immediately: ".immediately"
            case .constant(let delay): ".constant(\(SwiftLiteral.duration(delay)))"
            case .exponential(let initial, let multiplier):
                ".exponential(initial: \(SwiftLiteral.duration(initial)), multiplier: \(SwiftLiteral.double(multiplier)))"
            }
        let result =
            switch outcome {
            case .response(let status, let fields):
                ".success(HTTPResponse(request: HTTPRequest(), status: HTTPStatus(rawValue: \(SwiftLiteral.int(status))), "
                    + "headers: \(SwiftLiteral.fields(fields))))"
            case .failure(let code):
                ".failure(HTTPError(HTTPError.Code(rawValue: \(SwiftLiteral.string(code))), request: HTTPRequest()))"
            }
        return """
            let backoff = Backoff(
                schedule: \(schedule), maximumNumberOfAttempts: \(SwiftLiteral.int(maximumNumberOfAttempts)),
                maximumDelay: \(SwiftLiteral.duration(maximumDelay)), jitter: .\(jitter),
                retryableStatuses: [\(retryableStatuses.map { "HTTPStatus(rawValue: \(SwiftLiteral.int($0)))" }.joined(separator: ", "))],
                retryableCodes: [\(retryableCodes.map { "HTTPError.Code(rawValue: \(SwiftLiteral.string($0)))" }.joined(separator: ", "))],
                maximumRetryAfter: \(SwiftLiteral.duration(maximumRetryAfter)))
            _ = backoff.delay(afterAttempt: \(SwiftLiteral.int(delayAttempt)))
            _ = backoff.retryDecision(for: \(result), context: RetryContext(attempt: \(SwiftLiteral.int(attempt)), now: \(SwiftLiteral.date(now))))
            """
    }
}

import Foundation

/// The standard retry strategy: retries transient failures after a growing delay, honouring what the server
/// says about when to come back.
///
/// ```swift
/// let retry = Retry(strategy: .exponential(initialDelay: .milliseconds(200), maximumNumberOfAttempts: 4))
/// var upload = HTTPRequest(method: .put, path: "/avatar", body: DataBody(png))
/// upload.retryStrategy = Backoff.constant(delay: .seconds(1), maximumNumberOfAttempts: 2)
/// ```
///
/// By default it retries:
/// - transport failures that are usually transient: ``HTTPError/Code/cannotConnect`` (refused, unreachable,
///   connection lost) and ``HTTPError/Code/timedOut``;
/// - responses `408`, `429`, `500`, `502`, `503` and `504`.
///
/// For every response status it retries — these, or any you add, such as `413 Content Too Large` — it waits
/// as long as the server asks in `Retry-After` (seconds or an HTTP-date), or, once a rate-limit quota is
/// used up, `RateLimit-Reset` or `X-RateLimit-Reset` (see ``RetryAfter/delay(in:now:)``) — never less — and
/// gives up, returning the response, when the server asks for longer than ``maximumRetryAfter``. Otherwise
/// the delay follows the ``schedule``, capped at ``maximumDelay`` and spread by ``jitter`` so that many
/// clients failing together do not come back together.
public struct Backoff: HTTPRetryStrategy, Hashable {
    /// How the delay grows with each attempt.
    ///
    /// Frozen: no delay, the same delay, or a growing one cover every schedule this strategy computes; another
    /// shape is another ``HTTPRetryStrategy``.
    @frozen
    public enum Schedule: Sendable, Hashable {
        /// No delay.
        case immediately
        /// The same delay every time.
        case constant(Duration)
        /// `initial`, then `initial × multiplier`, `initial × multiplier²`, …
        ///
        /// A multiplier below 1 shrinks the delay; one below zero counts as zero, and one that is not a
        /// number as 1.
        case exponential(initial: Duration, multiplier: Double)
    }

    /// How the delay is randomised: ``none``, ``full`` or ``equal``.
    ///
    /// A struct rather than an enum, so that more ways to spread retries (decorrelated jitter, for one) can be
    /// added without breaking code that switches over these.
    public struct Jitter: Sendable, Hashable, CustomStringConvertible {
        enum Code: Sendable, Hashable {
            case none, full, equal
        }

        let code: Code

        /// The delay as scheduled.
        public static let none = Jitter(code: .none)
        /// Anywhere between zero and the scheduled delay ("full jitter"): spreads retries the most.
        public static let full = Jitter(code: .full)
        /// Between half the scheduled delay and all of it ("equal jitter"): never much sooner than scheduled.
        public static let equal = Jitter(code: .equal)

        /// `none`, `full` or `equal`.
        public var description: String {
            switch code {
            case .none: "none"
            case .full: "full"
            case .equal: "equal"
            }
        }
    }

    /// How the delay grows.
    public var schedule: Schedule
    /// The most attempts in all, the first included: `3` means up to two retries.
    public var maximumNumberOfAttempts: Int
    /// The longest delay the schedule produces (before jitter). A negative maximum counts as zero, and none
    /// is longer than a century.
    public var maximumDelay: Duration
    /// How the delay is randomised.
    public var jitter: Jitter
    /// The response statuses worth another attempt.
    public var retryableStatuses: Set<HTTPStatus> {
        didSet { lowestRetryableStatus = Self.lowest(of: retryableStatuses) }
    }
    /// The lowest of ``retryableStatuses``: a lower status (every success) is answered without hashing.
    private var lowestRetryableStatus: Int
    /// The failure codes worth another attempt. ``HTTPError/Code/cancelled``,
    /// ``HTTPError/Code/resetInProgress`` and ``HTTPError/Code/invalidRequest`` are never retried, even if
    /// listed.
    public var retryableCodes: Set<HTTPError.Code>
    /// The longest server-requested wait (`Retry-After` and friends) this strategy accepts; beyond it, the
    /// response is returned instead of waiting.
    public var maximumRetryAfter: Duration

    public init(
        schedule: Schedule,
        maximumNumberOfAttempts: Int,
        maximumDelay: Duration = .seconds(30),
        jitter: Jitter = .none,
        retryableStatuses: Set<HTTPStatus> = [
            .requestTimeout, .tooManyRequests, .internalServerError, .badGateway,
            .serviceUnavailable, .gatewayTimeout,
        ],
        retryableCodes: Set<HTTPError.Code> = [.cannotConnect, .timedOut],
        maximumRetryAfter: Duration = .seconds(60)
    ) {
        self.schedule = schedule
        self.maximumNumberOfAttempts = maximumNumberOfAttempts
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.retryableStatuses = retryableStatuses
        self.lowestRetryableStatus = Self.lowest(of: retryableStatuses)
        self.retryableCodes = retryableCodes
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// Whether `status` is one of ``retryableStatuses``.
    public func mayRetry(_ status: HTTPStatus) -> Bool {
        status.rawValue >= lowestRetryableStatus && retryableStatuses.contains(status)
    }

    private static func lowest(of statuses: Set<HTTPStatus>) -> Int {
        statuses.map(\.rawValue).min() ?? Int.max
    }

    public func retryDecision(for result: HTTPResult, context: RetryContext) -> RetryDecision {
        guard context.attempt < maximumNumberOfAttempts else { return .doNotRetry }
        switch result {
        case .failure(let error):
            guard retryableCodes.contains(error.code),
                ![.cancelled, .resetInProgress, .invalidRequest].contains(error.code)
            else { return .doNotRetry }
            return .retry(after: delay(afterAttempt: context.attempt))
        case .success(let response):
            guard mayRetry(response.status) else { return .doNotRetry }
            if let requested = RetryAfter.delay(in: response, now: context.now) {
                return requested <= maximumRetryAfter ? .retry(after: requested) : .doNotRetry
            }
            return .retry(after: delay(afterAttempt: context.attempt))
        }
    }

    /// The scheduled delay after attempt number `attempt`, capped and jittered.
    ///
    /// Defined for every attempt number (numbers below 1 count as 1), every schedule and every
    /// ``maximumDelay``, and computed in constant time: the result is between zero and ``maximumDelay``
    /// (and a century). Without jitter, an exponential schedule with a multiplier of 1 or more never gives
    /// a shorter delay for a later attempt.
    ///
    /// - Parameter attempt: The number of the attempt that just failed: 1 after the first.
    /// - Returns: How long to wait before the next attempt.
    public func delay(afterAttempt attempt: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterAttempt: attempt, using: &generator)
    }

    /// The scheduled delay after attempt number `attempt`, jittered with `generator`'s random numbers.
    ///
    /// - Parameters:
    ///   - attempt: The number of the attempt that just failed: 1 after the first.
    ///   - generator: The source of randomness for ``jitter``; a seeded generator makes delays reproducible.
    /// - Returns: How long to wait before the next attempt; see ``delay(afterAttempt:)``.
    public func delay<Generator: RandomNumberGenerator>(
        afterAttempt attempt: Int, using generator: inout Generator
    ) -> Duration {
        let capped = scheduledDelay(afterAttempt: attempt)
        switch jitter.code {
        case .none:
            return capped
        case .full:
            return spread(from: .zero, to: capped, using: &generator)
        case .equal:
            return spread(from: capped / 2, to: capped, using: &generator)
        }
    }

    /// A random duration in `lower...upper`, both at most a century apart.
    private func spread<Generator: RandomNumberGenerator>(
        from lower: Duration, to upper: Duration, using generator: inout Generator
    ) -> Duration {
        let range = upper - lower
        // `range` is at most a century, far inside `Duration`'s range; `min` absorbs the rounding of
        // `Duration × Double`.
        return lower + min(range * Double.random(in: 0...1, using: &generator), range)
    }

    /// The delay the schedule gives after `attempt`, clamped to `0...maximumDelay` (and a century).
    private func scheduledDelay(afterAttempt attempt: Int) -> Duration {
        let ceiling = maximumDelay.clampedToRetryRange
        switch schedule {
        case .immediately:
            return .zero
        case .constant(let delay):
            return min(delay.clampedToRetryRange, ceiling)
        case .exponential(let initial, let multiplier):
            let initial = min(initial.clampedToRetryRange, ceiling)
            guard initial > .zero else { return .zero }
            let exponent = attempt > 1 ? Double(attempt - 1) : 0
            let growth = multiplier.isNaN ? 1 : pow(max(multiplier, 0), exponent)
            let seconds = initial.secondsClampedToRetryRange * growth
            guard seconds < ceiling.secondsClampedToRetryRange else { return ceiling }
            return min(Duration(clampingRetrySeconds: seconds), ceiling)
        }
    }
}

/// The standard strategies, written `.exponential()`, `.constant(…)`, `.never` wherever a strategy is expected.
extension HTTPRetryStrategy where Self == Backoff {
    /// Retries at once, up to `maximumNumberOfAttempts` attempts in all.
    public static func immediately(maximumNumberOfAttempts: Int) -> Backoff {
        Backoff(schedule: .immediately, maximumNumberOfAttempts: maximumNumberOfAttempts)
    }

    /// Retries after the same delay each time.
    public static func constant(
        delay: Duration, maximumNumberOfAttempts: Int, jitter: Backoff.Jitter = .none
    ) -> Backoff {
        Backoff(schedule: .constant(delay), maximumNumberOfAttempts: maximumNumberOfAttempts, jitter: jitter)
    }

    /// Retries after a delay that doubles (or grows by `multiplier`) each time, up to `maximumDelay`.
    public static func exponential(
        initialDelay: Duration = .milliseconds(500),
        multiplier: Double = 2,
        maximumNumberOfAttempts: Int = 3,
        maximumDelay: Duration = .seconds(30),
        jitter: Backoff.Jitter = .full
    ) -> Backoff {
        Backoff(
            schedule: .exponential(initial: initialDelay, multiplier: multiplier),
            maximumNumberOfAttempts: maximumNumberOfAttempts,
            maximumDelay: maximumDelay,
            jitter: jitter
        )
    }

    /// ``Retry``'s default: exponential from 500 ms, doubling, three attempts in all, full jitter.
    public static var standard: Backoff { .exponential() }

    /// Never retries; set it as a request's ``HTTPRequest/retryStrategy`` to opt one request out.
    public static var never: Backoff { Backoff(schedule: .immediately, maximumNumberOfAttempts: 1) }
}

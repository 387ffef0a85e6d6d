public import Foundation
import Synchronization

/// A loader that sends a request again when its strategy says the failure is worth another attempt.
///
/// ```swift
/// let chain = Retry() --> Throttle(maximumNumberOfRequests: 4) --> URLSessionLoader()
/// ```
///
/// For each attempt the loader sends a fresh copy of the request downstream, numbered in
/// ``HTTPRequest/attemptNumber``. After the attempt it asks the request's ``HTTPRequest/retryStrategy``, or
/// its own ``defaultStrategy``, whether to try again, then waits the delay on its `Clock` and repeats.
/// The result of the last attempt is returned; its `request.attemptNumber` says how many were made. Each retry is
/// reported to the load's observers (``HTTPEvent/Kind/retryScheduled``, see ``Observe``) before the wait.
///
/// Whatever the strategy says, a request is repeated only when
/// - it is idempotent (``HTTPRequest/isIdempotent``): `POST` and `PATCH` need an
///   ``HTTPRequest/idempotencyKey`` (sent as `Idempotency-Key` on every attempt) or an explicit opt-in;
/// - it was not cancelled, refused by a reset, or invalid;
/// - its body can be sent again (``HTTPBody/isReplayable``): otherwise the load fails with
///   ``HTTPError/Code/bodyNotReplayable``, carrying the attempt's response, instead of sending the body empty;
/// - the ``RetryBudget`` allows it.
///
/// A streamed response (``HTTPLoader/stream(_:)``) is decided on when its head arrives; a retried one's body is
/// stopped.
///
/// Cancelling the caller's task during a wait ends it at once with ``HTTPError/Code/cancelled``.
/// A reset (``HTTPLoader/reset(mode:)``) ends every wait with ``HTTPError/Code/resetInProgress`` at once, refuses
/// new requests and further attempts until it ends, and waits for the attempts in flight.
///
/// ## Where it goes in the chain
///
/// Put `Retry` *before* ``Throttle``: `Retry --> Throttle` gives up its throttle slot while it waits, so
/// one request's retries cannot hold back the others. With `Throttle --> Retry` a request keeps its slot
/// through every attempt and every wait (with one slot: A's three attempts, then B).
// Safety: configuration is immutable; the waiting retries live in `state`, behind a lock.
public final class Retry: HTTPLoader, @unchecked Sendable {
    /// The strategy for requests that carry none of their own.
    public let defaultStrategy: any HTTPRetryStrategy
    /// The budget retries are drawn from, or `nil` for no limit beyond the strategies'.
    public let budget: RetryBudget?
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date

    private enum WaitOutcome: Sendable {
        case elapsed, cancelled, reset
    }

    private struct State {
        /// Requests waiting out a delay before their next attempt.
        var waiters = Waiters<WaitOutcome>()
        /// The task that ends each wait when its delay has elapsed.
        var sleepers: [UInt64: Task<Void, Never>] = [:]
    }

    private let state = Locked(State())

    /// - Parameters:
    ///   - strategy: The default strategy; ``Backoff/standard`` unless you pass one.
    ///   - budget: Limits retries to a fraction of traffic; a fresh ``RetryBudget`` by default.
    ///   - clock: The clock delays are measured on; a `ContinuousClock` by default, a manual one in tests.
    ///   - now: The wall-clock time, for `Retry-After` dates.
    public init(
        strategy: any HTTPRetryStrategy = Backoff.standard,
        budget: RetryBudget? = RetryBudget(),
        clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.defaultStrategy = strategy
        self.budget = budget
        self.clock = clock
        self.now = now
    }

    /// The default strategy and the budget.
    public override var configurationDescription: String {
        "strategy: \(defaultStrategy), budget: \(budget.map { "\($0)" } ?? "none")"
    }

    /// The number of requests waiting out a delay before their next attempt now: a gauge for metrics (see
    /// "Gauges" in <doc:ObservingLoads>).
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        var base = request
        if let key = request.idempotencyKey, !base.headers.contains("Idempotency-Key") {
            base.headers["Idempotency-Key"] = key
        }
        let strategy = request.retryStrategy ?? defaultStrategy
        // Counted here, so that a reset waits for the decision about each attempt at the head of a chain too.
        return await withLoadCounted {
            // The first attempt, in this small frame: a request waiting downstream (in a throttle, for a token)
            // holds only this frame, not the larger one of the retry loop.
            let result = await loadNext(base)
            // The common case: a response the strategy never retries.
            if case .success(let response) = result, !strategy.mayRetry(response.status) {
                budget?.record(response.status)
                return result
            }
            return await retrying(base, after: result, strategy: strategy)
        }
    }

    /// Decides about the first attempt's result, and retries while the strategy says so.
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    private func retrying(
        _ base: HTTPRequest, after first: HTTPResult, strategy: any HTTPRetryStrategy
    ) async
        -> HTTPResult
    {
        var result = first
        var attemptNumber = 1
        while true {
            var attempt = base
            if attemptNumber > 1 {
                attempt.attemptNumber = attemptNumber  // 1 is the default: no copy of the options
                if isResetting, !attempt.isPartOfReset { return .failure(refusal(of: attempt, after: result)) }
                result = await loadNext(attempt)
            }

            let delay: Duration
            switch next(after: &result, of: attempt, attemptNumber: attemptNumber, strategy: strategy) {
            case .finish(let final): return final
            case .retry(after: let wait): delay = wait
            }
            switch await wait(delay) {
            case .elapsed:
                attemptNumber += 1
            case .cancelled:
                return .failure(
                    HTTPError(
                        .cancelled,
                        request: attempt,
                        message: "cancelled while waiting to retry after attempt \(attemptNumber)",
                        response: result.response
                    )
                )
            case .reset:
                return .failure(refusal(of: attempt, after: result))
            }
        }
    }

    /// What `retrying` does after attempt `attemptNumber` of `attempt` ended with `result`.
    private enum Next {
        case finish(HTTPResult)
        /// Wait this long, then send the next attempt (the retry is scheduled: `result`'s body is discarded).
        case retry(after: Duration)
    }

    /// Decides whether attempt `attemptNumber` is the last; when it is not, discards `result`'s body and reports the
    /// retry to the request's observers.
    @inline(never)  // one copy, not one in each of retrying's async pieces
    private func next(
        after result: inout HTTPResult, of attempt: HTTPRequest, attemptNumber: Int, strategy: any HTTPRetryStrategy
    ) -> Next {
        guard let delay = retryDelay(for: result, of: attempt, strategy: strategy) else {
            return .finish(attemptNumber > 1 ? Self.counted(result, attempts: attemptNumber) : result)
        }
        if !attempt.body.isReplayable {
            return .finish(
                .failure(
                    HTTPError(
                        .bodyNotReplayable, request: attempt,
                        message: "Retry would send attempt \(attemptNumber + 1), but the request's body "
                            + "(\(type(of: attempt.body))) can be sent only once",
                        response: result.response ?? result.error?.response, underlyingError: result.error)))
        }
        result.response?.discardBody()
        attempt.emit(.retryScheduled, result: result, delay: delay)
        return .retry(after: delay)
    }

    /// `result`, the last of `attempts`: a failure's message says how many attempts were made.
    private static func counted(_ result: HTTPResult, attempts: Int) -> HTTPResult {
        guard case .failure(var error) = result else { return result }
        error.message += " (after \(attempts) attempts)"
        return .failure(error)
    }

    /// How long to wait before the next attempt, or `nil` to return `result`.
    private func retryDelay(
        for result: HTTPResult, of attempt: HTTPRequest, strategy: any HTTPRetryStrategy
    )
        -> Duration?
    {
        if case .failure(let error) = result, [.cancelled, .resetInProgress, .invalidRequest].contains(error.code) {
            return nil
        }
        budget?.record(result)
        if Task.isCancelled { return nil }
        let context = RetryContext(attempt: attempt.attemptNumber, now: now())
        guard case .retry(let delay) = strategy.retryDecision(for: result, context: context),
            attempt.isIdempotent,
            budget?.allowsRetry ?? true
        else { return nil }
        return delay.clampedToRetryRange  // a clock cannot sleep beyond a century
    }

    /// Waits on the clock, unless cancelled or reset first.
    private func wait(_ delay: Duration) async -> WaitOutcome {
        let id = state.withLock { $0.waiters.nextID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let refused = state.withLock { state -> Bool in
                    if Task.isCancelled {
                        state.waiters.answerUnparked(id, with: .cancelled)
                    } else if isResetting {
                        state.waiters.answerUnparked(id, with: .reset)
                    } else {
                        state.waiters.park(id, continuation)
                        return false
                    }
                    return true
                }
                if refused {
                    continuation.resume()
                    return
                }
                let sleeper = Task { [clock] in
                    do {
                        try await clock.sleep(for: delay)
                        self.finishWait(id, with: .elapsed)
                    } catch {
                        // Cancelled because the wait already ended (cancellation or reset).
                    }
                }
                let alreadyEnded = state.withLock { state -> Bool in
                    guard state.waiters.isWaiting(id) else { return true }
                    state.sleepers[id] = sleeper
                    return false
                }
                if alreadyEnded { sleeper.cancel() }
            }
        } onCancel: {
            finishWait(id, with: .cancelled)
        }
        return state.withLock { $0.waiters.takeAnswer(id) } ?? .cancelled
    }

    /// Ends wait `id` with `outcome`, unless it already ended.
    private func finishWait(_ id: UInt64, with outcome: WaitOutcome) {
        let (continuation, sleeper) = state.withLock { state in
            (state.waiters.answer(id, with: outcome), state.sleepers.removeValue(forKey: id))
        }
        sleeper?.cancel()
        continuation?.resume()
    }

    /// The failure of a retry abandoned because the chain is resetting: it keeps the last attempt's response.
    private func refusal(of request: HTTPRequest, after previous: HTTPResult) -> HTTPError {
        let attempt = request.attemptNumber
        return HTTPError(
            .resetInProgress,
            request: request,
            message: "the retry after attempt \(attempt) was abandoned because the chain is resetting",
            response: previous.response ?? previous.error?.response,
            underlyingError: previous.error
        )
    }

    /// Ends every wait for a retry with ``HTTPError/Code/resetInProgress``.
    public override func failHeldLoads(_ mode: ResetMode) {
        let (continuations, sleepers) = state.withLock { state in
            defer { state.sleepers = [:] }
            return (state.waiters.answerAll(with: .reset), state.sleepers.values)
        }
        for sleeper in sleepers { sleeper.cancel() }
        for continuation in continuations { continuation.resume() }
    }
}

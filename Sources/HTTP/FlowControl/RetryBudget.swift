import Synchronization

/// Limits retries to a fraction of traffic, so that a failing server gets a trickle of retries rather than
/// a multiple of its normal load.
///
/// A token bucket, after gRPC's retry throttling: the bucket starts full with ``maximumTokens``. Every
/// attempt that fails (a transport failure, `408`, `429` or `5xx`) takes one token; every attempt that
/// succeeds adds ``tokensPerSuccess``. A retry is allowed only while more than half the tokens are left. When every
/// request fails, retries stop after `maximumTokens / 2` failures and resume as successes refill the
/// bucket — at most about one retry per `1 / tokensPerSuccess` successes.
///
/// ```swift
/// let budget = RetryBudget(maximumTokens: 20, tokensPerSuccess: 0.2)
/// let chain = Retry(budget: budget) --> Throttle(maximumNumberOfRequests: 4) --> URLSessionLoader()
/// ```
///
/// One budget can be shared by several ``Retry`` loaders that talk to the same service.
public final class RetryBudget: Sendable {
    /// The bucket's capacity.
    public let maximumTokens: Double
    /// What a successful attempt puts back.
    public let tokensPerSuccess: Double
    /// The tokens left, as the bit pattern of a `Double`: updated on every response, so atomically rather
    /// than under a lock — and not written at all while the bucket is full.
    private let tokenBits: Atomic<UInt64>

    /// - Parameters:
    ///   - maximumTokens: The capacity; the bucket starts full. 10 by default.
    ///   - tokensPerSuccess: What a success adds; 0.1 by default (one retry earned per ten successes).
    public init(maximumTokens: Double = 10, tokensPerSuccess: Double = 0.1) {
        self.maximumTokens = maximumTokens
        self.tokensPerSuccess = tokensPerSuccess
        self.tokenBits = Atomic(maximumTokens.bitPattern)
    }

    /// The tokens left.
    public var availableTokens: Double { Double(bitPattern: tokenBits.load(ordering: .relaxed)) }

    /// Records a successful attempt: one that got a response other than `408`, `429` or a `5xx`.
    public func recordSuccess() {
        updateTokens { min(maximumTokens, $0 + tokensPerSuccess) }
    }

    /// Records a failed attempt: a transport failure, or a `408`, `429` or `5xx` response.
    public func recordFailure() {
        updateTokens { max(0, $0 - 1) }
    }

    /// Whether a retry may be sent now: more than half the tokens are left.
    public var allowsRetry: Bool {
        availableTokens > maximumTokens / 2
    }

    /// Records the outcome of an attempt as a success or a failure; see ``recordSuccess()`` and
    /// ``recordFailure()``. Cancelled and reset attempts, invalid requests and requests a ``CircuitBreaker`` refused
    /// without sending them say nothing about the server and are not counted.
    public func record(_ result: HTTPResult) {
        switch result {
        case .success(let response):
            record(response.status)
        case .failure(let error):
            if ![.cancelled, .resetInProgress, .invalidRequest, .circuitOpen].contains(error.code) {
                recordFailure()
            }
        }
    }

    /// Records a response's status: `408`, `429` and `5xx` as failures, anything else as a success.
    func record(_ status: HTTPStatus) {
        if status.isServerError || status == .tooManyRequests || status == .requestTimeout {
            recordFailure()
        } else {
            recordSuccess()
        }
    }

    /// Replaces the tokens with `transform(tokens)`, retrying if another thread changed them meanwhile.
    private func updateTokens(_ transform: (Double) -> Double) {
        var current = tokenBits.load(ordering: .relaxed)
        while true {
            let new = transform(Double(bitPattern: current)).bitPattern
            if new == current { return }
            let (exchanged, original) = tokenBits.compareExchange(
                expected: current, desired: new, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}

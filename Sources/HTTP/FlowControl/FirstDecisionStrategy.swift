/// A retry strategy made of several: they are asked in order, and the first that decides to retry wins.
///
/// Write it `.firstDecision(of:)` wherever a strategy is expected:
///
/// ```swift
/// let retry = Retry(strategy: .firstDecision(of: [RetryOnConflict(), .standard]))
/// ```
///
/// A member that answers ``RetryDecision/doNotRetry`` has no opinion: the next member is asked, as
/// Alamofire's `Interceptor` asks its retriers. When none decides to retry, neither does the combination.
/// A member is not asked about a response whose status its ``HTTPRetryStrategy/mayRetry(_:)`` rules out.
///
/// Since no member can veto a retry, put the narrow strategies first and the general one, such as
/// ``Backoff/standard``, last; each member counts attempts on its own, from ``RetryContext/attempt``.
/// ``Retry`` still applies its own rules (idempotency, cancellation, the ``RetryBudget``) to whatever the
/// combination decides.
public struct FirstDecisionStrategy: HTTPRetryStrategy {
    /// The strategies, in the order they are asked.
    public var strategies: [any HTTPRetryStrategy]

    /// A strategy that asks `strategies` in order; see ``FirstDecisionStrategy``.
    ///
    /// - Parameter strategies: The strategies, in the order they are asked. With none, nothing is retried.
    public init(_ strategies: [any HTTPRetryStrategy]) {
        self.strategies = strategies
    }

    /// The first member's decision to retry, or ``RetryDecision/doNotRetry`` when none decides to.
    ///
    /// - Parameters:
    ///   - result: The result of the attempt that just completed.
    ///   - context: The attempt's number and the current time, passed to every member asked.
    /// - Returns: The first ``RetryDecision/retry(after:)`` a member returns, or ``RetryDecision/doNotRetry``.
    public func retryDecision(for result: HTTPResult, context: RetryContext) -> RetryDecision {
        let status = result.response?.status
        for strategy in strategies {
            if let status, !strategy.mayRetry(status) { continue }
            let decision = strategy.retryDecision(for: result, context: context)
            if case .retry = decision { return decision }
        }
        return .doNotRetry
    }

    /// Whether any member might retry a response with this status.
    public func mayRetry(_ status: HTTPStatus) -> Bool {
        strategies.contains { $0.mayRetry(status) }
    }
}

extension HTTPRetryStrategy where Self == FirstDecisionStrategy {
    /// A strategy that asks `strategies` in order; the first that decides to retry wins, and
    /// ``RetryDecision/doNotRetry`` means "ask the next". See ``FirstDecisionStrategy``.
    ///
    /// ```swift
    /// var upload = HTTPRequest(method: .put, path: "/avatar")
    /// upload.retryStrategy = .firstDecision(of: [RetryOnConflict(), Backoff.standard])
    /// ```
    ///
    /// - Parameter strategies: The strategies, in the order they are asked.
    /// - Returns: The combined strategy.
    public static func firstDecision(of strategies: [any HTTPRetryStrategy]) -> FirstDecisionStrategy {
        FirstDecisionStrategy(strategies)
    }
}

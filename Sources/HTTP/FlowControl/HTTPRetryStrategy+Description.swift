extension Backoff: CustomStringConvertible {
    /// The schedule, the number of attempts, the longest delay and the jitter, and the retryable statuses and
    /// codes when they are not the defaults: `Backoff(exponential: 500 ms × 2, attempts: 3, maximumDelay: 30 s,
    /// jitter: full)`.
    public var description: String {
        let schedule =
            switch self.schedule {
            case .immediately: "immediately"
            case .constant(let delay): "constant: \(delay.shortDescription)"
            case .exponential(let initial, let multiplier):
                "exponential: \(initial.shortDescription) × \(multiplier.shortDescription)"
            }
        var parts = [
            schedule, "attempts: \(maximumNumberOfAttempts)", "maximumDelay: \(maximumDelay.shortDescription)",
        ]
        if jitter != .none { parts.append("jitter: \(jitter)") }
        let defaults = Backoff(schedule: .immediately, maximumNumberOfAttempts: 1)
        if retryableStatuses != defaults.retryableStatuses {
            parts.append(
                "statuses: " + retryableStatuses.map(\.rawValue).sorted().map(String.init).joined(separator: " "))
        }
        if retryableCodes != defaults.retryableCodes {
            parts.append("codes: " + retryableCodes.map(\.rawValue).sorted().joined(separator: " "))
        }
        return "Backoff(\(parts.joined(separator: ", ")))"
    }
}

extension FirstDecisionStrategy: CustomStringConvertible {
    /// `firstDecision(of: [<each strategy>])`.
    public var description: String {
        "firstDecision(of: [\(strategies.map { "\($0)" }.joined(separator: ", "))])"
    }
}

extension RetryBudget: CustomStringConvertible {
    /// `RetryBudget(maximum: 10, perSuccess: 0.1)`: ``maximumTokens`` and ``tokensPerSuccess``.
    public var description: String {
        "RetryBudget(maximum: \(maximumTokens.shortDescription), perSuccess: \(tokensPerSuccess.shortDescription))"
    }
}

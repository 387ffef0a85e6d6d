extension Duration {
    /// The longest wait a retry strategy of this package asks for: a (Julian) century.
    ///
    /// Longer waits — a server's `Retry-After: 99999999999999999999`, an exponential schedule's thousandth
    /// attempt under a huge ``Backoff/maximumDelay`` — are clamped to it, so that every delay can be added to
    /// any clock's `now` and converted to `Double` seconds without overflowing.
    static let longestRetryDelay: Duration = .century

    /// `seconds` as a duration in `0...longestRetryDelay`: negative values and NaN are zero, larger values
    /// (infinity included) are ``longestRetryDelay``. Unlike `Duration.seconds(_: Double)`, never traps.
    init(clampingRetrySeconds seconds: Double) {
        self.init(clampingSeconds: seconds, to: .zero ... .longestRetryDelay)
    }

    /// This duration clamped to `0...longestRetryDelay`.
    var clampedToRetryRange: Duration {
        min(max(self, .zero), .longestRetryDelay)
    }

    /// This duration in seconds, clamped to `0...longestRetryDelay`. Unlike `components`, which traps beyond
    /// `Int64.max` seconds, defined for every duration.
    var secondsClampedToRetryRange: Double {
        clampedToRetryRange / .seconds(1)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`; for `TimeInterval`s and arithmetic with `Date`. Defined for every
    /// duration (`components` traps beyond `Int64.max` seconds).
    package var seconds: Double {
        self / .seconds(1)
    }

    /// `seconds` as a duration, clamped to `minimum...maximum` (NaN is `minimum`). Unlike
    /// `Duration.seconds(_: Double)`, which traps on values it cannot represent, it is defined for every
    /// `Double` — for durations that come from a server (`expires_in`) or a caller.
    package init(clampingSeconds seconds: Double, to range: ClosedRange<Duration>) {
        if !(seconds > range.lowerBound.seconds) {
            self = range.lowerBound
        } else if seconds >= range.upperBound.seconds {
            self = range.upperBound
        } else {
            self = min(max(.seconds(seconds), range.lowerBound), range.upperBound)
        }
    }

    /// A (Julian) century: the longest wait, lifetime or timeout this package works with. Longer ones are
    /// clamped to it, so that every duration can be added to a clock's `now` and converted to seconds.
    package static let century: Duration = .seconds(3_155_760_000)
}

extension Duration {
    /// The duration in seconds, as a `Double`; for `TimeInterval`s and arithmetic with `Date`. Defined for every
    /// duration (`components` traps beyond `Int64.max` seconds).
    package var seconds: Double {
        // Dividing two durations converts a 128-bit integer, and this is read on every request (a token's refresh
        // deadline); within about 285 years, whole nanoseconds divided once round as that does.
        guard self < Self.nanosecondsLimit, self > Self.negativeNanosecondsLimit else { return self / .seconds(1) }
        let (seconds, attoseconds) = components
        let inNanoseconds = Double(seconds * 1_000_000_000 + attoseconds / 1_000_000_000) / 1e9
        let belowANanosecond = attoseconds % 1_000_000_000
        return belowANanosecond == 0 ? inNanoseconds : inNanoseconds + Double(belowANanosecond) / 1e18
    }

    /// The durations whose nanoseconds an `Int64` holds, with room to spare.
    private static let nanosecondsLimit = Duration.seconds(9_000_000_000)
    private static let negativeNanosecondsLimit = Duration.zero - nanosecondsLimit

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

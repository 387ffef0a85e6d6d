extension Duration {
    /// The duration in seconds, as a `Double`; for `TimeInterval`s and arithmetic with `Date`.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

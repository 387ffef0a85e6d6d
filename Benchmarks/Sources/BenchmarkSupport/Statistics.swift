import Foundation

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
public func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
}

/// An approximate 95% confidence interval for the median of the population `values` were drawn from, from
/// their order statistics (distribution-free: it assumes only independent draws); `nil` for fewer than 6.
///
/// For 31 values it runs from the 10th smallest to the 22nd; for 93, from the 38th to the 56th.
public func medianConfidenceInterval(_ values: [Double]) -> (low: Double, high: Double)? {
    guard values.count >= 6 else { return nil }
    let sorted = values.sorted()
    let n = Double(values.count)
    let spread = 1.96 * n.squareRoot()
    let lowRank = max(1, Int(((n - spread) / 2).rounded(.down)))  // 1-based ranks
    let highRank = min(values.count, Int((1 + (n + spread) / 2).rounded(.up)))
    return (sorted[lowRank - 1], sorted[highRank - 1])
}

/// A small seeded random number generator (SplitMix64), so that a benchmark's random orders are the same
/// from run to run.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The least-squares line through `points`: its slope and intercept.
public func linearFit(_ points: [(x: Double, y: Double)]) -> (slope: Double, intercept: Double) {
    let n = Double(points.count)
    let meanX = points.map(\.x).reduce(0, +) / n
    let meanY = points.map(\.y).reduce(0, +) / n
    var covariance = 0.0
    var variance = 0.0
    for point in points {
        covariance += (point.x - meanX) * (point.y - meanY)
        variance += (point.x - meanX) * (point.x - meanX)
    }
    let slope = variance == 0 ? 0 : covariance / variance
    return (slope, meanY - slope * meanX)
}

extension Duration {
    /// The duration in nanoseconds, as a `Double`.
    public var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

/// Whether `BENCH_QUICK` asks for a quick run (`scripts/bench.sh --quick`): the suites then cut their durations
/// and iteration counts, to check that everything runs rather than to measure.
public var isQuickRun: Bool {
    let value = ProcessInfo.processInfo.environment["BENCH_QUICK"] ?? ""
    return !value.isEmpty && value != "0"
}

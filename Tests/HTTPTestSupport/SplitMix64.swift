import Foundation

/// A seeded generator so a failing randomised run can be replayed: tests print the seed they used.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A seed from the environment variable `name` when it is set (to replay a run), else a random one.
    public static func seed(fromEnvironment name: String = "HTTP_TEST_SEED") -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[name], let seed = UInt64(text) { return seed }
        return UInt64.random(in: .min ... .max)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import Foundation

extension Duration {
    /// The duration for people, in the unit that reads best: `250 ms`, `1.5 s`, `90 s`.
    package var shortDescription: String {
        let seconds = self.seconds
        if seconds != 0, abs(seconds) < 1 { return Self.trimmed(seconds * 1_000) + " ms" }
        return Self.trimmed(seconds) + " s"
    }

    /// `value` with at most three decimals and no trailing zeros.
    private static func trimmed(_ value: Double) -> String {
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

extension Double {
    /// The number for people: `2` rather than `2.0`, `0.1` as it is.
    package var shortDescription: String {
        if isFinite, self == rounded(), abs(self) < 1e15 { return String(Int64(self)) }
        return "\(self)"
    }
}

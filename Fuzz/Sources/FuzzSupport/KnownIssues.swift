import Foundation

/// Traps already reported and saved under `Fuzz/Crashers/`, which a long run can step around to find new ones.
///
/// With `FUZZ_SKIP_KNOWN=1` in the environment (`scripts/fuzz.sh --skip-known`), a harness does not make the call
/// that is known to trap for an input that would reach it. Without it (the default, and what `scripts/test.sh`
/// runs), every input is run in full, so a known trap is still found and fails the run until the product is fixed.
/// Remove a guard together with the fix, and move its crashers into the corpus.
public enum KnownIssues {
    public static let areSkipped = ProcessInfo.processInfo.environment["FUZZ_SKIP_KNOWN"] == "1"

    /// Whether `URLComponents`' `percentEncodedPath` or `percentEncodedQuery` setter would refuse this text (and
    /// trap): a byte outside RFC 3986's `pchar` set (plus `/`, and `?` in a query) or a `%` not followed by two hex
    /// digits. Slightly stricter than Foundation, which only means a few more inputs are stepped around.
    public static func componentsRefuse(path: String, query: String?) -> Bool {
        !isPercentEncoded(path, extra: "/") || !(query.map { isPercentEncoded($0, extra: "/?") } ?? true)
    }

    private static let pchar = Set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@".utf8)

    private static func isPercentEncoded(_ text: String, extra: String) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return false }
                index += 3
            } else {
                guard pchar.contains(byte) || extra.utf8.contains(byte) else { return false }
                index += 1
            }
        }
        return true
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }
}

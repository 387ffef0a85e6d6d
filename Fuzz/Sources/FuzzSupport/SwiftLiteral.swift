public import Foundation

/// Values written as Swift source, for the reproducers the targets print.
public enum SwiftLiteral {
    /// A string literal: ASCII printable characters as they are, everything else escaped scalar by scalar.
    public static func string(_ value: String) -> String {
        var literal = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\t": literal += "\\t"
            case "\0": literal += "\\0"
            case " "..."~": literal.unicodeScalars.append(scalar)
            default: literal += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return literal + "\""
    }

    public static func optionalString(_ value: String?) -> String {
        value.map(string) ?? "nil"
    }

    /// `Data("text".utf8)` for UTF-8 text, `Data([0x…])` for anything else.
    public static func data(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return "Data(\(string(text)).utf8)" }
        return "Data([" + bytes.map { "0x" + String($0, radix: 16, uppercase: true) }.joined(separator: ", ") + "])"
    }

    public static func double(_ value: Double) -> String {
        if value.isNaN { return ".nan" }
        if value.isInfinite { return value < 0 ? "-.infinity" : ".infinity" }
        return "\(value)"
    }

    public static func int(_ value: Int) -> String {
        switch value {
        case .min: "Int.min"
        case .max: "Int.max"
        default: "\(value)"
        }
    }

    public static func optionalInt(_ value: Int?) -> String {
        value.map(int) ?? "nil"
    }

    public static func duration(_ value: Duration) -> String {
        let (seconds, attoseconds) = value.components
        if attoseconds == 0 { return ".seconds(\(seconds))" }
        return "Duration(secondsComponent: \(seconds), attosecondsComponent: \(attoseconds))"
    }

    public static func date(_ value: Date) -> String {
        "Date(timeIntervalSince1970: \(double(value.timeIntervalSince1970)))"
    }

    public static func queryItems(_ items: [URLQueryItem]) -> String {
        "["
            + items.map { "URLQueryItem(name: \(string($0.name)), value: \(optionalString($0.value)))" }
            .joined(separator: ", ") + "]"
    }

    public static func fields(_ fields: [(name: String, value: String)]) -> String {
        "HTTPHeaders(["
            + fields.map { ".init(name: \(string($0.name)), value: \(string($0.value)))" }
            .joined(separator: ", ") + "])"
    }

    public static func dictionary(_ pairs: [(String, String)]) -> String {
        pairs.isEmpty ? "[:]" : "[" + pairs.map { "\(string($0.0)): \(string($0.1))" }.joined(separator: ", ") + "]"
    }
}

extension String {
    /// Whether `needle`'s UTF-8 bytes occur in this string's. Unlike `contains(_:)`, which compares Characters, it
    /// also finds text that a combining mark around it merges into another Character ("T" in "T\u{301}").
    public func containsBytes(of needle: String) -> Bool {
        let haystack = Array(utf8)
        let needle = Array(needle.utf8)
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            haystack[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}

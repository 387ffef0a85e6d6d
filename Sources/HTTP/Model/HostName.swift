import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// Host names as they go on the wire: checked, lowercased, international names in their ASCII form.
///
/// One function serves both validation (the URL a request is sent to) and ``Origin`` (where credentials may
/// go), so that the host a secret is bound to is compared in exactly the form the request is sent with.
enum HostName {
    /// What a host is, once checked.
    enum Checked: Equatable {
        /// The host in its wire form: an ASCII name as it was given, an international name lowercased with
        /// each of its labels as `xn--` Punycode, an IPv6 literal in brackets.
        case valid(String)
        /// Why the host cannot be sent, as a phrase that follows the host in a message ("… contains ' '").
        case invalid(String)
    }

    /// Checks `host` and returns its wire form, or why it has none. Host names are not case-sensitive; an ASCII
    /// name keeps the case it was given, as URLs do.
    ///
    /// A host is a registered name (ASCII letters, digits, `-`, `.`, `_`, `~`; international names allowed and
    /// converted with Punycode, RFC 3492), an IPv4 address, or an IPv6 literal in brackets such as `[::1]`.
    static func check(_ host: String) -> Checked {
        if host.isEmpty { return .invalid("is empty") }
        if host.utf8.first == UInt8(ascii: "[") { return checkIPv6Literal(host) }
        let nameBytes = nameBytes
        var isASCII = true  // learnt in the same pass
        let bad = host.firstUTF8Offset { byte in
            if byte >= 0x80 {
                isASCII = false
                return false
            }
            return !nameBytes[Int(byte)]
        }
        if let bad {
            return .invalid(
                "contains \(Describe.scalar(host.unicodeScalar(atUTF8Offset: bad))), which is not allowed in a host name"
            )
        }
        return isASCII ? .valid(host) : checkInternationalName(host)
    }

    /// Whether `host` is a registered name already in wire form and lowercase — ASCII name bytes, no capitals — as
    /// nearly every host is: ``check(_:)`` would return it unchanged, and lowercasing would not change it either.
    static func isLowercaseASCIIName(_ host: String) -> Bool {
        // Bit n of `low` is byte n, of `high` byte 64 + n: `-`, `.`, `0`–`9`; `_`, `a`–`z`, `~`.
        let low: UInt64 = 1 << 0x2D | 1 << 0x2E | 0x3FF << 0x30
        let high: UInt64 = 1 << (0x5F - 64) | 0x3FF_FFFF << (0x61 - 64) | 1 << (0x7E - 64)
        return !host.isEmpty
            && host.firstUTF8Offset { byte in
                byte < 64 ? low & (1 << UInt64(byte)) == 0 : byte >= 128 || high & (1 << UInt64(byte - 64)) == 0
            } == nil
    }

    /// `host` with brackets around an IPv6 address: some versions of `URLComponents` hand one over without them.
    static func bracketingIPv6(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// Whether `host` (in wire form, lowercased) names this machine: `localhost` and its subdomains (RFC 6761 §6.3), an
    /// IPv4 address in 127.0.0.0/8, or the IPv6 loopback address (also as an IPv4-mapped 127 address).
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        if host.hasPrefix("["), host.hasSuffix("]"), let bytes = ipv6Bytes(String(host.dropFirst().dropLast())) {
            let loopback = [UInt8](repeating: 0, count: 15) + [1]
            let mappedPrefix = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF]
            return bytes == loopback || (Array(bytes.prefix(12)) == mappedPrefix && bytes[12] == 127)
        }
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1 && withUnsafeBytes(of: &address) { $0.first == 127 }
    }

    private static func checkIPv6Literal(_ host: String) -> Checked {
        let literal = host.dropFirst()
        guard literal.hasSuffix("]"), ipv6Bytes(String(literal.dropLast())) != nil else {
            return .invalid("is not a valid IPv6 literal (such as [::1])")
        }
        return .valid(host)
    }

    /// The 16 bytes of an IPv6 address written without brackets, or `nil` when it is not one.
    private static func ipv6Bytes(_ text: String) -> [UInt8]? {
        // inet_pton reads a C string: an embedded NUL would end it early and let trailing bytes through.
        guard !text.utf8.contains(0) else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// An international name: mapped as UTS 46 maps it, near enough (NFKC, so that compatibility characters such as
    /// full-width letters or U+02E4 become the letters they stand for, then lowercased), then each label with
    /// non-ASCII characters encoded as `xn--` Punycode. Letters, marks and digits of any script are accepted, with `-` and `_`;
    /// spaces, controls, symbols and punctuation are not.
    private static func checkInternationalName(_ host: String) -> Checked {
        let normalized = host.precomposedStringWithCompatibilityMapping.lowercased()
        var labels: [String] = []
        // The ideographic and full-width full stops separate labels too (RFC 3490 §3.1).
        for label in normalized.split(
            omittingEmptySubsequences: false, whereSeparator: { ".。．｡".contains($0) })
        {
            if label.utf8.allSatisfy({ $0 < 0x80 }) {
                labels.append(String(label))
                continue
            }
            if let bad = label.unicodeScalars.first(where: { !isAllowedInInternationalLabel($0) }) {
                return .invalid("contains \(Describe.scalar(bad)), which is not allowed in a host name")
            }
            // `xn--` announces a label already in Punycode (UTS 46 §4.1): encoding this one would give `xn--xn--…`.
            if label.hasPrefix("xn--") {
                return .invalid(
                    "has a label that starts with 'xn--' but is not ASCII: only a Punycode label may start so")
            }
            // UTS 46 §4.1, as URLComponents checks an international label: it begins with no combining mark, and
            // (CheckHyphens) has no `-` first or last, none in both the third and fourth places (reserved for the
            // `xn--` kind of prefix).
            let scalars = Array(label.unicodeScalars)
            if let first = scalars.first, first.properties.generalCategory.isMark {
                return .invalid(
                    "has an international label that begins with the combining mark \(Describe.scalar(first))")
            }
            if scalars.first == "-" || scalars.last == "-"
                || (scalars.count >= 4 && scalars[2] == "-" && scalars[3] == "-")
            {
                return .invalid(
                    "has the international label '\(Describe.printable(label))', which begins or ends with '-' "
                        + "or has '--' in its third and fourth places")
            }
            guard let encoded = Punycode.encode(label.unicodeScalars) else {
                return .invalid("has a label too long to encode")
            }
            // RFC 1035 §2.3.4: a label has at most 63 bytes; UTS 46 checks the encoded form, as URLComponents does.
            guard encoded.utf8.count + 4 <= 63 else {
                return .invalid(
                    "has a label of \(encoded.utf8.count + 4) bytes once encoded ('xn--\(encoded.prefix(12))…'); "
                        + "a DNS label has at most 63")
            }
            labels.append("xn--" + encoded)
        }
        return .valid(labels.joined(separator: "."))
    }

    private static func isAllowedInInternationalLabel(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return nameBytes[Int(scalar.value)] }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }

    /// Which ASCII bytes may appear in a registered name (RFC 3986 unreserved), indexed by byte.
    private static let nameBytes: [Bool] = (0..<128).map { byte in
        let byte = UInt8(byte)
        return (0x61...0x7A).contains(byte | 0x20) || (0x30...0x39).contains(byte) || "-._~".utf8.contains(byte)
    }
}

/// How characters are named in messages.
enum Describe {
    /// `'x'` for a printable ASCII character (`' '` for a space), `CR`, `LF`, `NUL`, else `U+XXXX`.
    static func scalar(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\r": "CR"
        case "\n": "LF"
        case "\0": "NUL"
        default:
            scalar.isASCII && scalar.value >= 0x20 && scalar.value != 0x7F
                ? "'\(scalar)'" : "U+" + String(scalar.value, radix: 16, uppercase: true)
        }
    }

    /// `text` with control characters escaped, safe to put inside a message.
    static func printable(_ text: some StringProtocol) -> String {
        text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? $0.escaped(asASCII: true) : String($0) }
            .joined()
    }
}

extension Unicode.GeneralCategory {
    /// A combining mark: nonspacing, spacing or enclosing.
    fileprivate var isMark: Bool {
        self == .nonspacingMark || self == .spacingMark || self == .enclosingMark
    }
}

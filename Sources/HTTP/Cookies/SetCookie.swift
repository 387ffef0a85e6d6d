import Foundation

/// One `Set-Cookie` field value read as RFC 6265bis §5.6 says a user agent reads it: the name and value, and the
/// attributes the storage model uses, the last of each kind winning.
///
/// Reading never fails on a value that is merely odd — unknown attributes, bad dates, a `Max-Age` that is not a
/// number are ignored one by one — and never traps: a value with control characters, or with an empty name and
/// value, or a name and value over 4096 bytes, is no cookie (`nil`).
struct SetCookie: Sendable, Hashable {
    var name: String
    var value: String
    /// The last valid `Expires`, clamped to 400 days from now (§5.6.1).
    var expires: Date?
    /// The expiry the last valid `Max-Age` gives (now plus it, clamped to 400 days; the distant past for zero or
    /// less). It wins over `Expires`, wherever each stands.
    var maxAgeExpiry: Date?
    /// The last `Domain`, lowercased, without a leading dot; `nil` when absent (an empty one is ignored).
    var domain: String?
    /// The last `Path` that starts with `/`; `nil` when absent or not one (the default path then applies).
    var path: String?
    var isSecure = false
    var isHTTPOnly = false
    var sameSite = Cookie.SameSite.default

    /// The longest name and value together, in bytes (§5.6 step 6).
    static let maximumNameAndValueLength = 4096
    /// The longest attribute value, in bytes; a longer one is ignored (§5.6 step 7).
    static let maximumAttributeValueLength = 1024
    /// The furthest expiry a cookie may have: 400 days (§5.6.1, §5.6.2).
    static let maximumLifetime: TimeInterval = 400 * 86_400

    /// The cookie `line` sets, received at `now`; `nil` when it sets none.
    init?(_ line: String, now: Date) {
        let bytes = Array(line.utf8)
        // §5.6 step 1: a control character other than HTAB makes the whole line void.
        guard !bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = bytes[..<semicolon]
        if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
            name = Self.text(Self.trimmed(pair[..<equals]))
            value = Self.text(Self.trimmed(pair[(equals + 1)...]))
        } else {
            name = ""
            value = Self.text(Self.trimmed(pair))
        }
        guard !(name.isEmpty && value.isEmpty),
            name.utf8.count + value.utf8.count <= Self.maximumNameAndValueLength
        else { return nil }

        guard semicolon < bytes.endIndex else { return }
        let attributes = bytes[(semicolon + 1)...].split(separator: UInt8(ascii: ";"))
        for attribute in attributes {
            let attributeName: ArraySlice<UInt8>
            let attributeValue: ArraySlice<UInt8>
            if let equals = attribute.firstIndex(of: UInt8(ascii: "=")) {
                attributeName = Self.trimmed(attribute[..<equals])
                attributeValue = Self.trimmed(attribute[(equals + 1)...])
            } else {
                attributeName = Self.trimmed(attribute)
                attributeValue = []
            }
            guard attributeValue.count <= Self.maximumAttributeValueLength else { continue }
            apply(Self.text(attributeName).lowercased(), attributeValue, now: now)
        }
    }

    private mutating func apply(_ attribute: String, _ value: ArraySlice<UInt8>, now: Date) {
        switch attribute {
        case "expires":
            guard let date = CookieDate.parse(value) else { return }
            expires = min(date, now + Self.maximumLifetime)
        case "max-age":
            guard let seconds = Self.maxAge(value) else { return }
            maxAgeExpiry =
                seconds <= 0 ? Date.distantPast : now + min(TimeInterval(seconds), Self.maximumLifetime)
        case "domain":
            guard !value.isEmpty else { return }  // §5.6.3: the user agent should ignore an empty Domain
            var domain = value
            if domain.first == UInt8(ascii: ".") { domain.removeFirst() }
            self.domain = Self.text(domain).lowercased()
        case "path":
            path = value.first == UInt8(ascii: "/") ? Self.text(value) : nil
        case "secure": isSecure = true
        case "httponly": isHTTPOnly = true
        case "samesite":
            switch Self.text(value).lowercased() {
            case "strict": sameSite = .strict
            case "lax": sameSite = .lax
            case "none": sameSite = .none
            default: sameSite = .default
            }
        default: break
        }
    }

    /// The `Set-Cookie` lines in a field value a transport folded into one, joined with commas (as `URLSession`'s
    /// `allHeaderFields` does, though RFC 9110 §5.3 forbids it for this field): split at each comma followed by
    /// optional whitespace, a name and `=` — so the comma of an `Expires` date (`Wed, 09 Jun 2021 …`) never splits.
    /// A value without such a comma is one line.
    static func unfolded(_ value: String) -> [String] {
        let bytes = Array(value.utf8)
        var lines: [String] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: ",") && startsCookie(bytes, after: index) {
            lines.append(text(trimmed(bytes[start..<index])))
            start = index + 1
        }
        lines.append(text(trimmed(bytes[start...])))
        return lines.filter { !$0.isEmpty }
    }

    /// Whether a cookie's `name=` follows the comma at `comma`, after optional whitespace.
    private static func startsCookie(_ bytes: [UInt8], after comma: Int) -> Bool {
        var index = comma + 1
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        let nameStart = index
        let endsName: [UInt8] = [UInt8(ascii: ";"), UInt8(ascii: ","), UInt8(ascii: "="), 0x20, 0x09]
        while index < bytes.count, !endsName.contains(bytes[index]) { index += 1 }
        return index > nameStart && index < bytes.count && bytes[index] == UInt8(ascii: "=")
    }

    /// The expiry the cookie's attributes give it: `Max-Age`'s, else `Expires`', else none (a session cookie).
    var expiry: Date? { maxAgeExpiry ?? expires }

    /// `Max-Age`'s value (§5.6.2): an optional `-` and digits; `nil` otherwise. Huge values saturate.
    static func maxAge(_ value: ArraySlice<UInt8>) -> Int64? {
        var digits = value
        let isNegative = digits.first == UInt8(ascii: "-")
        if isNegative { digits.removeFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        var seconds: Int64 = 0
        for digit in digits { seconds = min(seconds * 10 + Int64(digit - UInt8(ascii: "0")), Int64(UInt32.max)) }
        return isNegative ? -seconds : seconds
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var bytes = bytes
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        return bytes
    }

    /// The bytes as text; invalid UTF-8 is repaired (a server's bytes, kept as faithfully as a `String` can).
    static func text(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

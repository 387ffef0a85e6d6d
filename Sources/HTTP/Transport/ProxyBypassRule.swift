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

/// One entry of a proxy bypass list (`no_proxy`): the hosts that are reached directly.
///
/// An entry is
/// - `*`: every host;
/// - a host name, with or without a leading `.` or `*.`: that host and every host below it (`example.com` matches
///   `example.com` and `api.example.com`, not `badexample.com`); case and a trailing `.` do not matter;
/// - an IP address, IPv6 with or without brackets, optionally with a prefix length (`10.0.0.0/8`, `fd00::/8`): the
///   addresses it covers, for hosts written as IP addresses (no name is resolved);
/// - any of these with a port (`example.com:8080`, `[::1]:8443`, `10.1.2.3:80`): only requests to that port.
///
/// ``Dialect/curl`` reads the list as libcurl does, for the comparison ``URLSessionLoader`` makes on Linux: an
/// entry with a port matches nothing there, and `*` counts only as the whole list.
struct ProxyBypassRule: Hashable, Sendable {
    /// How a list is read.
    enum Dialect: Hashable, Sendable {
        /// Every form above.
        case standard
        /// libcurl's reading, as far as this package relies on it.
        case curl
    }

    enum Pattern: Hashable, Sendable {
        case everything
        /// A lowercased name without leading or trailing dots.
        case domain(String)
        /// An address (4 or 16 bytes) and how many of its leading bits must match.
        case network([UInt8], prefixLength: Int)
        /// An entry that matches nothing (a port under ``Dialect/curl``, an unreadable prefix length).
        case nothing
    }

    var pattern: Pattern
    var port: Int?

    /// The rules of a comma-separated list (spaces around entries are ignored, as are empty entries).
    static func parse(list: String, dialect: Dialect) -> [ProxyBypassRule] {
        let entries = list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
        if dialect == .curl, entries != ["*"] {
            return entries.map { $0 == "*" ? ProxyBypassRule(pattern: .nothing) : parse(entry: $0, dialect: dialect) }
        }
        return entries.map { parse(entry: $0, dialect: dialect) }
    }

    static func parse(entry: String, dialect: Dialect) -> ProxyBypassRule {
        if entry == "*" { return ProxyBypassRule(pattern: .everything) }
        var text = Substring(entry.lowercased())
        var port: Int?
        // A port: after a bracketed IPv6 address, or after the only colon (an unbracketed IPv6 address has several).
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return ProxyBypassRule(pattern: .nothing) }
            let rest = text[text.index(after: close)...]
            var address = text[text.index(after: text.startIndex)..<close]
            var prefix = ""
            if rest.hasPrefix("/") {  // "[fd00::]/8"
                prefix = String(rest)
            } else if rest.hasPrefix(":"), let value = Int(rest.dropFirst()) {
                port = value
            } else if !rest.isEmpty {
                return ProxyBypassRule(pattern: .nothing)
            }
            if let slash = address.firstIndex(of: "/") {  // "[fd00::/8]"
                prefix = String(address[slash...])
                address = address[..<slash]
            }
            text = address + prefix
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            guard let value = Int(text[text.index(after: colon)...]) else { return ProxyBypassRule(pattern: .nothing) }
            port = value
            text = text[..<colon]
        }
        if port != nil, dialect == .curl { return ProxyBypassRule(pattern: .nothing) }
        if let network = network(text) { return ProxyBypassRule(pattern: network, port: port) }
        if text.hasPrefix("*.") { text = text.dropFirst(2) }
        while text.hasPrefix(".") { text = text.dropFirst() }
        while text.hasSuffix(".") { text = text.dropLast() }
        if text.isEmpty || text.contains("/") { return ProxyBypassRule(pattern: .nothing) }
        return ProxyBypassRule(pattern: .domain(String(text)), port: port)
    }

    /// An IP address with an optional `/prefix`, or `nil` when `text` is not one.
    private static func network(_ text: Substring) -> Pattern? {
        var addressText = text
        var prefixLength: Int?
        if let slash = text.firstIndex(of: "/") {
            addressText = text[..<slash]
            guard let value = Int(text[text.index(after: slash)...]) else { return nil }
            prefixLength = value
        }
        guard let bytes = ipAddress(String(addressText)) else { return nil }
        let length = prefixLength ?? bytes.count * 8
        guard (0...bytes.count * 8).contains(length) else { return .nothing }
        return .network(bytes, prefixLength: length)
    }

    /// The bytes of an IPv4 (4) or IPv6 (16, without brackets) address, or `nil`.
    static func ipAddress(_ text: String) -> [UInt8]? {
        guard !text.utf8.contains(0), !text.isEmpty else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// Whether a request to `host` (lowercased, without brackets or a trailing dot; `address` its bytes when it is an
    /// IP address) on `port` is to go direct.
    func matches(host: String, address: [UInt8]?, port: Int) -> Bool {
        if let own = self.port, own != port { return false }
        switch pattern {
        case .everything:
            return true
        case .nothing:
            return false
        case .domain(let domain):
            guard address == nil else { return false }
            return host == domain || (host.hasSuffix(domain) && host.dropLast(domain.count).hasSuffix("."))
        case .network(let network, let prefixLength):
            guard let address, address.count == network.count else { return false }
            var remaining = prefixLength
            for (a, b) in zip(address, network) where remaining > 0 {
                let bits = min(remaining, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                remaining -= bits
            }
            return true
        }
    }
}

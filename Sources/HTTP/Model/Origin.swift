public import Foundation

/// The scheme, host and port a request goes to (RFC 6454): what credentials are bound to.
///
/// Two requests have the same origin when their schemes, hosts and ports are equal, comparing schemes and
/// hosts without case, international host names in their ASCII form, and a missing port as the scheme's
/// default (443 for `https`, 80 for `http`). `https://api.example.com` and `https://API.example.com:443/v1`
/// share an origin; `http://api.example.com` and `https://api.example.com:8443` each have another.
///
/// Authentication loaders send credentials only to the origins they are given. A host name alone means
/// `https` on port 443, the common case; a host with a port means `https` on that port:
///
/// ```swift
/// let origins: Set<Origin> = [
///     "api.example.com",            // https://api.example.com:443
///     "files.example.com:8443",     // https://files.example.com:8443
///     "http://127.0.0.1:8080",      // a local server, over plain http
/// ]
/// ```
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// The scheme, lowercased.
    public let scheme: String
    /// The host in the form it is sent in: lowercased, an international name in Punycode (`xn--…`), an IPv6
    /// literal in brackets.
    public let host: String
    /// The port: the one given, or the scheme's default; `nil` only for a scheme without a default.
    public let port: Int?

    /// Creates an origin from its parts.
    ///
    /// - Parameters:
    ///   - scheme: The scheme; `https` by default.
    ///   - host: The host name or IP address (an IPv6 address in brackets).
    ///   - port: The port, or `nil` for the scheme's default.
    public init(scheme: String = "https", host: String, port: Int? = nil) {
        self.scheme = scheme.lowercased()
        switch HostName.check(host) {
        case .valid(let wireForm): self.host = wireForm.lowercased()
        // A host that cannot be sent matches no request; it is kept as given, for messages.
        case .invalid: self.host = host
        }
        self.port = port ?? Self.defaultPort(forScheme: self.scheme)
    }

    /// The origin of an absolute URL, or `nil` when the URL has no scheme or no host.
    public init?(_ url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme, let host = components.host, !host.isEmpty
        else { return nil }
        self.init(scheme: scheme, host: HostName.bracketingIPv6(host), port: components.port)
    }

    /// Reads an origin written as `scheme://host[:port]` (a path is ignored), or as a host with or without a port,
    /// which means `https`: on port 443, or on the port given. `nil` when the text is neither.
    ///
    /// ```swift
    /// Origin(parsing: "api.example.com")          // https://api.example.com
    /// Origin(parsing: "api.example.com:8443")     // https://api.example.com:8443
    /// Origin(parsing: "[::1]:8443")               // https://[::1]:8443
    /// Origin(parsing: "http://localhost:8080")    // http://localhost:8080
    /// ```
    public init?(parsing text: String) {
        if text.contains("://") {
            guard let url = URL(string: text), let origin = Origin(url) else { return nil }
            self = origin
        } else {
            guard let (host, port) = Self.hostAndPort(text), case .valid = HostName.check(host) else { return nil }
            self.init(host: host, port: port)
        }
    }

    /// `host[:port]` split in two: `nil` when a port is given but is not a number from 1 to 65535. A bracketed IPv6
    /// literal keeps its brackets; an unbracketed one (`::1`) is a host without a port.
    private static func hostAndPort(_ text: String) -> (host: String, port: Int?)? {
        let separator: String.Index?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return (text, nil) }
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (text, nil) }
            guard rest.first == ":" else { return nil }
            separator = rest.startIndex
        } else {
            let colons = text.indices.filter { text[$0] == ":" }
            guard colons.count == 1 else { return (text, nil) }
            separator = colons.first
        }
        guard let separator else { return (text, nil) }
        let digits = text[text.index(after: separator)...]
        guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = Int(digits), (1...65535).contains(port)
        else { return nil }
        return (String(text[..<separator]), port)
    }

    /// The default port of `scheme`: 443 for `https` and `wss`, 80 for `http` and `ws`, else `nil`.
    public static func defaultPort(forScheme scheme: String) -> Int? {
        // Nearly every scheme arrives in lowercase already: lowercasing makes a string.
        let isLowercase = !scheme.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        switch isLowercase ? scheme : scheme.lowercased() {
        case "https", "wss": return 443
        case "http", "ws": return 80
        default: return nil
        }
    }

    /// Whether traffic to this origin is encrypted (`https` or `wss`).
    public var isSecure: Bool { scheme == "https" || scheme == "wss" }

    /// Whether the host is this machine: `localhost` (and `*.localhost`), 127.0.0.0/8 or `[::1]`. Traffic to it
    /// never crosses a network, so plain `http` exposes nothing there.
    public var isLoopback: Bool { HostName.isLoopback(host) }

    /// `https://api.example.com`, with the port when it is not the scheme's default.
    public var description: String {
        var text = "\(scheme)://\(host)"
        if let port, port != Self.defaultPort(forScheme: scheme) { text += ":\(port)" }
        return text
    }
}

extension Origin: ExpressibleByStringLiteral {
    /// An origin written as text, as ``init(parsing:)`` reads it: `"api.example.com"` means
    /// `https://api.example.com:443`.
    ///
    /// A literal that is neither a host name nor an origin makes an origin that matches no request, so that
    /// credentials bound to it are never sent anywhere; the refusal's message shows the literal.
    public init(stringLiteral text: String) {
        self = Origin(parsing: text) ?? Origin(unmatchable: text)
    }

    private init(unmatchable text: String) {
        scheme = ""
        host = text
        port = nil
    }
}

extension Origin {
    /// Whether `request` goes to this origin: the same as `request.origin == self`, without building an origin
    /// for the common request, whose host is ASCII. Authentication loaders ask this on every request.
    package func isOrigin(of request: HTTPRequest) -> Bool {
        guard let requestHost = request.host, HTTPHeaders.namesMatch(request.scheme, scheme) else { return false }
        guard (request.port ?? Self.defaultPort(forScheme: scheme)) == port else { return false }
        // The common request names the host exactly as the origin holds it.
        if requestHost == host { return true }
        if requestHost.utf8.allSatisfy({ $0 < 0x80 }) {
            return HTTPHeaders.namesMatch(requestHost, host)
        }
        return Origin(scheme: scheme, host: requestHost, port: port) == self
    }
}

extension HTTPRequest {
    /// The origin this request goes to, or `nil` while it has no host (a relative request, before
    /// ``ApplyEnvironment`` fills one in).
    public var origin: Origin? {
        guard let host else { return nil }
        return Origin(wireFormScheme: scheme, host: host, port: port) ?? Origin(scheme: scheme, host: host, port: port)
    }
}

extension Origin {
    /// The origin of an `http` or `https` request whose host is already lowercase ASCII, as nearly every one is:
    /// the same as ``init(scheme:host:port:)`` without the copies it makes to lowercase and check the parts, for
    /// loaders that ask every request for its origin (``CircuitBreaker``). `nil` for any other request.
    init?(wireFormScheme scheme: String, host: String, port: Int?) {
        let defaultPort: Int
        switch scheme {
        case "https": defaultPort = 443
        case "http": defaultPort = 80
        default: return nil
        }
        guard HostName.isLowercaseASCIIName(host) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port ?? defaultPort
    }
}

public import Foundation

/// A cookie as a ``CookieJar`` stores it (RFC 6265bis §5.7): what the server set, for which hosts and paths, until
/// when.
///
/// ```swift
/// for cookie in cookies.jar.cookies where cookie.domain == "example.com" {
///     print(cookie.name, cookie.path, cookie.expiresDate.map(String.init(describing:)) ?? "session")
/// }
/// ```
///
/// A cookie's ``value`` is a secret: ``description`` shows its name and scope, never its value. It is `Codable` for a
/// ``CookieStore`` of your own.
public struct Cookie: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The `SameSite` attribute (RFC 6265bis §4.1.2.7), kept as the server set it. This client has no browsing
    /// context, so every request counts as same-site, and the attribute changes nothing about what is sent.
    @frozen
    public enum SameSite: String, Sendable, Hashable, Codable {
        case strict = "Strict"
        case lax = "Lax"
        case none = "None"
        /// Absent, or a value the RFC does not define.
        case `default` = "Default"
    }

    /// The cookie's name; may be empty (a `Set-Cookie` without `=`).
    public var name: String
    /// The cookie's value.
    public var value: String
    /// The host (``isHostOnly``) or domain it is sent to: lowercase, Punycode for an internationalised name.
    public var domain: String
    /// Whether it is sent to ``domain`` only (no `Domain` attribute), rather than to its subdomains too.
    public var isHostOnly: Bool
    /// The path it is sent for, and below.
    public var path: String
    /// When it expires; `nil` for a session cookie, which lasts until the jar is emptied (a reset).
    public var expiresDate: Date?
    /// Whether it is sent over `https` only.
    public var isSecure: Bool
    /// `HttpOnly`: hidden from scripts in a browser. An HTTP client sends such cookies like any other; the flag is
    /// kept for a reader.
    public var isHTTPOnly: Bool
    /// The `SameSite` attribute, kept for a reader.
    public var sameSite: SameSite
    /// When it was first stored; a replacement keeps the date of the cookie it replaces. Cookies with paths of the
    /// same length are sent in this order.
    public var creationDate: Date
    /// When it was last sent or stored: the least recently used go first when the jar is full.
    public var lastAccessDate: Date

    /// Makes a cookie from its parts; ``CookieJar`` makes them from `Set-Cookie` fields.
    public init(
        name: String, value: String, domain: String, isHostOnly: Bool = true, path: String = "/",
        expiresDate: Date? = nil, isSecure: Bool = false, isHTTPOnly: Bool = false, sameSite: SameSite = .default,
        creationDate: Date, lastAccessDate: Date? = nil
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.isHostOnly = isHostOnly
        self.path = path
        self.expiresDate = expiresDate
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSite = sameSite
        self.creationDate = creationDate
        self.lastAccessDate = lastAccessDate ?? creationDate
    }

    /// Whether it lasts beyond the jar's life: it has an expiry date.
    public var isPersistent: Bool { expiresDate != nil }

    /// The name and scope, without the value: `session (example.com/, Secure, host-only, session)`.
    public var description: String {
        var parts = [(isHostOnly ? "" : ".") + domain + path]
        if isSecure { parts.append("Secure") }
        if isHTTPOnly { parts.append("HttpOnly") }
        if sameSite != .default { parts.append("SameSite=\(sameSite.rawValue)") }
        parts.append(expiresDate.map { "expires \(HTTPDate.format($0))" } ?? "session")
        return "\(name) (\(parts.joined(separator: ", ")))"
    }

    /// Whether it is the same cookie as `other` for storage (RFC 6265bis §5.7): same name, domain, host-only flag
    /// and path. A new one replaces the old.
    func isSameCookie(as other: Cookie) -> Bool {
        name == other.name && domain == other.domain && isHostOnly == other.isHostOnly && path == other.path
    }
}

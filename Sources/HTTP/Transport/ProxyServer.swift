import Foundation

/// An HTTP proxy server: its host and port, and the credentials it asks for, if any.
///
/// Requests for `https` URLs go through a tunnel the proxy opens with `CONNECT`, inside which TLS runs end to end with
/// the origin; requests for `http` URLs are forwarded in absolute form (`GET http://origin/path`) by URLSession, and
/// tunnelled too by AsyncHTTPClient. The credentials go to the proxy only, as `Proxy-Authorization: Basic …`: on the
/// forwarded request or the `CONNECT`, never inside a tunnel and never to an origin reached directly.
///
/// ```swift
/// let proxy = try ProxyServer(parsing: "http://proxy.internal:3128")
/// let authenticated = ProxyServer(
///     host: "proxy.internal", port: 3128, credentials: ProxyCredentials(username: "build", password: secret))
/// ```
///
/// Its `description` and `dump` never show the password (`http://build:<redacted>@proxy.internal:3128`).
public struct ProxyServer: Sendable, Hashable {
    /// The proxy's host name or IP address (an IPv6 address in brackets), lowercased.
    public let host: String
    /// The proxy's port.
    public let port: Int
    /// The credentials the proxy asks for (HTTP Basic), or `nil`.
    public var credentials: ProxyCredentials?

    /// Creates a proxy server from its parts.
    ///
    /// - Parameters:
    ///   - host: The host name or IP address (an IPv6 address in brackets, such as `[::1]`).
    ///   - port: The port the proxy listens on.
    ///   - credentials: The credentials it asks for, if any.
    public init(host: String, port: Int, credentials: ProxyCredentials? = nil) {
        self.host = host.lowercased()
        self.port = port
        self.credentials = credentials
    }

    /// Reads a proxy written as `http://[user:password@]host[:port]`, or as `host[:port]` (which means `http`), as
    /// the `http_proxy` family of environment variables writes it. Without a port, the port is `80` — the default
    /// of the URL's scheme, as curl takes it (a proxy on 3128 or 8080 must say so). A user name and password are
    /// percent-decoded.
    ///
    /// - Parameter text: The proxy's URL.
    /// - Throws: ``ProxyServer/ParseError`` when the text is not an `http` proxy URL: another scheme (`https://`, a
    ///   TLS connection to the proxy, and `socks5://` are not supported by the transports), no host, a bad port,
    ///   a path. The error's description never quotes the text, which may hold a password.
    public init(parsing text: String) throws(ParseError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { throw ParseError(reason: "it is empty") }
        let withScheme: String
        if let range = trimmed.range(of: "://") {
            let scheme = trimmed[..<range.lowerBound].lowercased()
            guard scheme == "http" else {
                throw ParseError(
                    reason: "its scheme is \(scheme.isEmpty ? "empty" : Describe.printable(scheme.prefix(16))), and "
                        + "only http proxies are supported (https:// and socks proxies are not)")
            }
            withScheme = trimmed
        } else {
            withScheme = "http://" + trimmed
        }
        guard let components = URLComponents(string: withScheme) else {
            throw ParseError(reason: "it is not a URL")
        }
        guard let rawHost = components.host, !rawHost.isEmpty else { throw ParseError(reason: "it has no host") }
        let host = HostName.bracketingIPv6(rawHost)
        guard case .valid(let wireHost) = HostName.check(host) else {
            throw ParseError(reason: "its host is not a valid host name")
        }
        let path = components.percentEncodedPath
        guard path.isEmpty || path == "/", components.percentEncodedQuery == nil, components.fragment == nil else {
            throw ParseError(reason: "it has a path, a query or a fragment, which a proxy URL cannot have")
        }
        let port = components.port ?? 80
        guard (1...65_535).contains(port) else { throw ParseError(reason: "its port is not between 1 and 65535") }
        var credentials: ProxyCredentials?
        if let user = components.user {
            credentials = ProxyCredentials(username: user, password: components.password ?? "")
        }
        self.init(host: wireHost, port: port, credentials: credentials)
    }

    /// The `Proxy-Authorization` field value for ``credentials`` (`Basic` and the Base64 of `user:password`), or
    /// `nil` without credentials.
    public var proxyAuthorization: String? {
        credentials.map { "Basic " + Data("\($0.username):\($0.password)".utf8).base64EncodedString() }
    }

    /// Why a text is not a proxy URL. It never quotes the text, which may hold a password.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, as a phrase ("its scheme is socks5, and only http proxies are supported").
        public let reason: String

        public var description: String { "not a usable proxy URL: \(reason)" }
    }
}

extension ProxyServer: CustomStringConvertible, CustomReflectable {
    /// The proxy's URL with the password redacted: `http://user:<redacted>@host:port`.
    public var description: String {
        let user = credentials.map { "\(Describe.printable($0.username.prefix(64))):<redacted>@" } ?? ""
        return "http://\(user)\(host):\(port)"
    }

    /// The host, the port and the credentials with their password redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["host": host, "port": port, "credentials": credentials as Any],
            displayStyle: .struct)
    }
}

/// The user name and password a proxy asks for (HTTP Basic, sent as `Proxy-Authorization`).
///
/// Its `description`, `debugDescription` and `dump` show the user name and hide the password.
public struct ProxyCredentials: Sendable, Hashable {
    /// The user name.
    public var username: String
    /// The password.
    public var password: String

    /// Creates proxy credentials.
    ///
    /// - Parameters:
    ///   - username: The user name.
    ///   - password: The password.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

extension ProxyCredentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The user name, and the password redacted.
    public var description: String { "\(Describe.printable(username.prefix(64))):<redacted>" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// The user name, and the password redacted.
    public var customMirror: Mirror {
        Mirror(self, children: ["username": username, "password": "<redacted>"], displayStyle: .struct)
    }
}

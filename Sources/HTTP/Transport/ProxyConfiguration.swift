public import Foundation

/// Which proxy, if any, a transport sends each request through: none, a server you name, or the one the
/// environment's `http_proxy`, `https_proxy` and `no_proxy` name.
///
/// ```swift
/// // Every request through one proxy, except those to the bypassed hosts:
/// let proxy = ProxyServer(
///     host: "proxy.internal", port: 3128, credentials: ProxyCredentials(username: "build", password: secret))
/// let transport = AsyncHTTPClientLoader(proxy: .server(proxy, bypassing: ["localhost", "127.0.0.1", ".internal"]))
///
/// // As curl and most command-line tools do:
/// let fromEnvironment = AsyncHTTPClientLoader(proxy: .environment)
/// ```
///
/// `http` (and `ws`) URLs go through ``httpProxy`` (forwarded in absolute form, or tunnelled, as the transport does);
/// `https` (and `wss`) URLs go through a `CONNECT` tunnel opened by ``httpsProxy``, with TLS end to end to the origin. A host that a ``bypass`` entry matches is
/// reached directly. `route(for:)` is the decision, a pure function of the configuration and the URL.
///
/// The proxy's credentials go only to the proxy, as `Proxy-Authorization`; they are redacted in every description,
/// `dump` and log line, like any `Authorization` field.
public struct ProxyConfiguration: Sendable, Hashable {
    /// The proxy for `http` and `ws` URLs, or `nil` to reach them directly.
    public var httpProxy: ProxyServer?
    /// The proxy for `https` and `wss` URLs, through `CONNECT`, or `nil` to reach them directly.
    public var httpsProxy: ProxyServer?
    /// The hosts reached directly whatever the proxies: `no_proxy` entries (see ``init(httpProxy:httpsProxy:bypass:)``).
    public var bypass: [String] {
        didSet { rules = bypass.map { ProxyBypassRule.parse(entry: $0, dialect: .standard) } }
    }
    /// Where the configuration came from.
    public internal(set) var source: Source

    /// The parsed ``bypass`` entries.
    var rules: [ProxyBypassRule]
    /// Why the proxy for `http` resp. `https` URLs named by the environment cannot be used, when it cannot: such
    /// requests are refused rather than sent directly.
    var httpProblem: String?
    var httpsProblem: String?

    /// Where a configuration came from: ``explicit`` or ``environment``.
    ///
    /// A struct rather than an enum, so that more sources (the system's settings) can be added without breaking code
    /// that switches over these.
    public struct Source: Sendable, Hashable, CustomStringConvertible {
        enum Code: Sendable, Hashable {
            case explicit, environment
        }

        let code: Code

        /// Made in code.
        public static let explicit = Source(code: .explicit)
        /// Read from the process environment (``ProxyConfiguration/environment``) or from variables given to
        /// ``ProxyConfiguration/environment(_:)``.
        public static let environment = Source(code: .environment)

        /// `explicit` or `environment`.
        public var description: String {
            switch code {
            case .explicit: "explicit"
            case .environment: "environment"
            }
        }
    }

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - httpProxy: The proxy for `http` and `ws` URLs, or `nil` to reach them directly.
    ///   - httpsProxy: The proxy for `https` and `wss` URLs (through `CONNECT`), or `nil` to reach them directly.
    ///   - bypass: The hosts reached directly, as `no_proxy` writes them: `*` (every host); a host name, with or
    ///     without a leading `.` or `*.`, for it and every host below it (`example.com` matches `api.example.com`,
    ///     not `badexample.com`); an IP address, optionally with a prefix length (`10.0.0.0/8`, `::1`,
    ///     `[fd00::]/8`), for hosts written as addresses (no name is resolved); any of these with a port
    ///     (`example.com:8080`, `[::1]:8443`) for that port only. Case and a trailing `.` do not matter. Loopback
    ///     is not bypassed unless listed: name `localhost`, `127.0.0.1` and `::1` to reach local servers directly.
    public init(httpProxy: ProxyServer?, httpsProxy: ProxyServer?, bypass: [String] = []) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.bypass = bypass
        self.rules = bypass.map { ProxyBypassRule.parse(entry: $0, dialect: .standard) }
        self.source = .explicit
    }

    /// No proxy: every request goes directly to its origin.
    public static let none = ProxyConfiguration(httpProxy: nil, httpsProxy: nil)

    /// Every request through `server` (`https` ones through `CONNECT`), except those to the hosts `bypassing` names.
    ///
    /// - Parameters:
    ///   - server: The proxy.
    ///   - bypassing: The hosts reached directly (see ``init(httpProxy:httpsProxy:bypass:)``).
    public static func server(_ server: ProxyServer, bypassing: [String] = []) -> ProxyConfiguration {
        ProxyConfiguration(httpProxy: server, httpsProxy: server, bypass: bypassing)
    }

    /// The proxies the process environment names, read when this property is read (a loader reads it once, when
    /// it is made): see ``environment(_:)``.
    public static var environment: ProxyConfiguration { environment(ProcessInfo.processInfo.environment) }

    /// The proxies `variables` name, as curl and most command-line tools read them.
    ///
    /// - `http_proxy` (else `HTTP_PROXY`) for `http` URLs, `https_proxy` (else `HTTPS_PROXY`) for `https` URLs,
    ///   `all_proxy` (else `ALL_PROXY`) for either when its own is unset. A value is a proxy URL as
    ///   ``ProxyServer/init(parsing:)`` reads it (`http://user:password@host:port`, or `host:port`); an empty value
    ///   counts as unset.
    /// - `no_proxy` (else `NO_PROXY`): the ``bypass`` list, comma-separated.
    ///
    /// A value that is not a usable proxy URL (a `socks5://` or `https://` proxy, a typo) does not make requests go
    /// directly: requests it would cover are refused, with an error naming the variable (never its value, which may
    /// hold a password). `HTTP_PROXY` in capitals is read too, as the issue of a CGI environment (where a request's
    /// `Proxy` header arrives as `HTTP_PROXY`) does not arise in a client; libcurl does not read it.
    ///
    /// - Parameter variables: The environment, such as `ProcessInfo.processInfo.environment`.
    /// - Returns: The configuration, with ``source`` ``Source/environment``.
    public static func environment(_ variables: [String: String]) -> ProxyConfiguration {
        environment(variables, dialect: .standard)
    }

    /// The configuration `variables` give when read in `dialect`: `.curl` reads them as libcurl does (no `HTTP_PROXY`
    /// in capitals, no ports in `no_proxy`, `*` only as the whole list).
    static func environment(_ variables: [String: String], dialect: ProxyBypassRule.Dialect) -> ProxyConfiguration {
        func value(_ names: String...) -> (name: String, value: String)? {
            for name in names {
                if let value = variables[name], !value.trimmingCharacters(in: .whitespaces).isEmpty {
                    return (name, value)
                }
            }
            return nil
        }
        func server(_ found: (name: String, value: String)?) -> (ProxyServer?, String?) {
            guard let found else { return (nil, nil) }
            do {
                return (try ProxyServer(parsing: found.value), nil)
            } catch {
                return (nil, "the environment's \(found.name) is \(error)")
            }
        }
        let all = value("all_proxy", "ALL_PROXY")
        let http = dialect == .curl ? value("http_proxy") ?? all : value("http_proxy", "HTTP_PROXY") ?? all
        let https = value("https_proxy", "HTTPS_PROXY") ?? all
        let noProxy = value("no_proxy", "NO_PROXY")?.value ?? ""
        var configuration = ProxyConfiguration(httpProxy: nil, httpsProxy: nil)
        (configuration.httpProxy, configuration.httpProblem) = server(http)
        (configuration.httpsProxy, configuration.httpsProblem) = server(https)
        configuration.bypass = noProxy.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
        configuration.rules = ProxyBypassRule.parse(list: noProxy, dialect: dialect)
        configuration.source = .environment
        return configuration
    }

    /// Whether every request goes directly.
    public var isDirect: Bool { httpProxy == nil && httpsProxy == nil && httpProblem == nil && httpsProblem == nil }

    /// How a request for `url` is to be sent: directly, through a proxy, or not at all (the environment names a proxy
    /// for it that cannot be used).
    ///
    /// - Parameter url: The request's URL.
    /// - Returns: The route.
    public func route(for url: URL) -> ProxyRoute {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true), let scheme = components.scheme,
            let host = components.host
        else { return .direct }
        return route(scheme: scheme, host: host, port: components.port)
    }

    /// How `request` is to be sent: see `route(for:)`.
    ///
    /// - Parameter request: The request.
    /// - Returns: The route.
    public func route(for request: HTTPRequest) -> ProxyRoute {
        guard let host = request.host else { return .direct }
        return route(scheme: request.scheme, host: host, port: request.port)
    }

    /// The route for a request to `scheme://host:port` (a missing port is the scheme's default).
    func route(scheme: String, host: String, port: Int?) -> ProxyRoute {
        let scheme = scheme.lowercased()
        let server: ProxyServer?
        let problem: String?
        switch scheme {
        case "http", "ws": (server, problem) = (httpProxy, httpProblem)
        case "https", "wss": (server, problem) = (httpsProxy, httpsProblem)
        default: return .direct
        }
        guard server != nil || problem != nil else { return .direct }
        if !rules.isEmpty {
            var name = host.lowercased()
            if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
            while name.hasSuffix(".") { name = String(name.dropLast()) }
            let address = ProxyBypassRule.ipAddress(name)
            let port = port ?? (scheme == "http" || scheme == "ws" ? 80 : 443)
            if rules.contains(where: { $0.matches(host: name, address: address, port: port) }) { return .direct }
        }
        if let server { return .proxy(server) }
        return .refused(problem ?? "")
    }
}

/// How one request is sent: the decision of `route(for:)`. Frozen: a request goes directly, through a proxy, or not at
/// all; a new kind of proxy is a new ``ProxyServer``, not a new route.
@frozen
public enum ProxyRoute: Sendable, Hashable {
    /// Directly to the origin.
    case direct
    /// Through the proxy (`CONNECT` for `https`).
    case proxy(ProxyServer)
    /// Not at all: the configuration names a proxy for it that cannot be used; the reason says why, never quoting a
    /// password.
    case refused(String)
}

extension ProxyConfiguration: CustomStringConvertible {
    /// The proxies (passwords redacted), the bypass list and the source:
    /// `http: http://build:<redacted>@proxy:3128, https: …, bypass: localhost, .internal`.
    public var description: String {
        if isDirect { return "none" }
        func text(_ server: ProxyServer?, _ problem: String?) -> String {
            if let server { return server.description }
            return problem == nil ? "none" : "unusable"
        }
        var parts = ["http: \(text(httpProxy, httpProblem))", "https: \(text(httpsProxy, httpsProblem))"]
        if !bypass.isEmpty { parts.append("bypass: \(bypass.map { Describe.printable($0) }.joined(separator: ", "))") }
        if source == .environment { parts.append("from the environment") }
        return parts.joined(separator: ", ")
    }
}

extension ProxyConfiguration {
    /// The route to send `request` by, or the error to fail it with before anything is sent: a proxy the
    /// configuration cannot use (``ProxyRoute/refused(_:)``), or — when the configuration has a proxy — a
    /// `Proxy-Authorization` field the request sets itself on a route where it would reach the origin: directly (a
    /// bypassed host), or inside a `CONNECT` tunnel. Proxy credentials belong in
    /// the ``ProxyServer``, which sends them to the proxy only. For transports (`@_spi(Transport) import HTTP`).
    ///
    /// - Parameter request: The request about to be sent.
    /// - Returns: The route, or an ``HTTPError/Code/invalidRequest`` error.
    @_spi(Transport) public func checkedRoute(for request: HTTPRequest) -> Result<ProxyRoute, HTTPError> {
        let route = route(for: request)
        if case .refused(let reason) = route {
            return .failure(
                HTTPError(.invalidRequest, request: request, message: "\(reason); the request was not sent"))
        }
        if !isDirect, request.headers.contains("Proxy-Authorization") {
            let scheme = request.scheme.lowercased()
            let isForwarded: Bool =
                if case .proxy = route { scheme == "http" || scheme == "ws" } else { false }
            if !isForwarded {
                return .failure(
                    HTTPError(
                        .invalidRequest, request: request,
                        message: "the request sets its own Proxy-Authorization field, which would reach the origin "
                            + "(directly or inside the proxy's CONNECT tunnel); proxy credentials belong in the "
                            + "ProxyServer of the transport's ProxyConfiguration, which sends them to the proxy only; "
                            + "the request was not sent"))
            }
        }
        return .success(route)
    }
}

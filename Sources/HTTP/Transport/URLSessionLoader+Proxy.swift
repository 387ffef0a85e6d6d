import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// How ``URLSessionLoader`` honours a ``ProxyConfiguration``.
///
/// On Apple platforms the configuration becomes the session's `connectionProxyDictionary` (the HTTP and HTTPS proxy,
/// and the bypass list as its exceptions). Two things URLSession cannot do there are refused before sending: proxy
/// credentials (URLSession asks for them through an authentication challenge, which the loader declines) and bypass
/// entries with a port (its exceptions list has no ports).
///
/// On Linux, swift-corelibs-foundation ignores `connectionProxyDictionary`; libcurl underneath reads `http_proxy`,
/// `https_proxy`, `all_proxy` and `no_proxy` from the process environment at each transfer. So a request is sent only
/// when the configuration's route for it is the one libcurl will take with the environment as it is at that moment;
/// otherwise it fails with ``HTTPError/Code/invalidRequest`` before anything is sent, naming the reason — never
/// sent directly when a proxy was asked for, nor through a proxy when none was.
enum URLSessionProxy {
    /// The environment variables libcurl reads for proxies.
    static let variableNames = [
        "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
    ]

    /// The `connectionProxyDictionary` for `configuration` (Apple platforms' keys, as strings, which iOS accepts too).
    static func dictionary(for configuration: ProxyConfiguration) -> [AnyHashable: Any] {
        var dictionary: [AnyHashable: Any] = ["HTTPEnable": false, "HTTPSEnable": false]
        if let http = configuration.httpProxy {
            dictionary["HTTPEnable"] = true
            dictionary["HTTPProxy"] = http.host
            dictionary["HTTPPort"] = http.port
        }
        if let https = configuration.httpsProxy {
            dictionary["HTTPSEnable"] = true
            dictionary["HTTPSProxy"] = https.host
            dictionary["HTTPSPort"] = https.port
        }
        let exceptions = configuration.rules.flatMap { rule -> [String] in
            guard rule.port == nil else { return [] }
            switch rule.pattern {
            case .everything: return ["*"]
            case .nothing: return []
            case .domain(let domain): return [domain, "*.\(domain)"]
            case .network(let bytes, let prefixLength):
                let text = address(bytes)
                return [prefixLength == bytes.count * 8 ? text : "\(text)/\(prefixLength)"]
            }
        }
        if !exceptions.isEmpty { dictionary["ExceptionsList"] = exceptions }
        return dictionary
    }

    /// The error to fail `request` with, unsent, when URLSession on this platform would not send it the way
    /// `configuration` routes it; `nil` to send it.
    static func refusal(of request: HTTPRequest, with configuration: ProxyConfiguration) -> HTTPError? {
        let route: ProxyRoute
        switch configuration.checkedRoute(for: request) {
        case .success(let checked): route = checked
        case .failure(let error): return error
        }
        #if canImport(FoundationNetworking)
        return curlRefusal(of: request, routed: route, environment: currentEnvironment())
        #else
        return appleRefusal(of: request, routed: route, with: configuration)
        #endif
    }

    /// On Linux: the error when libcurl, reading `environment`, would not send `request` by `route`.
    static func curlRefusal(
        of request: HTTPRequest, routed route: ProxyRoute, environment: [String: String]
    )
        -> HTTPError?
    {
        let curlRoute = ProxyConfiguration.environment(environment, dialect: .curl).route(for: request)
        if curlRoute == route { return nil }
        let what =
            switch route {
            case .direct: "directly"
            case .proxy(let server): "through the proxy \(server)"
            case .refused: "nowhere"
            }
        let curl =
            switch curlRoute {
            case .direct: "directly"
            case .proxy(let server): "through the proxy \(server)"
            case .refused: "through a proxy this package cannot read"
            }
        return HTTPError(
            .invalidRequest, request: request,
            message: "the proxy configuration sends this request \(what), but URLSession on Linux cannot be told which "
                + "proxy to use: libcurl underneath takes its proxy from the process environment (http_proxy in lower "
                + "case only, https_proxy, all_proxy, no_proxy without ports), which would send it \(curl); it was not "
                + "sent. Use AsyncHTTPClientLoader, which honours any ProxyConfiguration, or set the environment and "
                + "use ProxyConfiguration.environment")
    }

    /// On Apple platforms: the error when the session's `connectionProxyDictionary` cannot send `request` by `route`.
    static func appleRefusal(
        of request: HTTPRequest, routed route: ProxyRoute, with configuration: ProxyConfiguration
    )
        -> HTTPError?
    {
        guard case .proxy(let server) = route else {
            if configuration.rules.contains(where: { $0.port != nil }),
                configuration.routeIgnoringPortRules(for: request) != route
            {
                return HTTPError(
                    .invalidRequest, request: request,
                    message: "the proxy configuration bypasses the proxy for this request's port, but URLSession's "
                        + "proxy exceptions have no ports, so it would go through the proxy; it was not sent")
            }
            return nil
        }
        guard server.credentials == nil else {
            return HTTPError(
                .invalidRequest, request: request,
                message: "the proxy \(server) needs credentials, which URLSession asks for through an authentication "
                    + "challenge that URLSessionLoader declines; it was not sent. Use AsyncHTTPClientLoader, which "
                    + "sends Proxy-Authorization to the proxy")
        }
        return nil
    }

    /// The proxy variables of the process environment, as they are now.
    static func currentEnvironment() -> [String: String] {
        var variables: [String: String] = [:]
        for name in variableNames {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return variables
    }

    private static func address(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var groups: [String] = []
        for index in stride(from: 0, to: bytes.count, by: 2) {
            groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16))
        }
        return groups.joined(separator: ":")
    }
}

extension ProxyConfiguration {
    /// The route for `request` with the bypass entries that name a port left out.
    func routeIgnoringPortRules(for request: HTTPRequest) -> ProxyRoute {
        var copy = self
        copy.rules = rules.filter { $0.port == nil }
        return copy.route(for: request)
    }
}

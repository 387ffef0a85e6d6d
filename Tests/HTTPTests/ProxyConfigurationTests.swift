import Foundation
import HTTPTestSupport
import Testing

@testable @_spi(Transport) import HTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which proxy each request goes through: the proxy URL parser, the environment's variables, the bypass list, and
/// the refusals of a transport that cannot take a route.
@Suite(.noHang) struct ProxyConfigurationTests {
    private static let proxy = ProxyServer(host: "proxy.internal", port: 3128)

    private func route(_ configuration: ProxyConfiguration, _ url: String) -> ProxyRoute {
        configuration.route(for: URL(string: url)!)
    }

    // MARK: - Proxy URLs

    @Test func aProxyURLIsReadWithItsCredentialsAndPort() throws {
        let server = try ProxyServer(parsing: "http://build%40ci:p%3Ass@Proxy.Internal:3128/")
        #expect(server.host == "proxy.internal")
        #expect(server.port == 3128)
        #expect(server.credentials == ProxyCredentials(username: "build@ci", password: "p:ss"))
        #expect(server.proxyAuthorization == "Basic " + Data("build@ci:p:ss".utf8).base64EncodedString())
        #expect(try ProxyServer(parsing: "proxy.internal:8080") == ProxyServer(host: "proxy.internal", port: 8080))
        #expect(try ProxyServer(parsing: " proxy.internal ") == ProxyServer(host: "proxy.internal", port: 80))
        #expect(try ProxyServer(parsing: "http://[::1]:3128").host == "[::1]")
    }

    @Test(arguments: [
        "", "socks5://proxy:1080", "https://proxy:443", "http://", "http://proxy:0", "http://proxy:99999",
        "http://proxy:3128/path", "http://proxy:3128?q=1", "http://pro xy:3128", "ftp://proxy",
    ])
    func aTextThatIsNotAnHTTPProxyURLIsRefusedWithoutQuotingIt(_ text: String) {
        #expect(throws: ProxyServer.ParseError.self) { try ProxyServer(parsing: text) }
    }

    @Test func aParseErrorNeverQuotesThePassword() {
        do {
            _ = try ProxyServer(parsing: "socks5://user:S3CR3TVALUE@proxy:1080")
            Issue.record("parsed a socks5 proxy")
        } catch {
            #expect(!"\(error)".contains("S3CR3TVALUE"))
            #expect("\(error)".contains("socks5"))
        }
    }

    // MARK: - The environment

    @Test func theEnvironmentIsReadLowerCaseFirstThenUpperCaseThenAllProxy() {
        let configuration = ProxyConfiguration.environment([
            "http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2", "HTTPS_PROXY": "upper-tls:3",
            "ALL_PROXY": "http://all:4", "no_proxy": "skip.example, .internal",
        ])
        #expect(configuration.httpProxy == ProxyServer(host: "lower", port: 1))
        #expect(configuration.httpsProxy == ProxyServer(host: "upper-tls", port: 3))
        #expect(configuration.bypass == ["skip.example", ".internal"])
        #expect(configuration.source == .environment)
        #expect(route(configuration, "http://skip.example/x") == .direct)
        #expect(route(configuration, "https://a.internal/") == .direct)
        #expect(route(configuration, "https://example.com/") == .proxy(ProxyServer(host: "upper-tls", port: 3)))

        let onlyAll = ProxyConfiguration.environment(["all_proxy": "all:4", "http_proxy": " "])
        #expect(onlyAll.httpProxy == ProxyServer(host: "all", port: 4))
        #expect(onlyAll.httpsProxy == ProxyServer(host: "all", port: 4))
        #expect(ProxyConfiguration.environment([:]).isDirect)
    }

    @Test func anUnusableProxyVariableRefusesTheRequestsItCoversNamingTheVariableNotItsValue() {
        let configuration = ProxyConfiguration.environment([
            "https_proxy": "socks5://user:S3CR3TVALUE@proxy:1080", "no_proxy": "direct.example",
        ])
        guard case .refused(let reason) = route(configuration, "https://api.example.com/") else {
            Issue.record("an unusable https_proxy did not refuse the request")
            return
        }
        #expect(reason.contains("https_proxy"))
        #expect(!reason.contains("S3CR3TVALUE"))
        #expect(route(configuration, "http://api.example.com/") == .direct)
        #expect(route(configuration, "https://direct.example/") == .direct)
        #expect(!configuration.description.contains("S3CR3TVALUE"))
    }

    // MARK: - The bypass list

    @Test(arguments: [
        // (entry, url, bypassed)
        ("example.com", "https://example.com/", true),
        ("example.com", "https://api.example.com/", true),
        ("example.com", "https://badexample.com/", false),
        (".example.com", "https://example.com/", true),
        (".example.com", "https://a.b.example.com/", true),
        ("*.example.com", "https://a.example.com/", true),
        ("EXAMPLE.com.", "https://Api.Example.COM./", true),
        ("*", "https://anything.test/", true),
        ("example.com:8443", "https://example.com:8443/", true),
        ("example.com:8443", "https://example.com/", false),
        ("example.com:443", "https://example.com/", true),
        ("127.0.0.1", "http://127.0.0.1:8080/", true),
        ("127.0.0.1:8080", "http://127.0.0.1:8081/", false),
        ("10.0.0.0/8", "http://10.200.3.4/", true),
        ("10.0.0.0/8", "http://11.0.0.1/", false),
        ("10.0.0.0/8", "http://10.example/", false),
        ("::1", "http://[::1]:8080/", true),
        ("[::1]:8080", "http://[::1]:8080/", true),
        ("[::1]:8080", "http://[::1]:9090/", false),
        ("fd00::/8", "http://[fd12::1]/", true),
        ("[fd00::]/8", "http://[fe80::1]/", false),
        ("localhost", "http://127.0.0.1/", false),
        ("example.com:notaport", "https://example.com/", false),
        ("10.0.0.0/99", "http://10.0.0.1/", false),
    ])
    func aBypassEntryMatchesTheHostsItNames(_ entry: String, _ url: String, _ bypassed: Bool) {
        let configuration = ProxyConfiguration.server(Self.proxy, bypassing: [entry])
        #expect(route(configuration, url) == (bypassed ? .direct : .proxy(Self.proxy)), "\(entry) vs \(url)")
    }

    @Test func schemesOtherThanHTTPAreNeverProxied() {
        let configuration = ProxyConfiguration.server(Self.proxy)
        #expect(route(configuration, "ws://example.com/") == .proxy(Self.proxy))
        #expect(route(configuration, "wss://example.com/") == .proxy(Self.proxy))
        #expect(route(configuration, "ftp://example.com/") == .direct)
        #expect(route(configuration, "file:///tmp/x") == .direct)
        #expect(ProxyConfiguration.none.route(for: URL(string: "https://example.com")!) == .direct)
        let httpOnly = ProxyConfiguration(httpProxy: Self.proxy, httpsProxy: nil)
        #expect(route(httpOnly, "https://example.com/") == .direct)
        #expect(route(httpOnly, "http://example.com/") == .proxy(Self.proxy))
    }

    /// Random host names and bypass lists, against a model written independently: a name entry matches itself and
    /// the names below it, an IPv4 network its addresses, a port its port.
    @Test func randomHostsAndBypassListsRouteAsTheModelSays() {
        let seed = SplitMix64.seed()
        print("ProxyConfigurationTests.randomHostsAndBypassListsRouteAsTheModelSays seed: \(seed)")
        var random = SplitMix64(seed: seed)
        let labels = ["a", "b", "api", "example", "com", "internal", "x1", "co"]
        func name() -> String {
            (0..<Int.random(in: 1...3, using: &random)).map { _ in labels.randomElement(using: &random)! }
                .joined(separator: ".")
        }
        func address() -> [UInt8] { (0..<4).map { _ in UInt8.random(in: 9...12, using: &random) } }
        for iteration in 0..<2_000 {
            enum Entry {
                case name(String, dots: String, port: Int?)
                case network([UInt8], prefix: Int, port: Int?)
            }
            let entries: [Entry] = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                let port: Int? = Bool.random(using: &random) ? nil : [80, 443, 8080].randomElement(using: &random)
                if Bool.random(using: &random) {
                    return .name(name(), dots: ["", ".", "*."].randomElement(using: &random)!, port: port)
                }
                return .network(address(), prefix: Int.random(in: 0...32, using: &random), port: port)
            }
            let texts = entries.map { entry -> String in
                switch entry {
                case .name(let name, let dots, let port):
                    return dots + (Bool.random(using: &random) ? name.uppercased() : name)
                        + (port.map { ":\($0)" } ?? "")
                case .network(let bytes, let prefix, let port):
                    return bytes.map(String.init).joined(separator: ".") + "/\(prefix)" + (port.map { ":\($0)" } ?? "")
                }
            }
            let isHostAddress = Bool.random(using: &random)
            let hostBytes = address()
            let host = isHostAddress ? hostBytes.map(String.init).joined(separator: ".") : name()
            let scheme = Bool.random(using: &random) ? "http" : "https"
            let port = [80, 443, 8080].randomElement(using: &random)!
            let expected = entries.contains { entry in
                switch entry {
                case .name(let name, _, let entryPort):
                    guard !isHostAddress, entryPort == nil || entryPort == port else { return false }
                    return host == name || host.hasSuffix("." + name)
                case .network(let bytes, let prefix, let entryPort):
                    guard isHostAddress, entryPort == nil || entryPort == port else { return false }
                    let value = { (b: [UInt8]) in b.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
                    let mask: UInt64 = prefix == 0 ? 0 : (0xFFFF_FFFF << (32 - UInt64(prefix))) & 0xFFFF_FFFF
                    return value(bytes) & mask == value(hostBytes) & mask
                }
            }
            let configuration = ProxyConfiguration.server(Self.proxy, bypassing: texts)
            let url = "\(scheme)://\(host):\(port)/"
            let got = route(configuration, url)
            #expect(
                got == (expected ? .direct : .proxy(Self.proxy)),
                "iteration \(iteration), seed \(seed): \(url) with bypass \(texts) went \(got)")
        }
    }

    /// Any text in any proxy variable never crashes, and never shows up — password and all — in a route's reason, the
    /// configuration's description or the error a transport gives.
    @Test func randomEnvironmentsNeverCrashAndNeverShowTheirValues() {
        let seed = SplitMix64.seed()
        print("ProxyConfigurationTests.randomEnvironmentsNeverCrashAndNeverShowTheirValues seed: \(seed)")
        var random = SplitMix64(seed: seed)
        let pieces = [
            "http://", "socks5://", "https://", "user:SECRETPW@", "user@", "proxy", "[::1]", ":", "3128", "/", "%",
            "*", ",", ".", " ", "\u{0}", "é", "?q", "#f", "\r\n", "10.0.0.0/8", "::",
        ]
        for iteration in 0..<2_000 {
            var variables: [String: String] = [:]
            for name in URLSessionProxy.variableNames where Bool.random(using: &random) {
                // The password goes where a proxy URL keeps one; a bypass list holds no secrets, and shows.
                let allowed = name.lowercased() == "no_proxy" ? pieces.filter { !$0.contains("SECRETPW") } : pieces
                variables[name] = (0..<Int.random(in: 0...6, using: &random))
                    .map { _ in allowed.randomElement(using: &random)! }.joined()
            }
            let configuration = ProxyConfiguration.environment(variables)
            let description = configuration.description
            var dumped = ""
            dump(configuration, to: &dumped)
            for url in ["http://example.com/", "https://10.1.2.3:8443/", "https://[::1]/", "wss://proxy/"] {
                let request = HTTPRequest(method: .get, url: URL(string: url)!)
                let route = configuration.route(for: request)
                var texts = [description, dumped, "\(route)"]
                if case .failure(let error) = configuration.checkedRoute(for: request) {
                    texts.append("\(error)")
                    texts.append(String(reflecting: error))
                }
                for text in texts {
                    #expect(!text.contains("SECRETPW"), "iteration \(iteration), seed \(seed): \(variables) → \(text)")
                }
            }
        }
    }

    // MARK: - Secrets

    @Test func theProxyPasswordIsHiddenInEveryView() {
        let secret = "pw-\(UUID().uuidString)"
        let server = ProxyServer(
            host: "proxy.internal", port: 3128, credentials: ProxyCredentials(username: "build", password: secret))
        let configuration = ProxyConfiguration.server(server, bypassing: ["localhost"])
        for value in [server, server.credentials!, configuration, ProxyRoute.proxy(server)] as [Any] {
            var dumped = ""
            dump(value, to: &dumped)
            for (view, text) in [
                ("description", String(describing: value)), ("reflecting", String(reflecting: value)),
                ("dump", dumped),
            ] {
                #expect(!text.contains(secret), "\(view) shows the password: \(text)")
            }
        }
        #expect(server.description == "http://build:<redacted>@proxy.internal:3128")
        #expect(configuration.description.contains("bypass: localhost"))
    }

    @Test func aRequestThatSetsItsOwnProxyAuthorizationIsRefusedWhereItWouldReachTheOrigin() throws {
        let configuration = ProxyConfiguration.server(Self.proxy, bypassing: ["direct.example"])
        func checked(_ url: String) -> Result<ProxyRoute, HTTPError> {
            var request = HTTPRequest(method: .get, url: URL(string: url)!)
            request.headers["Proxy-Authorization"] = "Basic S3CR3TVALUE"
            return configuration.checkedRoute(for: request)
        }
        #expect(try checked("http://example.com/").get() == .proxy(Self.proxy))
        for url in ["https://example.com/", "http://direct.example/", "https://direct.example/"] {
            guard case .failure(let error) = checked(url) else {
                Issue.record("\(url): a hand-set Proxy-Authorization was let through")
                continue
            }
            #expect(error.code == .invalidRequest)
            #expect("\(error)".contains("Proxy-Authorization"))
            #expect(!"\(error)".contains("S3CR3TVALUE"))
        }
    }

    /// Proxies.md's sample, routing as the article says.
    @Test func theArticlesSampleRoutesAsItSays() {
        let secret = "pw-\(UUID().uuidString)"
        let proxy = ProxyServer(
            host: "proxy.internal", port: 3128, credentials: ProxyCredentials(username: "build", password: secret))
        let configuration = ProxyConfiguration.server(proxy, bypassing: ["localhost", "127.0.0.1", ".internal"])

        #expect(configuration.route(for: URL(string: "https://api.example.com/v1")!) == .proxy(proxy))
        #expect(configuration.route(for: URL(string: "http://build.internal/status")!) == .direct)
        #expect("\(proxy)" == "http://build:<redacted>@proxy.internal:3128")
    }

    // MARK: - URLSession

    @Test func onLinuxARouteLibcurlWouldNotTakeIsRefusedNamingTheAlternative() throws {
        let request = HTTPRequest(method: .get, url: URL(string: "http://example.com/x")!)
        let proxied = ProxyRoute.proxy(ProxyServer(host: "proxy", port: 3128))
        // No variables: libcurl goes directly, so an explicit proxy cannot be honoured.
        let refusal = try #require(URLSessionProxy.curlRefusal(of: request, routed: proxied, environment: [:]))
        #expect(refusal.code == .invalidRequest)
        #expect("\(refusal)".contains("AsyncHTTPClientLoader"))
        #expect("\(refusal)".contains("directly"))
        // The same proxy in http_proxy: libcurl takes the route.
        #expect(
            URLSessionProxy.curlRefusal(of: request, routed: proxied, environment: ["http_proxy": "proxy:3128"]) == nil)
        // HTTP_PROXY in capitals: libcurl ignores it, so the request would go directly.
        #expect(
            URLSessionProxy.curlRefusal(of: request, routed: proxied, environment: ["HTTP_PROXY": "proxy:3128"]) != nil)
        // No proxy asked for, but the environment names one: it is not sent through it either.
        #expect(
            URLSessionProxy.curlRefusal(of: request, routed: .direct, environment: ["http_proxy": "proxy:3128"]) != nil)
        #expect(
            URLSessionProxy.curlRefusal(
                of: request, routed: .direct, environment: ["http_proxy": "proxy:3128", "no_proxy": "example.com"])
                == nil)
        // A bypass entry with a port: libcurl has no ports in no_proxy.
        #expect(
            URLSessionProxy.curlRefusal(
                of: request, routed: .direct, environment: ["http_proxy": "proxy:3128", "no_proxy": "example.com:80"])
                != nil)
    }

    @Test func onAppleARouteTheProxyDictionaryCannotTakeIsRefused() throws {
        let request = HTTPRequest(method: .get, url: URL(string: "https://example.com/x")!)
        let authenticated = ProxyServer(
            host: "proxy", port: 3128, credentials: ProxyCredentials(username: "u", password: "S3CR3TVALUE"))
        let withCredentials = ProxyConfiguration.server(authenticated)
        let refusal = try #require(
            URLSessionProxy.appleRefusal(of: request, routed: .proxy(authenticated), with: withCredentials))
        #expect("\(refusal)".contains("AsyncHTTPClientLoader"))
        #expect(!"\(refusal)".contains("S3CR3TVALUE"))
        let byPort = ProxyConfiguration.server(Self.proxy, bypassing: ["example.com:443"])
        #expect(URLSessionProxy.appleRefusal(of: request, routed: .direct, with: byPort) != nil)
        let byName = ProxyConfiguration.server(Self.proxy, bypassing: ["example.com"])
        #expect(URLSessionProxy.appleRefusal(of: request, routed: .direct, with: byName) == nil)
        #expect(URLSessionProxy.appleRefusal(of: request, routed: .proxy(Self.proxy), with: byName) == nil)
    }

    @Test func theProxyDictionaryNamesBothProxiesAndTheExceptions() {
        let configuration = ProxyConfiguration(
            httpProxy: ProxyServer(host: "p1", port: 1), httpsProxy: ProxyServer(host: "p2", port: 2),
            bypass: [".internal", "10.0.0.0/8", "::1", "*", "skip:8080"])
        let dictionary = URLSessionProxy.dictionary(for: configuration)
        #expect(dictionary["HTTPEnable"] as? Bool == true)
        #expect(dictionary["HTTPProxy"] as? String == "p1")
        #expect(dictionary["HTTPPort"] as? Int == 1)
        #expect(dictionary["HTTPSEnable"] as? Bool == true)
        #expect(dictionary["HTTPSProxy"] as? String == "p2")
        #expect(dictionary["HTTPSPort"] as? Int == 2)
        #expect(
            dictionary["ExceptionsList"] as? [String] == [
                "internal", "*.internal", "10.0.0.0/8", "0:0:0:0:0:0:0:1", "*",
            ])
        let none = URLSessionProxy.dictionary(for: .none)
        #expect(none["HTTPEnable"] as? Bool == false)
        #expect(none["HTTPSEnable"] as? Bool == false)
    }

    /// Through the public API: a URLSessionLoader with an explicit proxy on Linux fails before sending, saying why.
    @Test func urlSessionOnLinuxRefusesAnExplicitProxyBeforeSending() async throws {
        #if canImport(FoundationNetworking)
        // (Only where the environment sends this request directly, as it does in the test command.)
        let variables = URLSessionProxy.currentEnvironment()
        try #require(ProxyConfiguration.environment(variables, dialect: .curl).isDirect, "the environment has a proxy")
        let loader = URLSessionLoader(proxy: .server(ProxyServer(host: "127.0.0.1", port: 9)))
        let request = HTTPRequest(method: .get, url: URL(string: "http://127.0.0.1:9/never")!)
        let result = await loader.load(request)
        let error = try #require(result.error)
        #expect(error.code == .invalidRequest)
        #expect("\(error)".contains("URLSession on Linux"))
        #expect("\(error)".contains("AsyncHTTPClientLoader"))
        // .none and .environment agree with libcurl here: they are sent (and refused by the closed port).
        for proxy in [ProxyConfiguration.none, .environment] {
            let direct = await URLSessionLoader(proxy: proxy).load(request)
            #expect(direct.error?.code == .cannotConnect, "\(proxy): \(String(describing: direct.error))")
        }
        #endif
    }
}

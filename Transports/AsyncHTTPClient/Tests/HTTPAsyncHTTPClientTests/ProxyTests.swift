import AsyncHTTPClient
import Foundation
import HTTP
import HTTPAsyncHTTPClient
import NIOSSL
import Testing

/// The proxies `scripts/servers.sh` starts (tinyproxy): one open, one asking for Basic credentials. Each logs every
/// request it forwards or tunnels, which is how these tests see that a request went through it.
enum ProxyServers {
    static let environment = ProcessInfo.processInfo.environment
    static let open: URL? = environment["PROXY_URL"].flatMap(URL.init(string:))
    static let openLog: URL? = environment["PROXY_LOG"].map { URL(fileURLWithPath: $0) }
    static let authenticating: URL? = environment["PROXY_AUTH_URL"].flatMap(URL.init(string:))
    static let authenticatingLog: URL? = environment["PROXY_AUTH_LOG"].map { URL(fileURLWithPath: $0) }
    static let credentials: ProxyCredentials? = environment["PROXY_AUTH_PASSWORD"].map {
        ProxyCredentials(username: environment["PROXY_AUTH_USERNAME"] ?? "", password: $0)
    }

    static var arePresent: Bool {
        open != nil && openLog != nil && authenticating != nil && authenticatingLog != nil && credentials != nil
    }

    static func server(_ url: URL, credentials: ProxyCredentials? = nil) -> ProxyServer {
        ProxyServer(host: url.host!, port: url.port!, credentials: credentials)
    }

    /// The proxy's log as it is now.
    static func log(_ file: URL) -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }

    /// How many `CONNECT` lines to `authority` the log has.
    static func connects(to authority: String, in file: URL) -> Int {
        log(file).components(separatedBy: "\n").filter { $0.contains("CONNECT \(authority) HTTP/") }.count
    }
}

@Suite(.timeLimit(.minutes(3))) struct ProxyPresenceTests {
    @Test func theProxiesArePresentWhenRequired() {
        guard TestServers.areRequired else { return }
        #expect(ProxyServers.arePresent, "HTTP_REQUIRE_SERVERS=1 but PROXY_URL or another PROXY_* variable is not set")
    }
}

/// Requests through a real proxy over AsyncHTTPClient, which tunnels every request — `http` too — with `CONNECT`: Basic
/// credentials to the proxy only (never inside the tunnel), bypassed hosts reached directly, and the environment's
/// variables. The proxy's log names each tunnel's host and port (`CONNECT 127.0.0.1:PORT`); tests that must tell their
/// tunnels from other tests' use `localhost`, which no other test sends through a proxy.
@Suite(
    .timeLimit(.minutes(3)),
    .enabled(
        if: ProxyServers.arePresent && TestServers.haveHTTP && TestServers.haveTLS,
        "needs PROXY_URL, PROXY_AUTH_URL and the other local servers: run through scripts/test.sh"))
struct ProxyTests {
    let httpbin = TestServers.httpbin!
    let tlsTrusted = TestServers.tlsTrusted!
    let open = ProxyServers.server(ProxyServers.open!)
    let openLog = ProxyServers.openLog!
    let authenticatingLog = ProxyServers.authenticatingLog!
    let credentials = ProxyServers.credentials!

    var authenticated: ProxyServer { ProxyServers.server(ProxyServers.authenticating!, credentials: credentials) }

    /// A loader whose client trusts the test CA (for the TLS server), with `proxy`.
    func loader(_ proxy: ProxyConfiguration) -> AsyncHTTPClientLoader {
        var configuration = AsyncHTTPClientLoader.defaultConfiguration
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(TestServers.tlsCAFile!.path)]
        configuration.tlsConfiguration = tls
        return AsyncHTTPClientLoader(configuration: configuration, proxy: proxy)
    }

    /// A request for httpbin's `/anything/<tag>`, which echoes the header fields it received.
    func echo(_ tag: String, host: String = "127.0.0.1") -> HTTPRequest {
        HTTPRequest(method: .get, url: URL(string: "http://\(host):\(httpbin.port!)/anything/\(tag)")!)
    }

    /// The header fields httpbin says it received.
    func receivedHeaders(_ response: HTTPResponse) throws -> [String: String] {
        struct Echo: Decodable { var headers: [String: String] }
        return try JSONDecoder().decode(Echo.self, from: response.body).headers
    }

    var tlsAuthority: String { "127.0.0.1:\(tlsTrusted.port!)" }
    var httpbinAuthority: String { "127.0.0.1:\(httpbin.port!)" }
    var localhostHTTPBinAuthority: String { "localhost:\(httpbin.port!)" }
    var localhostTLSAuthority: String { "localhost:\(tlsTrusted.port!)" }

    @Test func anHTTPRequestGoesThroughTheProxy() async throws {
        let before = ProxyServers.connects(to: localhostHTTPBinAuthority, in: openLog)
        try await withLoader(loader(.server(open))) { loader async throws in
            let response = try await loader.load(echo("proxy", host: "localhost")).get()
            #expect(response.status == .ok)
            #expect(try receivedHeaders(response)["Proxy-Authorization"] == nil)
        }
        let after = ProxyServers.connects(to: localhostHTTPBinAuthority, in: openLog)
        #expect(after == before + 1, "proxy log:\n\(ProxyServers.log(openLog))")
    }

    @Test func anHTTPSRequestGoesThroughACONNECTTunnelWithTLSToTheOrigin() async throws {
        let before = ProxyServers.connects(to: tlsAuthority, in: openLog)
        try await withLoader(loader(.server(open))) { loader async throws in
            let response = try await loader.load(HTTPRequest(url: tlsTrusted)).get()
            #expect(response.status == .ok)
            #expect(String(decoding: response.body, as: UTF8.self).contains("\"trusted\""))
        }
        let after = ProxyServers.connects(to: tlsAuthority, in: openLog)
        #expect(after > before, "no CONNECT \(tlsAuthority) in the proxy's log:\n\(ProxyServers.log(openLog))")
    }

    @Test func anAuthenticatingProxyTakesTheCredentialsAndTheOriginNeverSeesThem() async throws {
        let tag = "auth-\(UUID().uuidString)"
        let before = ProxyServers.connects(to: tlsAuthority, in: authenticatingLog)
        let httpBefore = ProxyServers.connects(to: httpbinAuthority, in: authenticatingLog)
        try await withLoader(loader(.server(authenticated))) { loader async throws in
            let response = try await loader.load(echo(tag)).get()
            #expect(response.status == .ok, "\(response)")
            let headers = try receivedHeaders(response)
            #expect(headers["Proxy-Authorization"] == nil, "the origin received \(headers)")
            let tunnelled = try await loader.load(HTTPRequest(url: tlsTrusted)).get()
            #expect(tunnelled.status == .ok)
        }
        #expect(ProxyServers.connects(to: httpbinAuthority, in: authenticatingLog) > httpBefore)
        #expect(ProxyServers.connects(to: tlsAuthority, in: authenticatingLog) > before)
    }

    /// Without credentials tinyproxy answers the `CONNECT` with 407, and the load fails with `cannotAuthenticate` naming
    /// the tunnel. With wrong ones tinyproxy 1.11.1 answers 401 instead (not what RFC 9110 says a proxy sends), which
    /// AsyncHTTPClient reports as an invalid proxy response: the load still fails, and nothing reaches the origin.
    @Test func withoutCredentialsTheTunnelIsRefusedAndTheLoadFailsSayingWhy() async throws {
        let anonymous = ProxyServers.server(ProxyServers.authenticating!)
        let wrong = ProxyServers.server(
            ProxyServers.authenticating!,
            credentials: ProxyCredentials(username: credentials.username, password: "wrong-\(UUID().uuidString)"))
        for proxy in [anonymous, wrong] {
            try await withLoader(loader(.server(proxy))) { loader async throws in
                for (request, authority) in [
                    (echo("anonymous"), httpbinAuthority), (HTTPRequest(url: tlsTrusted), tlsAuthority),
                ] {
                    let error = try #require(await loader.load(request).error)
                    #expect(error.response == nil, "\(error)")
                    if proxy == anonymous {
                        #expect(error.code == .cannotAuthenticate, "\(error)")
                        #expect("\(error)".contains("407"), "\(error)")
                        #expect("\(error)".contains(authority), "\(error)")
                    } else {
                        #expect(error.code == .invalidResponse, "\(error)")
                    }
                }
            }
        }
    }

    @Test func aBypassedHostIsReachedDirectlyWithoutTheProxysCredentials() async throws {
        let before = ProxyServers.connects(to: localhostHTTPBinAuthority, in: authenticatingLog)
        let proxy = ProxyConfiguration.server(authenticated, bypassing: ["localhost"])
        try await withLoader(loader(proxy)) { loader async throws in
            let response = try await loader.load(echo("bypassed", host: "localhost")).get()
            #expect(response.status == .ok)
            let headers = try receivedHeaders(response)
            #expect(headers["Proxy-Authorization"] == nil, "the origin received \(headers)")
        }
        #expect(ProxyServers.connects(to: localhostHTTPBinAuthority, in: authenticatingLog) == before)
    }

    @Test func theEnvironmentsVariablesChooseTheProxyAndNoProxyTheDirectHosts() async throws {
        let proxy = ProxyConfiguration.environment([
            "http_proxy": ProxyServers.open!.absoluteString, "HTTPS_PROXY": ProxyServers.open!.absoluteString,
            "NO_PROXY": "localhost",
        ])
        let before = ProxyServers.connects(to: tlsAuthority, in: openLog)
        let httpBefore = ProxyServers.connects(to: httpbinAuthority, in: openLog)
        let localhostBefore = ProxyServers.connects(to: localhostTLSAuthority, in: openLog)
        var bypassed = URLComponents(url: tlsTrusted, resolvingAgainstBaseURL: false)!
        bypassed.host = "localhost"
        try await withLoader(loader(proxy)) { loader async throws in
            #expect(try await loader.load(echo("env")).get().status == .ok)
            #expect(try await loader.load(HTTPRequest(url: tlsTrusted)).get().status == .ok)
            #expect(try await loader.load(HTTPRequest(url: bypassed.url!)).get().status == .ok)
        }
        #expect(ProxyServers.connects(to: httpbinAuthority, in: openLog) > httpBefore)
        #expect(ProxyServers.connects(to: tlsAuthority, in: openLog) > before)
        #expect(ProxyServers.connects(to: localhostTLSAuthority, in: openLog) == localhostBefore)
    }

    @Test func manyConcurrentLoadsThroughTheProxyEachCompleteOnce() async throws {
        let tag = "many-\(UUID().uuidString)"
        try await withLoader(loader(.server(authenticated))) { loader async throws in
            let statuses = await withTaskGroup(of: Int.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        let request = index.isMultiple(of: 2) ? echo("\(tag)-\(index)") : HTTPRequest(url: tlsTrusted)
                        return (await loader.load(request)).response?.status.rawValue ?? -1
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 16)
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        }
    }

    @Test func aPinnedRequestIsNotSentAroundTheProxy() async throws {
        let pins = try PublicKeyPinning(pins: [Data(count: 32).base64EncodedString()])
        var components = URLComponents(url: tlsTrusted, resolvingAgainstBaseURL: false)!
        components.host = "localhost"
        var request = HTTPRequest(url: components.url!)
        request.serverTrustPolicy = .evaluated(by: pins)
        let before = ProxyServers.connects(to: localhostTLSAuthority, in: openLog)
        try await withLoader(loader(.server(open))) { loader async throws in
            let error = try #require(await loader.load(request).error)
            #expect(error.code == .invalidRequest, "\(error)")
            #expect("\(error)".contains("proxy"), "\(error)")
        }
        #expect(ProxyServers.connects(to: localhostTLSAuthority, in: openLog) == before)
    }

    /// The proxy's password — planted by `servers.sh`, random for each run — and its Base64 form, and a wrong password
    /// planted here, never appear in a chain's description, a log line with headers, a response, an error or the
    /// configuration, in any view.
    @Test func theProxyPasswordAppearsInNoDescriptionLogOrError() async throws {
        let wrongPassword = "wrong-\(UUID().uuidString)"
        let wrong = ProxyServers.server(
            ProxyServers.authenticating!,
            credentials: ProxyCredentials(username: credentials.username, password: wrongPassword))
        let secrets = [
            credentials.password, wrongPassword, String(authenticated.proxyAuthorization!.dropFirst("Basic ".count)),
            String(wrong.proxyAuthorization!.dropFirst("Basic ".count)),
        ]
        let printed = Box<[String]>([])
        var texts: [String] = []
        func views(_ value: Any) -> [String] {
            var dumped = ""
            dump(value, to: &dumped)
            return [String(describing: value), String(reflecting: value), dumped]
        }
        for proxy in [authenticated, wrong] {
            try await withLoader(loader(.server(proxy))) { loader async throws in
                let chain =
                    PrintLoader(includesHeaders: true) { line in printed.withLock { $0.append(line) } } --> loader
                texts.append(String(describing: chain))
                texts += views(loader.proxy)
                texts += views(await chain.load(echo("planted")))
                texts += views(await chain.load(HTTPRequest(url: tlsTrusted)))
                var pinned = HTTPRequest(url: tlsTrusted)
                pinned.serverTrustPolicy = .evaluated(
                    by: try PublicKeyPinning(pins: [Data(count: 32).base64EncodedString()]))
                texts += views(await chain.load(pinned))
            }
        }
        texts += printed.value
        #expect(printed.value.count >= 6)
        for text in texts {
            for secret in secrets {
                #expect(!text.contains(secret), "shows a proxy credential:\n\(text)")
            }
        }
    }
}

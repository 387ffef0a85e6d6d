import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct OriginTests {
    @Test func portsDefaultFromTheSchemeAndCaseIsIgnored() {
        #expect(Origin(URL(string: "https://A.example.com/x")!) == Origin(URL(string: "https://a.example.com:443/y")!))
        #expect(Origin(URL(string: "HTTP://example.com")!) == Origin(scheme: "http", host: "EXAMPLE.com", port: 80))
        #expect(Origin(URL(string: "http://example.com")!) != Origin(URL(string: "https://example.com")!))
        #expect(Origin(URL(string: "http://localhost:80")!) != Origin(URL(string: "http://127.0.0.1:80")!))
        #expect(Origin(URL(string: "http://h:8080")!) != Origin(URL(string: "http://h:8081")!))
        #expect(Origin(scheme: "wss", host: "h").port == 443)
        #expect(Origin(scheme: "gopher", host: "h").port == nil)
    }

    @Test func aHostNameAloneMeansHTTPSOnPort443() {
        let origin: Origin = "api.example.com"
        #expect(origin == Origin(scheme: "https", host: "api.example.com", port: 443))
        #expect(origin.description == "https://api.example.com")
        #expect(
            Origin(parsing: "http://127.0.0.1:8080/ignored/path")
                == Origin(scheme: "http", host: "127.0.0.1", port: 8080))
        #expect(Origin(parsing: "http://[::1]:8080")?.host == "[::1]")
        #expect(Origin(parsing: "https://files.example.com:8443")?.description == "https://files.example.com:8443")
    }

    @Test func textThatIsNeitherAHostNorAnOriginIsRefused() {
        #expect(Origin(parsing: "not a host") == nil)
        #expect(Origin(parsing: "localhost:") == nil)
        #expect(Origin(parsing: "localhost:0") == nil)
        #expect(Origin(parsing: "localhost:65536") == nil)
        #expect(Origin(parsing: "localhost:80a") == nil)
        #expect(Origin(parsing: "localhost:８０") == nil)  // fullwidth digits are not a port
        #expect(Origin(parsing: "[::1]x") == nil)
        #expect(Origin(parsing: "[::1]:") == nil)
        #expect(Origin(parsing: "https://") == nil)
        // As a literal it matches nothing: not the origin of any request.
        let nothing: Origin = "not a host"
        #expect(nothing != HTTPRequest(host: "not a host").origin)
        #expect(nothing.description.contains("not a host"))
    }

    /// A host with a port, as users write it in a configuration, means that host and port over https: before, a
    /// literal such as `"api.example.com:8443"` made an origin that matched nothing, so credentials listed that way were
    /// never sent.
    @Test(arguments: [
        ("api.example.com:8443", "https://api.example.com:8443", "https://api.example.com:8443/v1"),
        ("localhost:8080", "https://localhost:8080", "https://localhost:8080/"),
        ("API.Example.com:443", "https://api.example.com", "https://api.example.com/x"),
        ("127.0.0.1:9000", "https://127.0.0.1:9000", "https://127.0.0.1:9000/"),
        ("[::1]:8443", "https://[::1]:8443", "https://[::1]:8443/"),
        ("[::1]", "https://[::1]", "https://[::1]/"),
        ("bücher.example:8443", "https://xn--bcher-kva.example:8443", "https://xn--bcher-kva.example:8443/"),
    ])
    func aHostWithAPortMeansHTTPSOnThatPort(text: String, described: String, matching url: String) throws {
        let origin: Origin = .init(stringLiteral: text)
        #expect(Origin(parsing: text) == origin)
        #expect(origin.description == described)
        let request = HTTPRequest(url: try #require(URL(string: url)))
        #expect(origin.isOrigin(of: request))
        #expect(request.origin == origin)
        // The same host over http, or on another port, is another origin.
        var plain = request
        plain.scheme = "http"
        #expect(!origin.isOrigin(of: plain))
        var otherPort = request
        otherPort.port = (request.port ?? 443) + 1
        #expect(!origin.isOrigin(of: otherPort))
    }

    @Test func internationalNamesCompareInTheirASCIIForm() {
        #expect(Origin(host: "Bücher.example").host == "xn--bcher-kva.example")
        #expect(Origin(host: "bücher.example") == Origin(URL(string: "https://xn--bcher-kva.example")!))
        #expect(HTTPRequest(host: "BÜCHER.example").origin == Origin(host: "bücher.example"))
    }

    @Test func requestsHaveAnOriginOnceTheyHaveAHost() {
        #expect(HTTPRequest(path: "/x").origin == nil)
        #expect(HTTPRequest(scheme: "http", host: "h", port: 8080).origin?.description == "http://h:8080")
        #expect(HTTPRequest(host: "h", port: 443).origin == HTTPRequest(host: "h").origin)
    }

    @Test(arguments: [
        ("localhost", true), ("api.localhost", true), ("127.0.0.1", true), ("127.1.2.3", true), ("[::1]", true),
        ("[::ffff:127.0.0.1]", true), ("localhost.example.com", false), ("128.0.0.1", false), ("[::2]", false),
        ("example.com", false), ("10.0.0.1", false),
    ])
    func loopbackHosts(host: String, isLoopback: Bool) {
        #expect(Origin(scheme: "http", host: host).isLoopback == isLoopback)
    }

    @Test func onlyHTTPSIsSecure() {
        #expect(Origin(host: "h").isSecure)
        #expect(!Origin(scheme: "http", host: "h").isSecure)
    }
}

@Suite(.noHang) struct PunycodeTests {
    /// RFC 3492 §7.1's samples, and names whose encodings browsers agree on.
    @Test(arguments: [
        ("bücher", "bcher-kva"),
        ("münchen", "mnchen-3ya"),
        ("日本語", "wgv71a119e"),
        ("ليهمابتكلموشعربي؟", "egbpdaj6bu4bxfgehfvwxn"),
        ("他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"),
        ("pročprostěnemluvíčesky", "Proprostnemluvesky-uyb24dma41a".lowercased()),
        ("3年b組金八先生", "3b-ww4c5e180e575a65lsy2b"),
    ])
    func encodesLikeTheRFC(label: String, expected: String) {
        #expect(Punycode.encode(label.unicodeScalars) == expected)
    }

    @Test func hostNamesGetTheXNPrefixPerLabel() {
        #expect(HostName.check("www.bücher.de") == .valid("www.xn--bcher-kva.de"))
        #expect(HostName.check("例え.テスト") == .valid("xn--r8jz45g.xn--zckzah"))
        #expect(HostName.check("a。b") == .valid("a.b"))
        guard case .invalid(let problem) = HostName.check("bü cher.de") else {
            Issue.record("a space is not allowed")
            return
        }
        #expect(problem.contains("' '"))
        guard case .invalid = HostName.check("bü\u{200B}cher.de") else {
            Issue.record("a zero-width space is not allowed")
            return
        }
    }

    @Test func aRequestsOriginIsTheSameWithAndWithoutTheShortcutForLowercaseHosts() {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let alphabet = Array("abcXYZ019-._~[]:%é ".unicodeScalars)
        var hosts = [
            "api.example.com", "API.example.com", "[::1]", "127.0.0.1", "xn--bcher-kva.example", "bücher.example",
        ]
        for _ in 0..<500 {
            let length = Int.random(in: 1...12, using: &random)
            hosts.append(
                String(String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &random)! })))
        }
        for host in hosts {
            for scheme in ["https", "http", "HTTPS", "wss", "ftp"] {
                for port in [nil, 443, 80, 8443] as [Int?] {
                    let request = HTTPRequest(scheme: scheme, host: host, port: port)
                    #expect(
                        request.origin == Origin(scheme: scheme, host: host, port: port),
                        "seed \(seed): \(scheme)://\(host):\(port.map(String.init) ?? "-")")
                }
            }
        }
    }

    @Test func theLowercaseNameShortcutAcceptsExactlyTheHostsTheFullCheckLeavesUnchanged() {
        for value in 1..<0x250 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            for host in [String(scalar), "a\(scalar)b.example"] {
                let unchanged =
                    HostName.check(host) == .valid(host) && host.lowercased() == host && !host.hasPrefix("[")
                #expect(
                    HostName.isLowercaseASCIIName(host) == (unchanged && host.utf8.allSatisfy { $0 < 0x80 }), "\(value)"
                )
            }
        }
        #expect(!HostName.isLowercaseASCIIName(""))
    }
}

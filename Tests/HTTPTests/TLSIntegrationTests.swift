import Foundation
import HTTP
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(.noHang) struct TLSServerPresenceTests {
    /// The test command sets HTTP_REQUIRE_SERVERS=1: then the TLS suite must not be skipped.
    @Test func tlsServersArePresentWhenRequired() {
        guard TestServers.areRequired else { return }
        #expect(TestServers.tlsSelfSigned != nil, "HTTP_REQUIRE_SERVERS=1 but TLS_SELF_SIGNED_URL is not set")
        #expect(TestServers.tlsExpired != nil, "HTTP_REQUIRE_SERVERS=1 but TLS_EXPIRED_URL is not set")
        #expect(TestServers.tlsWrongName != nil, "HTTP_REQUIRE_SERVERS=1 but TLS_WRONG_NAME_URL is not set")
        #expect(TestServers.tlsTrusted != nil, "HTTP_REQUIRE_SERVERS=1 but TLS_TRUSTED_URL is not set")
        #expect(
            TestServers.tlsCAFile.map { FileManager.default.fileExists(atPath: $0.path) } == true,
            "HTTP_REQUIRE_SERVERS=1 but TLS_CA_FILE is not set or names no file")
    }
}

/// `URLSessionLoader` against HTTPS servers with bad certificates on loopback, started by `scripts/servers.sh`.
@Suite(
    .noHang,
    .enabled(
        if: TestServers.tlsSelfSigned != nil && TestServers.tlsExpired != nil && TestServers.tlsWrongName != nil
            && TestServers.tlsTrusted != nil,
        "needs TLS_SELF_SIGNED_URL, TLS_EXPIRED_URL, TLS_WRONG_NAME_URL and TLS_TRUSTED_URL: run through scripts/test.sh"
    ))
struct TLSIntegrationTests {
    static let unknownIssuer = "SSL certificate problem: unable to get local issuer certificate"

    enum BadCertificate: String, CaseIterable, Sendable {
        case selfSigned, expired, wrongName

        var url: URL? {
            switch self {
            case .selfSigned: TestServers.tlsSelfSigned
            case .expired: TestServers.tlsExpired
            case .wrongName: TestServers.tlsWrongName
            }
        }

        /// What libcurl (over OpenSSL) says on Linux. The expired and wrong-name certificates are the test CA's:
        /// unless the CA is trusted, OpenSSL stops at the unknown issuer before it looks at dates or names.
        var linuxCause: String {
            switch self {
            case .selfSigned: "SSL certificate problem: self-signed certificate"
            case .expired:
                TestServers.isTLSCATrusted ? "SSL certificate problem: certificate has expired" : unknownIssuer
            case .wrongName:
                TestServers.isTLSCATrusted
                    ? "SSL: no alternative certificate subject name matches target host name '127.0.0.1'"
                    : unknownIssuer
            }
        }
    }

    /// The codes Apple platforms report TLS failures with.
    static let appleTLSCodes: Set<URLError.Code> = [
        .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
        .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid,
    ]

    /// Checks that `error` is an insecure connection to `target` (`127.0.0.1:PORT`) whose message names
    /// `linuxCause`.
    private func expectInsecureConnection(
        _ error: HTTPError?, to target: String, linuxCause: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = try #require(error, "the load succeeded", sourceLocation: sourceLocation)
        #expect(error.code == .insecureConnection, "\(error)", sourceLocation: sourceLocation)
        let underlying = try #require(error.underlyingError as? URLError, sourceLocation: sourceLocation)
        #if canImport(FoundationNetworking)
        #expect(underlying.code == .unknown, sourceLocation: sourceLocation)
        #expect(
            error.message == "no secure connection to \(target): \(linuxCause) (URLError code -1)",
            sourceLocation: sourceLocation)
        #else
        #expect(Self.appleTLSCodes.contains(underlying.code), "\(underlying.code)", sourceLocation: sourceLocation)
        #expect(error.message.hasPrefix("no secure connection to \(target): "), sourceLocation: sourceLocation)
        #endif
    }

    private static func address(_ url: URL) -> String {
        "\(url.host ?? "?"):\(url.port ?? 0)"
    }

    @Test(arguments: BadCertificate.allCases)
    func aBadCertificateFailsAsAnInsecureConnectionThatNamesItsCause(_ certificate: BadCertificate) async throws {
        let url = try #require(certificate.url)
        var request = HTTPRequest(url: url.appendingPathComponent("health"))
        request.query = [URLQueryItem(name: "token", value: "query-secret")]
        request.headers["Authorization"] = "Bearer header-secret"

        let error = await URLSessionLoader().load(request).error

        try expectInsecureConnection(error, to: Self.address(url), linuxCause: certificate.linuxCause)
        #expect(error?.message.contains("secret") == false)
    }

    @Test(.enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
    func aRedirectToABadCertificateIsAnInsecureConnectionToo() async throws {
        let httpbin = try #require(TestServers.httpbin)
        let selfSigned = try #require(TestServers.tlsSelfSigned)
        var request = HTTPRequest(url: httpbin.appendingPathComponent("redirect-to"))
        request.query = [
            URLQueryItem(name: "url", value: selfSigned.appendingPathComponent("health").absoluteString + "?k=hidden")
        ]

        // The transport hands the redirect back; FollowRedirects sends the next hop, which names its own server.
        let error = await (FollowRedirects() --> URLSessionLoader()).load(request).error

        let target = Self.address(selfSigned)
        try expectInsecureConnection(error, to: target, linuxCause: BadCertificate.selfSigned.linuxCause)
        #expect(error?.message.contains("hidden") == false)
    }

    @Test(.enabled(if: !TestServers.isTLSCATrusted, "TLS_CA_TRUSTED=1: the test CA is trusted"))
    func theTestCAIsUnknownUnlessTrusted() async throws {
        let trusted = try #require(TestServers.tlsTrusted)
        let error = await URLSessionLoader().load(HTTPRequest(url: trusted.appendingPathComponent("health"))).error
        try expectInsecureConnection(error, to: Self.address(trusted), linuxCause: Self.unknownIssuer)
    }

    /// URLSession cannot be told to trust a CA on Linux: swift-corelibs-foundation 6.3.1 hands libcurl only the
    /// CA bundle it was built with (`URLSessionCertificateAuthorityInfoFile` is read on Android only), and
    /// libcurl ignores `SSL_CERT_FILE`, `SSL_CERT_DIR` and `CURL_CA_BUNDLE`. What works is the system's bundle
    /// holding the CA, which `scripts/with-test-ca.sh` arranges for one command.
    @Test(
        .enabled(
            if: TestServers.isTLSCATrusted,
            """
            URLSession cannot be told to trust TLS_CA_FILE; run under scripts/with-test-ca.sh (Linux, root or user \
            namespaces), which puts it into the system's CA bundle for the tests alone
            """))
    func theTrustedServerAnswersWhenItsCAIsTrusted() async throws {
        let trusted = try #require(TestServers.tlsTrusted)
        var request = HTTPRequest(url: trusted)
        request.path = "/"
        let response = try await URLSessionLoader().load(request).get()
        #expect(response.status == .ok)
        #expect(response.json["server"] as? String == "trusted")
    }
}

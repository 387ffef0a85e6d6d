import Foundation
import Testing

@testable import HTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `HTTPError(request:transportError:)`, fed the errors URLSession returns on Linux (measured with
/// swift-corelibs-foundation 6.3.1 over libcurl 7.88.1 and OpenSSL 3.0) and on Apple platforms.
@Suite(.noHang) struct URLSessionLoaderMappingTests {
    static let url = URL(string: "https://127.0.0.1:8443/health")!

    /// A `URLError` the way swift-corelibs-foundation builds one: code -1 unless libcurl's error has a code of
    /// its own, libcurl's text as the description, and the same again as an underlying `NSError`.
    static func corelibsError(_ text: String, code: URLError.Code = .unknown, url: URL = url) -> URLError {
        URLError(
            code,
            userInfo: [
                NSUnderlyingErrorKey: NSError(
                    domain: NSURLErrorDomain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: text]),
                NSURLErrorFailingURLErrorKey: url,
                "NSErrorFailingURLStringKey": url.absoluteString,
                NSLocalizedDescriptionKey: text,
            ])
    }

    static func map(_ error: any Error, request: HTTPRequest = HTTPRequest(url: url)) -> HTTPError {
        HTTPError(request: request, transportError: error)
    }

    /// libcurl's texts for TLS failures. The first four were measured against scripts/servers.sh's TLS servers
    /// (the expired and wrong-name ones through `curl --cacert`, as URLSession cannot trust their CA), the next
    /// two against a port that closes at once resp. speaks plain HTTP; the last is GnuTLS's (libcurl3-gnutls).
    static let linuxTLSFailures = [
        "SSL certificate problem: self-signed certificate",
        "SSL certificate problem: unable to get local issuer certificate",
        "SSL certificate problem: certificate has expired",
        "SSL: no alternative certificate subject name matches target host name '127.0.0.1'",
        "OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to 127.0.0.1:8443",
        "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number",
        "server certificate verification failed. CAfile: /etc/ssl/certs/ca-certificates.crt CRLfile: none",
    ]

    @Test(arguments: linuxTLSFailures)
    func linuxTLSFailuresAreInsecureConnectionsThatKeepTheirCause(text: String) {
        let urlError = Self.corelibsError(text)
        let error = Self.map(urlError)
        #expect(error.code == .insecureConnection)
        #expect(error.message == "no secure connection to 127.0.0.1:8443: \(text) (URLError code -1)")
        #expect((error.underlyingError as? URLError) == urlError)
    }

    @Test func theTrailingSpaceLibcurlLeavesIsDropped() {
        let error = Self.map(
            Self.corelibsError("OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to 127.0.0.1:8443 "))
        #expect(error.message.hasSuffix("in connection to 127.0.0.1:8443 (URLError code -1)"))
    }

    /// The codes Apple platforms report TLS failures with, and their descriptions there.
    static let appleTLSFailures: [(URLError.Code, String)] = [
        (.secureConnectionFailed, "An SSL error has occurred and a secure connection to the server cannot be made."),
        (.serverCertificateHasBadDate, "The certificate for this server has expired."),
        (
            .serverCertificateUntrusted,
            "The certificate for this server is invalid. You might be connecting to a server that is pretending to "
                + "be “127.0.0.1” which could put your confidential information at risk."
        ),
        (
            .serverCertificateHasUnknownRoot,
            "The certificate for this server was signed by an unknown certifying authority."
        ),
        (.serverCertificateNotYetValid, "The certificate for this server is not yet valid."),
        (.clientCertificateRejected, "The server did not accept the certificate."),
        (.clientCertificateRequired, "The server “127.0.0.1” requires a client certificate."),
        (
            .appTransportSecurityRequiresSecureConnection,
            "The resource could not be loaded because the App Transport Security policy requires the use of a "
                + "secure connection."
        ),
    ]

    @Test(arguments: appleTLSFailures)
    func appleTLSCodesAreInsecureConnections(code: URLError.Code, text: String) {
        let described = URLError(
            code,
            userInfo: [
                NSLocalizedDescriptionKey: text, NSURLErrorFailingURLErrorKey: Self.url,
                "_kCFStreamErrorCodeKey": -9813,
                NSUnderlyingErrorKey: NSError(domain: "kCFErrorDomainCFNetwork", code: code.rawValue),
            ])
        let error = Self.map(described)
        #expect(error.code == .insecureConnection)
        let cause = text.hasSuffix(".") ? String(text.dropLast()) : text
        #expect(error.message.hasPrefix("no secure connection to 127.0.0.1:8443: \(cause) (URLError."))
        #expect(error.message.hasSuffix("(\(code.rawValue)))"))
        #expect((error.underlyingError as? URLError)?.code == code)

        // Without a description (made in code), the code alone is named.
        let bare = Self.map(URLError(code), request: HTTPRequest(host: "example.com"))
        #expect(bare.code == .insecureConnection)
        #expect(bare.message.hasPrefix("no secure connection to example.com (URLError."))
        #expect(!bare.message.contains("URLError code"))
    }

    /// libcurl's texts for other failures swift-corelibs-foundation reports as -1 (measured against a local port
    /// that answers them), and one it is known for on an established TLS connection.
    @Test(arguments: [
        "Header without colon",
        "OpenSSL SSL_read: error:0A000126:SSL routines::unexpected eof while reading, errno 0",
    ])
    func otherCode1FailuresStayUnknownAndKeepTheirText(text: String) {
        let error = Self.map(Self.corelibsError(text))
        #expect(error.code == .unknown)
        #expect(error.message == "the transport failed: \(text) (URLError code -1)")
    }

    /// A connection closed before the body's end is a lost connection, which a download can resume.
    @Test func aTransferCutOffIsALostConnection() {
        let error = Self.map(Self.corelibsError("transfer closed with 7 bytes remaining to read"))
        #expect(error.code == .cannotConnect)
        #expect(error.message.contains("was lost before the response was complete"))
        #expect(error.message.contains("transfer closed with 7 bytes remaining to read"))
    }

    @Test func aCode1ErrorWithoutTextNamesOnlyTheCode() {
        let error = Self.map(URLError(.unknown))
        #expect(error.code == .unknown)
        #expect(error.message == "the transport failed (URLError code -1)")
    }

    @Test func mappedCodesKeepTheirTextToo() {
        let refused = Self.map(
            Self.corelibsError(
                "Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
                code: .cannotConnectToHost,
                url: URL(string: "http://127.0.0.1:1/")!),
            request: HTTPRequest(scheme: "http", host: "127.0.0.1", port: 1))
        #expect(refused.code == .cannotConnect)
        #expect(
            refused.message
                == "could not reach 127.0.0.1:1: Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to "
                + "server (URLError.cannotConnectToHost (-1004))")

        let http09 = Self.map(Self.corelibsError("Received HTTP/0.9 when not allowed", code: .unsupportedURL))
        #expect(
            http09.message
                == "URLSession rejected the URL: Received HTTP/0.9 when not allowed (URLError.unsupportedURL (-1002))")
    }

    @Test func cancellationSaysOnlyThatItWasCancelled() {
        let error = Self.map(Self.corelibsError("cancelled", code: .cancelled))
        #expect(error.code == .cancelled)
        #expect(error.message == "the request was cancelled")
        #expect((error.underlyingError as? URLError)?.code == .cancelled)
    }

    @Test func theServerNamedIsTheOneThatFailed() {
        let failing = URL(string: "https://other.example:9443/landing")!
        let error = Self.map(
            Self.corelibsError("SSL certificate problem: self-signed certificate", url: failing),
            request: HTTPRequest(host: "api.example.com", path: "/start"))
        #expect(error.message.hasPrefix("no secure connection to other.example:9443: SSL certificate problem"))
    }

    @Test func appTransportSecurityRefusingPlainHTTPNamesTheServer() {
        let url = URL(string: "http://api.example.com/items")!
        let error = Self.map(
            URLError(.appTransportSecurityRequiresSecureConnection, userInfo: [NSURLErrorFailingURLErrorKey: url]),
            request: HTTPRequest(url: url))
        #expect(error.code == .insecureConnection)
        #expect(
            error.message
                == "no secure connection to api.example.com (URLError.appTransportSecurityRequiresSecureConnection (-1022))"
        )
    }

    private struct Failure: LocalizedError {
        var errorDescription: String?
    }

    @Test func otherErrorsKeepTheirDescription() {
        let error = Self.map(Failure(errorDescription: "the stub\nhas no answer."))
        #expect(error.code == .unknown)
        #expect(error.message == "the transport failed: the stub has no answer")
        #expect(error.underlyingError is Failure)
    }

    @Test func theQueryHeaderValuesAndURLSecretsNeverReachTheMessage() throws {
        var request = HTTPRequest(host: "api.example.com", path: "/items")
        request.query = [
            URLQueryItem(name: "api_key", value: "k3y/with space"), URLQueryItem(name: "page", value: "2"),
        ]
        request.headers["Authorization"] = "Bearer sesame-token"
        request.headers["X-Api-Key"] = "open-sesame"
        let query = try #require(request.percentEncodedQuery)
        let text = [
            "failed https://api.example.com/items?\(query) and https://user:pw@other.example/p?next=1#frag,",
            "with Bearer sesame-token, open-sesame, k3y/with space, k3y%2Fwith%20space and \(query)",
        ].joined(separator: "\n")
        let message = Self.map(Failure(errorDescription: text), request: request).message
        let corelibs = Self.map(Self.corelibsError(text, url: try #require(request.url)), request: request).message

        for message in [message, corelibs] {
            for secret in ["sesame-token", "open-sesame", "k3y", query, "user:pw", "next=1", "frag"] {
                #expect(!message.contains(secret), "\(message) contains \(secret)")
            }
            #expect(!message.contains("\n"))
            #expect(message.contains("https://api.example.com/items?<redacted>"))
            #expect(message.contains("https://<redacted>@other.example/p?<redacted>"))
        }
    }

    @Test func aLongExplanationIsCut() {
        let error = Self.map(Self.corelibsError("SSL certificate problem: " + String(repeating: "x", count: 1_000)))
        #expect(error.code == .insecureConnection)
        let cause = error.message.dropFirst("no secure connection to 127.0.0.1:8443: ".count)
            .dropLast(" (URLError code -1)".count)
        #expect(cause.count == TransportErrorText.maximumLength)
        #expect(cause.hasSuffix("…"))
    }

    /// Random secrets in random text: none of them (of four characters or more) is ever in the message.
    ///
    /// The text around the secrets is drawn without the letters and digits the secrets may have, and a secret is
    /// looked for only when it has one of them: so a secret found in the message came from the secret, never from the
    /// random text around it spelling it by chance (seed 2828736803171772502 did: `=b=b\t =` around a redacted `b\n =`).
    @Test func randomSecretsNeverReachTheMessage() {
        let seed =
            ProcessInfo.processInfo.environment["RANDOM_SEED"].flatMap(UInt64.init) ?? .random(in: 0...UInt64.max)
        print("randomSecretsNeverReachTheMessage seed: \(seed) (replay with RANDOM_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let alphanumerics = Array("abcXYZ019")
        let alphabet = alphanumerics + Array(" -_.~%/?#&=:@+\n\t\"'é😀")
        let noiseAlphabet = alphabet.filter { !alphanumerics.contains($0) }
        func word(_ length: ClosedRange<Int>, from characters: [Character] = alphabet) -> String {
            String((0..<Int.random(in: length, using: &random)).map { _ in characters.randomElement(using: &random)! })
        }
        for _ in 0..<500 {
            var request = HTTPRequest(host: "api.example.com", path: "/p")
            request.query = (0..<Int.random(in: 0...3, using: &random)).map { index in
                URLQueryItem(name: "q\(index)", value: word(4...12))
            }
            let headerValue = word(4...12).filter { $0.isASCII && !$0.isNewline && $0 != "\t" }
            if headerValue.count >= 4 { request.headers["X-Secret"] = headerValue }
            let secrets =
                request.query.compactMap(\.value) + [request.percentEncodedQuery ?? ""]
                + (headerValue.count >= 4 ? [headerValue] : [])
            var pieces = (0..<6).map { _ in word(0...8, from: noiseAlphabet) } + secrets
            pieces.shuffle(using: &random)
            let text = pieces.joined(separator: Bool.random(using: &random) ? " " : "")
            let message = Self.map(Failure(errorDescription: text), request: request).message
            for secret in secrets {
                // As it would read in the one-line message.
                let shown = String(secret.map { $0.isNewline || $0 == "\t" ? " " : $0 })
                    .trimmingCharacters(in: .whitespaces)
                guard shown.count >= 4, shown.contains(where: alphanumerics.contains) else { continue }
                #expect(!message.contains(shown), "seed \(seed): \(message) contains \(shown)")
            }
        }
    }

    @Test func codesWithoutANameShowTheirNumber() {
        #expect(URLError.Code.unknown.displayName == "URLError code -1")
        #expect(URLError.Code.fileDoesNotExist.displayName == "URLError code -1100")
        #expect(URLError.Code.serverCertificateUntrusted.displayName == "URLError.serverCertificateUntrusted (-1202)")
    }
}

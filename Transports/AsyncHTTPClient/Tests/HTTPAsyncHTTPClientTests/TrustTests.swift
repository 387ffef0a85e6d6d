import AsyncHTTPClient
import Foundation
import HTTP
import HTTPAsyncHTTPClient
import NIOSSL
import Testing

/// Server trust and pinning over NIOSSL, against the HTTPS servers of `scripts/servers.sh`: one with a self-signed
/// certificate, one whose certificate the test CA issued for another name, and one the test CA issued for
/// 127.0.0.1 (``TestServers/tlsTrusted``). The test CA (``TestServers/tlsCAFile``) is trusted only by loaders
/// told to.
@Suite(
    .timeLimit(.minutes(3)),
    .enabled(if: TestServers.haveTLS, "needs the local TLS servers: run through scripts/test.sh"))
struct TrustTests {
    let caFile = TestServers.tlsCAFile!
    let trusted = TestServers.tlsTrusted!
    let selfSigned = TestServers.tlsSelfSigned!
    let wrongName = TestServers.tlsWrongName!

    /// A loader whose client trusts the test CA as well as the system's roots.
    func loaderTrustingTheTestCA(serverTrustEvaluator: (any ServerTrustEvaluator)? = nil) -> AsyncHTTPClientLoader {
        var configuration = AsyncHTTPClientLoader.defaultConfiguration
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(caFile.path)]
        configuration.tlsConfiguration = tls
        return AsyncHTTPClientLoader(configuration: configuration, serverTrustEvaluator: serverTrustEvaluator)
    }

    /// The pin of the first certificate in the PEM file `name` beside the test CA.
    func pin(of name: String) throws -> String {
        let file = caFile.deletingLastPathComponent().appending(path: name)
        return try PublicKeyPinning.pin(forCertificate: try #require(certificates(inPEMFile: file).first))
    }

    /// A pin of no certificate here.
    let strangersPin = Data(repeating: 7, count: 32).base64EncodedString()

    @Test func aSelfSignedCertificateIsRefused() async throws {
        try await withLoader { loader async throws in
            let error = try #require(await loader.load(HTTPRequest(url: selfSigned)).error)
            #expect(error.code == .insecureConnection, "\(error)")
            #expect(error.message.contains("no secure connection to 127.0.0.1"), "\(error.message)")
        }
    }

    @Test func aServerTheConfiguredRootsTrustIsAccepted() async throws {
        try await withLoader(loaderTrustingTheTestCA()) { loader async throws in
            #expect(try await loader.load(HTTPRequest(url: trusted)).get().status == .ok)
            let error = try #require(await loader.load(HTTPRequest(url: wrongName)).error)
            #expect(error.code == .insecureConnection, "a certificate for another name: \(error)")
        }
    }

    @Test func pinningTheCAsKeyTrustsTheServerItIssued() async throws {
        let pinning = try PublicKeyPinning(pins: [try pin(of: "ca.pem")])
        try await withLoader(loaderTrustingTheTestCA(serverTrustEvaluator: pinning)) { loader async throws in
            // The server sends only its own certificate: the CA's key is in the validated chain, not in what it sent.
            let response = try await loader.load(HTTPRequest(url: trusted)).get()
            #expect(response.status == .ok)
            #expect(response.json["server"] as? String == "trusted")
        }
    }

    @Test func pinningTheLeafsKeyTrustsTheServer() async throws {
        let pinning = try PublicKeyPinning(pins: [try pin(of: "trusted.pem")], scope: .leafCertificate)
        try await withLoader(loaderTrustingTheTestCA(serverTrustEvaluator: pinning)) { loader async throws in
            #expect(try await loader.load(HTTPRequest(url: trusted)).get().status == .ok)
            #expect(try await loader.load(HTTPRequest(url: trusted)).get().status == .ok, "and a second time")
        }
    }

    @Test func aServerWithoutAPinnedKeyIsRefusedNamingItsPins() async throws {
        let pinning = try PublicKeyPinning(pins: [strangersPin])
        try await withLoader(loaderTrustingTheTestCA(serverTrustEvaluator: pinning)) { loader async throws in
            let error = try #require(await loader.load(HTTPRequest(url: trusted)).error)
            #expect(error.code == .insecureConnection, "\(error)")
            #expect(error.message.contains("server trust refused by PublicKeyPinning"), "\(error.message)")
            #expect(error.message.contains(try pin(of: "trusted.pem")), "the chain's pins are listed: \(error.message)")
            #expect(error.underlyingError is PublicKeyPinning.Failure)
            #expect(error.response == nil, "nothing was answered: the request never left")
        }
    }

    @Test func thePlatformsEvaluationRunsBeforeThePins() async throws {
        // The self-signed server's own key is pinned, but nothing trusts its certificate: refused all the same.
        let pinning = try PublicKeyPinning(pins: [try pin(of: "self-signed.pem")])
        try await withLoader(AsyncHTTPClientLoader(serverTrustEvaluator: pinning)) { loader async throws in
            let error = try #require(await loader.load(HTTPRequest(url: selfSigned)).error)
            #expect(error.code == .insecureConnection, "\(error)")
            #expect(error.message.contains("the platform's trust evaluation failed"), "\(error.message)")
        }
    }

    /// Trusts exactly one leaf key, alone: for a self-signed server the platform does not know.
    struct PinnedSelfSigned: ServerTrustEvaluator {
        let pin: String
        var defaultEvaluation: DefaultTrustEvaluation { .replaced }

        func evaluate(_ trust: ServerTrust) throws {
            guard let leaf = trust.certificateChain.first, try PublicKeyPinning.pin(forCertificate: leaf) == pin else {
                throw TLSConfigurationError(message: "not the pinned key")
            }
        }
    }

    @Test func anEvaluatorThatReplacesThePlatformsDecidesAlone() async throws {
        let evaluator = PinnedSelfSigned(pin: try pin(of: "self-signed.pem"))
        try await withLoader(AsyncHTTPClientLoader(serverTrustEvaluator: evaluator)) { loader async throws in
            #expect(try await loader.load(HTTPRequest(url: selfSigned)).get().status == .ok)
            let error = try #require(await loader.load(HTTPRequest(url: trusted)).error)
            #expect(error.message.contains("not the pinned key"), "\(error.message)")
        }
    }

    @Test func aRequestsOwnPolicyOverridesTheLoaders() async throws {
        let refuseAll = try PublicKeyPinning(pins: [strangersPin])
        let accept = try PublicKeyPinning(pins: [try pin(of: "ca.pem")])
        try await withLoader(loaderTrustingTheTestCA(serverTrustEvaluator: refuseAll)) { loader async throws in
            #expect(await loader.load(HTTPRequest(url: trusted)).error?.code == .insecureConnection)
            var pinned = HTTPRequest(url: trusted)
            pinned.serverTrustPolicy = .evaluated(by: accept)
            #expect(try await loader.load(pinned).get().status == .ok)
            var unpinned = HTTPRequest(url: trusted)
            unpinned.serverTrustPolicy = .platformDefault
            #expect(try await loader.load(unpinned).get().status == .ok)
        }
    }

    @Test func aPinnedRequestOverPlainHTTPIsRefusedUnsent() async throws {
        let pinning = try PublicKeyPinning(pins: [strangersPin])
        try await withLoader(AsyncHTTPClientLoader(serverTrustEvaluator: pinning)) { loader async throws in
            let error = try #require(await loader.load(HTTPRequest(url: URL(string: "http://127.0.0.1:9/")!)).error)
            #expect(error.code == .insecureConnection)
            #expect(error.message.contains("plain http"), "\(error.message)")
        }
    }

    @Test func pinnedStreamsAndUploadsGoThroughTheVerifiedConnection() async throws {
        let pinning = try PublicKeyPinning(pins: [try pin(of: "ca.pem")])
        try await withLoader(loaderTrustingTheTestCA(serverTrustEvaluator: pinning)) { loader async throws in
            let streamed = try await loader.stream(HTTPRequest(url: trusted)).get()
            let body = try await streamed.body.collect()
            #expect(String(decoding: body, as: UTF8.self).contains("trusted"))
            // Many requests at once share the bridge's connections.
            try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await loader.load(HTTPRequest(url: trusted)).get().status }
                }
                for try await status in group { #expect(status == .ok) }
            }
        }
    }

    @Test func aClientIdentityIsLoadedAndTheRequestGoes() async throws {
        // The test servers do not ask for a certificate; what this shows is that an identity NIOSSL accepts is
        // configured without refusing the request, on both paths (plain and pinned).
        let identity = try makeClientIdentity()
        var request = HTTPRequest(url: trusted)
        request.clientIdentity = identity
        try await withLoader(loaderTrustingTheTestCA()) { loader async throws in
            #expect(try await loader.load(request).get().status == .ok)
        }
        let pinning = try PublicKeyPinning(pins: [try pin(of: "ca.pem")])
        try await withLoader(loaderTrustingTheTestCA(serverTrustEvaluator: pinning)) { loader async throws in
            #expect(try await loader.load(request).get().status == .ok)
        }
    }

    /// An identity made with the `openssl` command: a self-signed EC certificate and its key.
    func makeClientIdentity() throws -> ClientIdentity {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=client", "-keyout", folder.appending(path: "key.pem").path,
            "-out", folder.appending(path: "cert.pem").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl failed")
        let pem =
            try String(contentsOf: folder.appending(path: "cert.pem"), encoding: .utf8)
            + String(contentsOf: folder.appending(path: "key.pem"), encoding: .utf8)
        return try ClientIdentity(pemEncoded: pem)
    }
}

import AsyncHTTPClient
import Foundation
import HTTP
import HTTPAsyncHTTPClient
import NIOSSL
import Testing

/// Mutual TLS against `scripts/servers.sh`'s `tls-client-auth` server (``TestServers/tlsClientAuth``), whose handshake
/// requires a client certificate the test CA issued and which answers `GET /` with the subject of the certificate it
/// was shown: so these tests prove the certificate is presented, not merely configured.
@Suite(
    .timeLimit(.minutes(3)),
    .enabled(
        if: TestServers.haveTLS && TestServers.tlsClientAuth != nil,
        "needs TLS_CLIENT_AUTH_URL and the other TLS servers: run through scripts/test.sh"))
struct MutualTLSTests {
    let caFile = TestServers.tlsCAFile!
    let server = TestServers.tlsClientAuth!

    /// The subject of `client-identity.pem`, as the server writes it (RFC 4514, most specific first).
    static let clientSubject = "CN=HTTP package test client,O=HTTP package tests (throwaway)"

    /// The identity in the PEM file `name` beside the test CA: the certificate and its key.
    func identity(_ name: String) throws -> ClientIdentity {
        let file = caFile.deletingLastPathComponent().appending(path: name)
        return try ClientIdentity(pemEncoded: String(contentsOf: file, encoding: .utf8))
    }

    /// A loader whose client trusts the test CA, which issued the server's certificate.
    func loader(
        clientIdentity: ClientIdentity? = nil, serverTrustEvaluator: (any ServerTrustEvaluator)? = nil
    ) -> AsyncHTTPClientLoader {
        var configuration = AsyncHTTPClientLoader.defaultConfiguration
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(caFile.path)]
        configuration.tlsConfiguration = tls
        return AsyncHTTPClientLoader(
            configuration: configuration, serverTrustEvaluator: serverTrustEvaluator, clientIdentity: clientIdentity)
    }

    /// The server's log, where it writes each refused handshake and each request with its client's subject.
    func serverLog() -> String {
        let logs = caFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "servers-logs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: logs.path)) ?? []
        return names.filter { $0.hasPrefix("tls-client-auth") }
            .compactMap { try? String(contentsOf: logs.appending(path: $0), encoding: .utf8) }
            .joined()
    }

    @Test func withoutACertificateTheHandshakeIsRefused() async throws {
        try await withLoader(loader()) { loader async throws in
            let error = try #require(await loader.load(HTTPRequest(url: server)).error)
            #expect(error.code == .insecureConnection, "\(error)")
            #expect(error.response == nil, "the server answered nothing: \(error)")
        }
    }

    @Test func theTestCAsClientCertificateIsPresentedAndTheServerSeesItsSubject() async throws {
        var request = HTTPRequest(url: server)
        request.clientIdentity = try identity("client-identity.pem")
        try await withLoader(loader()) { loader async throws in
            let response = try await loader.load(request).get()
            #expect(response.status == .ok)
            #expect(response.json["server"] as? String == "client-auth")
            #expect(response.json["client"] as? String == Self.clientSubject)
        }
        #expect(serverLog().contains("(client \(Self.clientSubject))"), "the server logged the request's client")
    }

    @Test func theLoadersIdentityServesRequestsWithoutTheirOwn() async throws {
        try await withLoader(loader(clientIdentity: try identity("client-identity.pem"))) { loader async throws in
            let response = try await loader.load(HTTPRequest(url: server)).get()
            #expect(response.json["client"] as? String == Self.clientSubject)
            // Streamed, too, and several at once over the identity's own connections.
            let streamed = try await loader.stream(HTTPRequest(url: server)).get()
            let body = String(decoding: try await streamed.body.collect(), as: UTF8.self)
            #expect(body.contains(Self.clientSubject), "\(body)")
            try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await loader.load(HTTPRequest(url: server)).get().json["client"] as? String }
                }
                for try await subject in group { #expect(subject == Self.clientSubject) }
            }
        }
    }

    @Test func aPinnedConnectionPresentsTheIdentityToo() async throws {
        // A server-trust evaluator sends the request through the loader's own verified connection (the bridge).
        let caPin = try PublicKeyPinning.pin(forCertificate: try #require(certificates(inPEMFile: caFile).first))
        let pinning = try PublicKeyPinning(pins: [caPin])
        var request = HTTPRequest(url: server)
        request.clientIdentity = try identity("client-identity.pem")
        try await withLoader(loader(serverTrustEvaluator: pinning)) { loader async throws in
            #expect(try await loader.load(request).get().json["client"] as? String == Self.clientSubject)
            let error = try #require(await loader.load(HTTPRequest(url: server)).error, "no identity: refused")
            #expect(error.code == .insecureConnection, "\(error)")
        }
    }

    @Test func aCertificateTheServerDoesNotTrustIsRefused() async throws {
        var request = HTTPRequest(url: server)
        request.clientIdentity = try identity("stranger-identity.pem")
        try await withLoader(loader()) { loader async throws in
            let error = try #require(await loader.load(request).error)
            #expect(error.code == .insecureConnection, "\(error)")
            #expect(error.response == nil)
        }
        #expect(serverLog().contains("certificate verify failed"), "the server refused the stranger's certificate")
    }
}

import Foundation
import HTTP
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TestServers {
    /// The HTTPS server that requires a client certificate the test CA issued (`scripts/servers.sh`'s
    /// `tls-client-auth`); `client-identity.pem`, the certificate it accepts with its key, is beside ``tlsCAFile``.
    static let tlsClientAuth: URL? = environment["TLS_CLIENT_AUTH_URL"].flatMap(URL.init(string:))
}

/// `URLSessionLoader` against a server that requires a client certificate. The AsyncHTTPClient transport presents
/// one (its `MutualTLSTests`); URLSession presents only a `SecIdentity`, and on Linux none at all, so a request with a
/// portable identity fails closed there, unsent, saying why.
@Suite(
    .noHang,
    .enabled(
        if: TestServers.tlsClientAuth != nil && TestServers.tlsCAFile != nil,
        "needs TLS_CLIENT_AUTH_URL and TLS_CA_FILE: run through scripts/test.sh"))
struct MutualTLSIntegrationTests {
    let server = TestServers.tlsClientAuth!

    /// The identity the server accepts: the test CA's client certificate and its key.
    func acceptedIdentity() throws -> ClientIdentity {
        let folder = try #require(TestServers.tlsCAFile).deletingLastPathComponent()
        let file = folder.appending(path: "client-identity.pem")
        return try ClientIdentity(pemEncoded: String(contentsOf: file, encoding: .utf8))
    }

    @Test func aRequestWithAPortableIdentityFailsClosedUnsentSayingWhy() async throws {
        var request = HTTPRequest(url: server)
        request.clientIdentity = try acceptedIdentity()

        let error = try #require(await URLSessionLoader().load(request).error, "the request was answered")

        #expect(error.code == .insecureConnection, "\(error)")
        #expect(error.response == nil)
        #expect(error.underlyingError == nil, "refused before URLSession saw it: \(error)")
        #if canImport(FoundationNetworking)
        #expect(
            error.message.hasSuffix(
                "URLSession on Linux cannot present a client certificate, so the request's client identity cannot be "
                    + "used; it was not sent"),
            "\(error.message)")
        #else
        #expect(error.message.contains("presents client certificates only as SecIdentity"), "\(error.message)")
        #endif
    }

    @Test func aRequestWithoutAnIdentityIsRefusedByTheServer() async throws {
        let error = try #require(await URLSessionLoader().load(HTTPRequest(url: server)).error, "answered")

        #expect(error.code == .insecureConnection, "\(error)")
        #expect(error.response == nil)
        #if canImport(FoundationNetworking)
        if !TestServers.isTLSCATrusted {
            // libcurl stops at the server's certificate, which nothing it trusts issued. (This server sends the test
            // CA along with its own certificate: OpenSSL completes the chain from the CA it verifies clients with.)
            #expect(
                error.message.contains("SSL certificate problem: self-signed certificate in certificate chain"),
                "\(error.message)")
        }
        #endif
    }
}

@Suite(.noHang) struct MutualTLSServerPresenceTests {
    /// The test command sets HTTP_REQUIRE_SERVERS=1: then the mutual TLS suite must not be skipped.
    @Test func theClientAuthServerIsPresentWhenRequired() {
        guard TestServers.areRequired else { return }
        #expect(TestServers.tlsClientAuth != nil, "HTTP_REQUIRE_SERVERS=1 but TLS_CLIENT_AUTH_URL is not set")
    }
}

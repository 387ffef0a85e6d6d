import AsyncHTTPClient
import HTTP
import HTTPAsyncHTTPClient
import NIOSSL

/// The transport the demo's chains end in here: one AsyncHTTPClient `HTTPClient` that every chain's
/// `AsyncHTTPClientLoader` borrows, as a server shares one client. The other files of this target are the product's
/// demo (`Sources/Demo`, linked here), which ends its chains in `URLSessionLoader` with a `Transport.swift` of its
/// own. Run it with `scripts/demo.sh --transport asynchttpclient`.
enum DemoTransport {
    static let name = "AsyncHTTPClient"

    /// What the transport can do with TLS: it checks pins (over NIOSSL) on every platform.
    static let capabilities = TransportCapabilities.asyncHTTPClient

    private static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: AsyncHTTPClientLoader.defaultConfiguration)

    /// A terminal loader for one of the demo's chains.
    static func makeTerminal() -> HTTPLoader { AsyncHTTPClientLoader(client: client) }

    /// A terminal loader whose pinned connections also trust the CA in `caFile` (the local HTTPS test servers'),
    /// beside the system's roots: a pin only narrows whom the platform's evaluation trusts.
    static func makeTerminal(trustingCAFile caFile: String) -> HTTPLoader {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(caFile)]
        return AsyncHTTPClientLoader(client: client, tlsConfiguration: tls)
    }

    /// Shuts the shared client down when the demo is done.
    static func shutDown() async { try? await client.shutdown() }
}

import AsyncHTTPClient
import HTTP
import HTTPAsyncHTTPClient

/// The transport the demo's chains end in here: one AsyncHTTPClient `HTTPClient` that every chain's
/// `AsyncHTTPClientLoader` borrows, as a server shares one client. The other files of this target are the product's
/// demo (`Sources/Demo`, linked here), which ends its chains in `URLSessionLoader` with a `Transport.swift` of its
/// own. Run it with `scripts/demo.sh --transport asynchttpclient`.
enum DemoTransport {
    static let name = "AsyncHTTPClient"

    private static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: AsyncHTTPClientLoader.defaultConfiguration)

    /// A terminal loader for one of the demo's chains.
    static func makeTerminal() -> HTTPLoader { AsyncHTTPClientLoader(client: client) }

    /// Shuts the shared client down when the demo is done.
    static func shutDown() async { try? await client.shutdown() }
}

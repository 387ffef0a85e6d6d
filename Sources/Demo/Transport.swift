import HTTP

/// The transport the demo's chains end in: `URLSessionLoader` here. The AsyncHTTPClient transport's package builds
/// the same demo over `AsyncHTTPClientLoader` with a `Transport.swift` of its own
/// (`scripts/demo.sh --transport asynchttpclient`).
enum DemoTransport {
    static let name = "URLSession"

    /// What the transport can do with TLS: on Linux, URLSession cannot evaluate server trust, so it cannot check pins.
    static let capabilities = TransportCapabilities.urlSession

    /// A terminal loader for one of the demo's chains.
    static func makeTerminal() -> HTTPLoader { URLSessionLoader() }

    /// A terminal loader for the local HTTPS test servers. URLSession cannot be told to trust another CA (on Linux
    /// it reads no CA file), so this is the ordinary terminal: the platform's own trust applies.
    static func makeTerminal(trustingCAFile caFile: String) -> HTTPLoader { URLSessionLoader() }

    /// Called when the demo is done.
    static func shutDown() async {}
}

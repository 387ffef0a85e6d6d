import HTTP

/// The transport the demo's chains end in: `URLSessionLoader` here. The AsyncHTTPClient transport's package builds
/// the same demo over `AsyncHTTPClientLoader` with a `Transport.swift` of its own
/// (`scripts/demo.sh --transport asynchttpclient`).
enum DemoTransport {
    static let name = "URLSession"

    /// A terminal loader for one of the demo's chains.
    static func makeTerminal() -> HTTPLoader { URLSessionLoader() }

    /// Called when the demo is done.
    static func shutDown() async {}
}

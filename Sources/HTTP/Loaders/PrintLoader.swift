import Foundation

/// A loader that writes one line per request and one per result, with secrets redacted.
///
/// ```
/// → 3F2A9C1B GET https://api.example.com/v1/people/42
/// ← 3F2A9C1B 200 OK GET https://api.example.com/v1/people/42 · 213 bytes · 41.7 ms
/// ✕ 8B07D2E4 cannotConnect GET https://api.example.com/v1/people/43 · 2.1 ms — could not connect to the server
/// ```
///
/// Each line starts with the first eight hex digits of the request's ``HTTPRequest/id`` so that a request and
/// its result can be matched among concurrent loads. Lines go to a sink, `print` by default; pass your own
/// to feed a logging system. Everything written goes through a ``Redaction``: the URL's query items, the error
/// message, and header fields, which are written only when asked for.
///
/// ```swift
/// let chain = PrintLoader(redaction: .standard.adding("X-Session"), includesHeaders: true) --> URLSessionLoader()
/// ```
// Safety: configuration is immutable (`let`); mutable state, if any, is behind one lock (`Locked`).
public final class PrintLoader: HTTPLoader, @unchecked Sendable {
    /// Which values are hidden: in URLs, header fields and error messages.
    public let redaction: Redaction
    /// Whether lines include header fields.
    public let includesHeaders: Bool
    private let sink: @Sendable (String) -> Void

    /// - Parameters:
    ///   - redaction: Which values to hide; ``Redaction/standard`` by default.
    ///   - includesHeaders: Whether to write header fields too.
    ///   - sink: Receives each line; prints it by default.
    public init(
        redaction: Redaction = .standard,
        includesHeaders: Bool = false,
        sink: @escaping @Sendable (String) -> Void = { print($0) }
    ) {
        self.redaction = redaction
        self.includesHeaders = includesHeaders
        self.sink = sink
    }

    /// Which values are hidden (`standard`, `standard + x-session`, …), and whether lines include header fields.
    public override var configurationDescription: String {
        "redaction: \(redaction.summary)" + (includesHeaders ? ", includesHeaders: true" : "")
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        let tag = String(request.id.uuidString.prefix(8))
        let target = "\(request.method) \(request.displayURL(redaction: redaction))"
        sink("→ \(tag) \(target)\(headerSuffix(request.headersIncludingBody))")
        let start = ContinuousClock.now
        let result = await loadNext(request)
        let elapsed = Self.format(ContinuousClock.now - start)
        switch result {
        case .success(let response):
            sink(
                "← \(tag) \(response.status) \(target) · \(response.body.count) bytes · \(elapsed)"
                    + headerSuffix(response.headers)
            )
        case .failure(let error):
            let status = error.response.map { " (HTTP \($0.status))" } ?? ""
            let cause = error.underlyingErrorDescription.map { " (underlying: \(redaction.display(text: $0)))" } ?? ""
            let message = redaction.display(text: error.message)
            sink("✕ \(tag) \(error.code) \(target) · \(elapsed) — \(message)\(status)\(cause)")
        }
        return result
    }

    private func headerSuffix(_ headers: HTTPHeaders) -> String {
        guard includesHeaders, !headers.isEmpty else { return "" }
        let fields = headers.map { "\($0.name): \(redaction.display($0.value, for: $0.name))" }
        return " [" + fields.joined(separator: "; ") + "]"
    }

    static func format(_ duration: Duration) -> String {
        let milliseconds = duration.seconds * 1_000
        return milliseconds < 1_000
            ? String(format: "%.1f ms", milliseconds) : String(format: "%.2f s", milliseconds / 1_000)
    }
}

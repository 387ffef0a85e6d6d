import Foundation

/// A loader that writes one line per request and one per result, with secrets redacted.
///
/// ```
/// → #17 GET https://api.example.com/v1/people/42
/// ← #17 200 OK GET https://api.example.com/v1/people/42 · 213 bytes · 41.7 ms (head 12.0 ms)
/// → #18 GET https://api.example.com/v1/people/43
/// ↻ #18 503 Service Unavailable GET https://api.example.com/v1/people/43 · attempt 1 · retry in 200.0 ms
/// ✕ #18 cannotConnect GET https://api.example.com/v1/people/43 · 260.3 ms (attempt 2) — could not connect to the server
/// → #19 GET https://api.example.com/v1/avatars/42
/// ↪ #19 302 Found GET https://api.example.com/v1/avatars/42 → GET https://cdn.example.com/a/42.png
/// ← #19 200 OK GET https://api.example.com/v1/avatars/42 · 5120 bytes · 88.1 ms (head 20.3 ms)
/// ```
///
/// Each line starts with the load's ``LoadID`` (stamped here when no loader above did), so that a request and its
/// result can be matched among concurrent loads — also loads of the same request value, which share an
/// ``HTTPRequest/id``. A result line shows the time since the request passed this loader and, in parentheses, what
/// the terminal measured (``HTTPResponse/metrics``): the attempt number after a retry and the time to the response
/// head where the transport tells. Above ``Retry``, a `↻` line reports each retry scheduled below; below it, each
/// attempt gets its own lines. Above ``FollowRedirects``, a `↪` line reports each redirect followed below (the
/// redirect, and the request sent next); below it, each hop gets its own lines.
///
/// Lines go to a sink, `print` by default; pass your own to feed a logging system. Everything written goes through
/// a ``Redaction``: the URL's query items, the error message, and header fields, which are written only when asked
/// for.
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
    /// Writes the `↻` and `↪` lines for the retries scheduled and the redirects followed below.
    private let eventLines: EventLines

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
        self.eventLines = EventLines(redaction: redaction, sink: sink)
    }

    /// Which values are hidden (`standard`, `standard + x-session`, …), and whether lines include header fields.
    public override var configurationDescription: String {
        "redaction: \(redaction.summary)" + (includesHeaders ? ", includesHeaders: true" : "")
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        var request = request
        let tag = "\(request.observe(with: eventLines))"
        let target = "\(request.method) \(request.displayURL(redaction: redaction))"
        let attempt = request.attemptNumber > 1 ? " (attempt \(request.attemptNumber))" : ""
        sink("→ \(tag) \(target)\(attempt)\(headerSuffix(request.headersIncludingBody))")
        let start = ContinuousClock.now
        let result = await loadNext(request)
        let elapsed = HTTPMetrics.format(ContinuousClock.now - start)
        switch result {
        case .success(let response):
            let measured = Self.measurements(of: response.request, response.metrics)
            sink(
                "← \(tag) \(response.status) \(target) · \(response.body.count) bytes · \(elapsed)\(measured)"
                    + headerSuffix(response.headers)
            )
        case .failure(let error):
            let measured = Self.measurements(of: error.request, error.metrics ?? error.response?.metrics)
            let status = error.response.map { " (HTTP \($0.status))" } ?? ""
            let cause = error.underlyingErrorDescription.map { " (underlying: \(redaction.display(text: $0)))" } ?? ""
            let message = redaction.display(text: error.message)
            sink("✕ \(tag) \(error.code) \(target) · \(elapsed)\(measured) — \(message)\(status)\(cause)")
        }
        return result
    }

    /// `" (attempt 2, head 12.0 ms)"`: the attempt after a retry, and the time to the response head where the
    /// terminal measured it; empty when there is neither.
    static func measurements(of request: HTTPRequest, _ metrics: HTTPMetrics?) -> String {
        var parts: [String] = []
        if request.attemptNumber > 1 { parts.append("attempt \(request.attemptNumber)") }
        if let head = metrics?.timeToResponseHead { parts.append("head \(HTTPMetrics.format(head))") }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
    }

    private func headerSuffix(_ headers: HTTPHeaders) -> String {
        guard includesHeaders, !headers.isEmpty else { return "" }
        let fields = headers.map { "\($0.name): \(redaction.display($0.value, for: $0.name))" }
        return " [" + fields.joined(separator: "; ") + "]"
    }

    /// The observer a ``PrintLoader`` installs for its loads: writes a line for each retry scheduled and each
    /// redirect followed below.
    private struct EventLines: HTTPEventObserver {
        let redaction: Redaction
        let sink: @Sendable (String) -> Void

        func handle(_ event: HTTPEvent) {
            guard let result = event.result else { return }
            let target = "\(event.request.method) \(event.request.displayURL(redaction: redaction))"
            switch event.kind {
            case .retryScheduled:
                let outcome =
                    switch result {
                    case .success(let response): "\(response.status)"
                    case .failure(let error): "\(error.code)"
                    }
                let delay = event.delay.map { " · retry in \(HTTPMetrics.format($0))" } ?? ""
                sink("↻ \(event.loadID) \(outcome) \(target) · attempt \(event.request.attemptNumber)\(delay)")
            case .redirectFollowed:
                guard let redirect = result.response else { return }
                let from = "\(redirect.request.method) \(redirect.request.displayURL(redaction: redaction))"
                sink("↪ \(event.loadID) \(redirect.status) \(from) → \(target)")
            default:
                return
            }
        }
    }
}

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
/// → #20 GET https://api.example.com/v1/export
/// ← #20 200 OK GET https://api.example.com/v1/export · streaming · 12.4 ms (head 12.1 ms)
/// ⇣ #20 200 OK GET https://api.example.com/v1/export · streamed 1.2 MB in 340.2 ms
/// → #21 GET https://api.example.com/v1/videos/42.mp4
/// ← #21 200 OK GET https://api.example.com/v1/videos/42.mp4 · saved 5.0 MB to /tmp/videos/42.mp4 · 1.31 s
/// ```
///
/// A streamed body (``HTTPLoader/stream(_:)``) is still arriving when its head passes by, so its result line says
/// `streaming`, and a `⇣` line reports its size when it ends — complete, cut off (a `✕` line with the error) or
/// cancelled (by its reader, a retry, a reset). (To see the end, the loader passes the body on through a stream of its own, with the same
/// backpressure.) A download (``HTTPLoader/download(_:to:resumeAttempts:)``) reports the size of the file and where
/// it goes.
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
        logOutcome(of: result, tag: tag, target: target, start: start)
        return result
    }

    /// Logs how a load ended; for a streamed response, also how its stream ends.
    @inline(never)  // one copy, not one in each of load(_:)'s async pieces
    private func logOutcome(of result: HTTPResult, tag: String, target: String, start: ContinuousClock.Instant) {
        let elapsed = HTTPMetrics.format(ContinuousClock.now - start)
        switch result {
        case .success(let response):
            let measured = Self.measurements(of: response.request, response.metrics)
            let size: String
            if response.bodyStream != nil {
                size = "streaming"
            } else if let file = response.fileURL {
                size =
                    "saved \(Self.savedSize(of: file, for: response)) to \(redaction.display(text: Self.path(of: file)))"
            } else {
                size = "\(response.body.count) bytes"
            }
            sink(
                "← \(tag) \(response.status) \(target) · \(size) · \(elapsed)\(measured)\(headerSuffix(response.headers))"
            )
            guard let body = response.bodyStream else { return }
            let head = "\(tag) \(response.status) \(target)"
            body.whenEnded { [sink, redaction] received, failure in
                let size = Self.format(byteCount: received)
                let took = HTTPMetrics.format(ContinuousClock.now - start)
                switch failure {
                case nil:
                    sink("⇣ \(head) · streamed \(size) in \(took)")
                case let error? where error.code == .cancelled:
                    sink("⇣ \(head) · stream cancelled after \(size) in \(took)")
                case let error?:
                    let cause = error.underlyingErrorDescription.map { " (underlying: \(redaction.display(text: $0)))" }
                    sink(
                        "✕ \(tag) \(error.code) \(target) · streamed \(size) in \(took), then failed — "
                            + "\(redaction.display(text: error.message))\(cause ?? "")")
                }
            }
        case .failure(let error):
            let measured = Self.measurements(of: error.request, error.metrics ?? error.response?.metrics)
            let status = error.response.map { " (HTTP \($0.status))" } ?? ""
            let cause = error.underlyingErrorDescription.map { " (underlying: \(redaction.display(text: $0)))" } ?? ""
            let message = redaction.display(text: error.message)
            sink("✕ \(tag) \(error.code) \(target) · \(elapsed)\(measured) — \(message)\(status)\(cause)")
        }
    }

    /// `"213 bytes"` below a kilobyte; `"12.0 KB"`, `"1.2 MB"`, `"2.50 GB"` (decimal units) above.
    static func format(byteCount: Int64) -> String {
        let bytes = Double(byteCount)
        switch byteCount {
        case ..<1_000: return "\(byteCount) bytes"
        case ..<1_000_000: return String(format: "%.1f KB", bytes / 1e3)
        case ..<1_000_000_000: return String(format: "%.1f MB", bytes / 1e6)
        default: return String(format: "%.2f GB", bytes / 1e9)
        }
    }

    /// The size of the file a download wrote, `"5.0 MB"`; with `" (resumed at 2.0 MB)"` for a `206` appended to the
    /// bytes the file had.
    private static func savedSize(of file: URL, for response: HTTPResponse) -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        guard response.status == .partialContent, case .file(_, let offset) = response.request.responseDelivery,
            offset > 0
        else { return format(byteCount: size) }
        return "\(format(byteCount: size)) (resumed at \(format(byteCount: offset)))"
    }

    /// Where a download goes: the destination ``HTTPLoader/download(_:to:resumeAttempts:)`` moves its temporary file
    /// to once the body is complete (`.<name>.<UUID>.download` beside it), or the file itself.
    private static func path(of file: URL) -> String {
        let name = file.lastPathComponent
        guard name.hasPrefix("."), name.hasSuffix(".download") else { return file.path }
        let inner = name.dropFirst().dropLast(".download".count)
        guard let dot = inner.lastIndex(of: "."), UUID(uuidString: String(inner[inner.index(after: dot)...])) != nil,
            dot > inner.startIndex
        else { return file.path }
        return file.deletingLastPathComponent().appending(path: String(inner[..<dot])).path
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

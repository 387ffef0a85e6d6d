import HTTP
import InMemoryTracing
import Logging
import Tracing

/// Prints a numbered section heading, as the product's demo does.
func section(_ number: Int, _ title: String) {
    print("\n\(number). \(title)")
    print(String(repeating: "─", count: title.count + 3))
}

/// Prints a chain as it describes itself (`print(chain)`), indented under the section.
func show(chain: HTTPLoader) {
    print(chain.description.split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))
}

/// The header field name httpbin echoes for `name`: each word capitalised (`in-memory-span-id` → `In-Memory-Span-Id`).
func headerName(_ name: String) -> String {
    name.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined(separator: "-")
}

/// Prints each log entry on one line under the section: `[level] message key=value …`, the metadata sorted by key.
struct DemoLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }
        let text = fields.keys.sorted().map { "\($0)=\(fields[$0]!)" }.joined(separator: " ")
        print("   [\(event.level)] \(event.message) \(text)")
    }
}

/// The finished spans as an indented tree, children under their parent in start order: the caller's span, the load's
/// span (``TraceLoads``) under it, the attempts' spans (``TraceAttempts``) under that.
func spanTree(_ spans: [FinishedInMemorySpan]) -> [String] {
    let ids = Set(spans.map(\.spanID))
    let children = Dictionary(grouping: spans) { span in span.parentSpanID.flatMap { ids.contains($0) ? $0 : nil } }
    let roles = ["the caller's span", "the load's span (TraceLoads)", "an attempt's span (TraceAttempts)"]
    func lines(under parent: String?, depth: Int, prefix: String) -> [String] {
        let level = (children[parent] ?? []).sorted {
            $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch
        }
        return level.enumerated().flatMap { index, span in
            let isLast = index == level.count - 1
            let branch = parent == nil ? "" : (isLast ? "└─ " : "├─ ")
            let below = parent == nil ? "" : (isLast ? "   " : "│  ")
            let role = depth < roles.count ? roles[depth] : "a span"
            return [prefix + branch + describe(span, role: role)]
                + lines(under: span.spanID, depth: depth + 1, prefix: prefix + below)
        }
    }
    return lines(under: nil, depth: 0, prefix: "")
}

/// One span on one line: `GET — an attempt's span (TraceAttempts): status 503, error.type 503, resend_count 2, 3 ms`.
private func describe(_ span: FinishedInMemorySpan, role: String) -> String {
    var parts: [String] = []
    if let status = text(span, "http.response.status_code") { parts.append("status \(status)") }
    if let error = text(span, "error.type") { parts.append("error.type \(error)") }
    if let resends = text(span, "http.request.resend_count") { parts.append("resend_count \(resends)") }
    let nanoseconds = span.endInstant.nanosecondsSinceEpoch - span.startInstant.nanosecondsSinceEpoch
    parts.append("\(Int((Double(nanoseconds) / 1_000_000).rounded())) ms")
    return "\(span.operationName) — \(role): " + parts.joined(separator: ", ")
}

/// A span attribute's value as text, or `nil` when the span has none.
private func text(_ span: FinishedInMemorySpan, _ name: String) -> String? {
    switch span.attributes.get(name) {
    case nil: nil
    case .string(let text): text
    case .int64(let number): "\(number)"
    case let value?: "\(value)"
    }
}

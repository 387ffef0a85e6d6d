import HTTP

/// What `Cache` did for a response, read from the member it adds to the response's `Cache-Status` header
/// field (RFC 9211): the last member named `Cache`, as a cache nearer the client appends its member after those of
/// the caches further away.
struct CacheStatus: Equatable {
    /// `hit`, `revalidated`, `stale` or `miss`.
    var result: String
    /// The `fwd` parameter, when the request went on: one of RFC 9211's reasons, or `other`.
    var forwardReason: String?

    /// RFC 9211's reasons for forwarding: the only values a dimension may take, whatever a server sends.
    private static let reasons: Set<String> = [
        "bypass", "method", "uri-miss", "vary-miss", "miss", "request", "stale", "partial",
    ]

    /// The cache's status of `response`, or `nil` when no `Cache` answered it.
    init?(_ response: HTTPResponse) {
        let values = response.headers.values(for: "Cache-Status")
        guard !values.isEmpty else { return nil }
        let members = values.joined(separator: ",").split(separator: ",")
        guard
            let member = members.last(where: { member in
                member.split(separator: ";", maxSplits: 1).first?.trimmingSpaces == "Cache"
            })
        else { return nil }
        var isHit = false
        var forward: String?
        var forwardStatus: String?
        var detail: String?
        for parameter in member.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            let name = pair[0].trimmingSpaces
            let value = pair.count > 1 ? pair[1].trimmingSpaces : ""
            switch name {
            case "hit": isHit = true
            case "fwd": forward = value
            case "fwd-status": forwardStatus = value
            case "detail": detail = value
            default: break
            }
        }
        if detail == "stale-if-error" {
            result = "stale"
        } else if isHit {
            result = "hit"
        } else if forward == "stale", forwardStatus == "304" {
            result = "revalidated"
        } else {
            result = "miss"
        }
        forwardReason = forward.map { Self.reasons.contains($0) ? $0 : "other" }
    }
}

extension Substring {
    /// Without the spaces and tabs around it.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

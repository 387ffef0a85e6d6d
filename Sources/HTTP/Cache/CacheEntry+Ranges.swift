import Foundation

/// Partial content (RFC 9111 §3.3–3.4): a `206` to a request for one byte range is stored as a *partial* entry —
/// its `Content-Range` says which bytes it holds, of how many — when it has a strong `ETag`; partial entries of the
/// same representation (the same strong `ETag` and length, §3.4) are combined as they arrive, and once they hold
/// every byte the entry is a whole `200`. A request for a range is answered from a whole entry, or from a partial one
/// that holds the bytes it asks for; a request without `Range` never is answered from a partial one (§3.3).
extension CacheEntry {
    /// Whether this is a partial entry (a stored `206`).
    var isPartial: Bool { status == .partialContent }

    /// A partial entry's range and the representation's complete length; `nil` for a whole entry, or a `206`
    /// whose `Content-Range` and body do not agree.
    var storedRange: (range: ByteRange, length: Int)? {
        guard isPartial, let field = headers.values(for: "Content-Range").first,
            let content = ByteRange.contentRange(field), content.range.count == body.count
        else { return nil }
        return content
    }

    /// The `ETag` when it is a strong one (RFC 9110 §8.8.1): partial content is combined only under one.
    var strongEntityTag: String? {
        guard let tag = metadata.entityTag?.trimmingCharacters(in: .whitespaces), tag.hasPrefix("\"") else {
            return nil
        }
        return tag
    }

    /// Whether a `206` to a request for a range may be stored: one range of a known length, its body that range,
    /// and a strong `ETag` to combine it by.
    var isStorablePartial: Bool { storedRange != nil && strongEntityTag != nil }

    /// The range of this entry's representation `requested` asks for, when the entry holds every byte of it.
    func range(answering requested: ByteRange.Requested) -> ByteRange? {
        if isPartial {
            guard let stored = storedRange, let range = requested.resolved(length: stored.length),
                range.first >= stored.range.first, range.last <= stored.range.last
            else { return nil }
            return range
        }
        return requested.resolved(length: body.count)
    }

    /// The `206` answering `request` with `range` of this entry (which holds it), with its current `Age` and a
    /// `Cache-Status` member.
    func partialResponse(to request: HTTPRequest, range: ByteRange, age: Double, cacheStatus: String) -> HTTPResponse {
        var response = self.response(to: request, age: age, cacheStatus: cacheStatus)
        let offset = storedRange?.range.first ?? 0
        let length = storedRange?.length ?? body.count
        let start = body.startIndex + (range.first - offset)
        response.status = .partialContent
        response.body = Data(body[start..<(start + range.count)])
        response.headers["Content-Range"] = "bytes \(range.first)-\(range.last)/\(length)"
        response.headers["Content-Length"] = String(range.count)
        return response
    }

    /// The variant that answers a request for `requested` (RFC 9111 §4.1, §3.3): the whole one `request` selects,
    /// else a partial one whose `Vary` fields it matches that holds the range, the most recently stored first.
    static func select(
        from variants: [CacheEntry], for request: HTTPRequest, asking requested: ByteRange.Requested
    ) -> (entry: CacheEntry, range: ByteRange)? {
        if let whole = select(from: variants, for: request) {
            return whole.range(answering: requested).map { (whole, $0) }
        }
        for variant in variants where variant.isPartial && variant.matchesVary(of: request) {
            if let range = variant.range(answering: requested) { return (variant, range) }
        }
        return nil
    }

    /// `newer` and `older`, partial entries of one representation (the same strong `ETag` and length, RFC 9111
    /// §3.4) whose ranges overlap or touch, as one entry: the header fields and dates of `newer`, the bytes of both
    /// (`newer`'s where they overlap), a whole `200` once it holds every byte. `nil` when they cannot be combined.
    static func combining(_ newer: CacheEntry, with older: CacheEntry) -> CacheEntry? {
        guard let new = newer.storedRange, let old = older.storedRange, new.length == old.length,
            let tag = newer.strongEntityTag, tag == older.strongEntityTag,
            new.range.first <= old.range.last + 1, old.range.first <= new.range.last + 1
        else { return nil }
        let first = min(new.range.first, old.range.first)
        let last = max(new.range.last, old.range.last)
        var body = Data(count: last - first + 1)
        body.replaceSubrange((old.range.first - first)...(old.range.last - first), with: older.body)
        body.replaceSubrange((new.range.first - first)...(new.range.last - first), with: newer.body)
        let isWhole = first == 0 && last == new.length - 1
        var headers = HTTPHeaders(
            newer.headers.filter { !$0.hasName("Content-Range") && !$0.hasName("Content-Length") })
        if !isWhole { headers.add("bytes \(first)-\(last)/\(new.length)", for: "Content-Range") }
        headers.add(String(body.count), for: "Content-Length")
        return CacheEntry(
            status: isWhole ? .ok : .partialContent, headers: headers, body: body, url: newer.url,
            requestDate: newer.requestDate, responseDate: newer.responseDate,
            varyingRequestHeaders: newer.varyingRequestHeaders)
    }
}

import Foundation

/// The key a ``Cache`` stores a response under: the method and the absolute URL (RFC 9111 §2), as
/// `GET https://api.example.com/v1/people/42?fields=name`.
///
/// Scheme and host are lowercased, a default port is left out and an empty path is `/`, so that requests for
/// the same resource spelled differently share an entry; the path and query are kept exactly as sent. The
/// fragment is never sent, so it is not part of the key.
enum CacheKey {
    /// The key of `request` for `method`, or `nil` when it has no usable absolute URL (a relative request, a
    /// scheme other than `http` or `https`, a URL that could not be read).
    static func make(for request: HTTPRequest, method: HTTPMethod = .get) -> String? {
        guard request.unusableURL == nil, let host = request.host else { return nil }
        let scheme: String
        if HTTPHeaders.namesMatch(request.scheme, "https") {
            scheme = "https"
        } else if HTTPHeaders.namesMatch(request.scheme, "http") {
            scheme = "http"
        } else {
            return nil
        }
        var isLowercaseASCII = true
        var isASCII = true
        for byte in host.utf8 {
            if byte >= 0x80 {
                isASCII = false
                break
            }
            if byte >= 0x41 && byte <= 0x5A { isLowercaseASCII = false }
        }
        let keyHost =
            isLowercaseASCII && isASCII
            ? host : isASCII ? host.lowercased() : Origin(scheme: scheme, host: host).host  // Punycode, as sent
        var port = ""
        if let number = request.port, number != Origin.defaultPort(forScheme: scheme) { port = ":" + String(number) }
        let path = request.percentEncodedPath
        let query = request.percentEncodedQuery
        return concatenate(
            method.rawValue, " ", scheme, "://", keyHost, port, path.isEmpty ? "/" : path, query == nil ? "" : "?",
            query ?? "")
    }

    /// The strings one after another, built in one allocation: the key is made on every load, hits included.
    private static func concatenate(
        _ a: String, _ b: String, _ c: String, _ d: String, _ e: String, _ f: String, _ g: String, _ h: String,
        _ i: String
    ) -> String {
        // One `+=` per part: one sum of nine terms is slow to type-check.
        var count: Int = a.utf8.count
        count += b.utf8.count
        count += c.utf8.count
        count += d.utf8.count
        count += e.utf8.count
        count += f.utf8.count
        count += g.utf8.count
        count += h.utf8.count
        count += i.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var offset = 0
            offset = copy(a, into: buffer, at: offset)
            offset = copy(b, into: buffer, at: offset)
            offset = copy(c, into: buffer, at: offset)
            offset = copy(d, into: buffer, at: offset)
            offset = copy(e, into: buffer, at: offset)
            offset = copy(f, into: buffer, at: offset)
            offset = copy(g, into: buffer, at: offset)
            offset = copy(h, into: buffer, at: offset)
            return copy(i, into: buffer, at: offset)
        }
    }

    /// Copies `part`'s UTF-8 into `buffer` from `offset`, as far as it fits, and returns where it ended.
    private static func copy(_ part: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        var part = part
        return part.withUTF8 { bytes in
            let count = min(bytes.count, buffer.count - offset)
            guard count > 0, let source = bytes.baseAddress, let target = buffer.baseAddress else { return offset }
            (target + offset).initialize(from: source, count: count)
            return offset + count
        }
    }

    /// The `GET` keys of the URIs a response's `Location` and `Content-Location` name, when they are on the
    /// request's origin (RFC 9111 §4.4: a cache must not invalidate other origins' responses on one's say-so).
    static func locationKeys(of response: HTTPResponse, for request: HTTPRequest) -> [String] {
        guard let origin = request.origin, let base = request.url else { return [] }
        var keys: [String] = []
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers.values(for: name).first,
                let url = URL(string: value.trimmingCharacters(in: .whitespaces), relativeTo: base)?.absoluteURL
            else { continue }
            let target = HTTPRequest(url: url)
            if target.origin == origin, let key = make(for: target) { keys.append(key) }
        }
        return keys
    }
}

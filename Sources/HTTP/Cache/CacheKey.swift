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
        var key = method.rawValue
        key += " "
        key += scheme
        key += "://"
        if host.utf8.allSatisfy({ $0 < 0x80 && !($0 >= 0x41 && $0 <= 0x5A) }) {
            key += host
        } else if host.utf8.allSatisfy({ $0 < 0x80 }) {
            key += host.lowercased()
        } else {
            key += Origin(scheme: scheme, host: host).host  // the Punycode form, as sent
        }
        if let port = request.port, port != Origin.defaultPort(forScheme: scheme) {
            key += ":"
            key += String(port)
        }
        let path = request.percentEncodedPath
        key += path.isEmpty ? "/" : path
        if let query = request.percentEncodedQuery {
            key += "?"
            key += query
        }
        return key
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

import Foundation
public import HTTP

/// The header fields of the canned person when a cache may keep it: fresh for a day, with a validator and the
/// fields a real server sends.
let cacheableHeaders: HTTPHeaders = [
    "Content-Type": "application/json", "Cache-Control": "max-age=86400", "ETag": "\"person-42\"",
    "Last-Modified": "Mon, 15 Jan 2024 09:30:00 GMT", "Content-Length": "213",
]

extension InProcessSubject {
    /// A `Cache` in front of ``CannedResponse``: the first load stores the response, every later one is a hit
    /// (so run it once before timing it).
    public static func cacheHit(store: any CacheStore = MemoryCacheStore()) -> InProcessSubject {
        .loaders(Cache(store: store) --> CannedResponse(headers: cacheableHeaders), request: makeAbsoluteRequest())
    }

    /// A `Cache` in front of ``CannedResponse`` whose every load is a reload: the request goes to the terminal and
    /// its response is stored again.
    public static func cacheReload() -> InProcessSubject {
        var request = makeAbsoluteRequest()
        request.cachePolicy = .reload
        return .loaders(Cache() --> CannedResponse(headers: cacheableHeaders), request: request)
    }

    /// ``CannedResponse`` with the cacheable header fields, alone: the baseline of ``cacheReload()``.
    public static func cacheableTerminal() -> InProcessSubject {
        .loaders(CannedResponse(headers: cacheableHeaders), request: makeAbsoluteRequest())
    }
}

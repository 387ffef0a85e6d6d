/// How a ``Cache`` treats one request; see ``HTTPRequest/cachePolicy``.
///
/// ```swift
/// var request = HTTPRequest(path: "/people/42")
/// request.cachePolicy = .reload  // ask the server, and store what it answers
/// ```
///
/// A request's own `Cache-Control` directives (`no-cache`, `no-store`, `max-age`, `max-stale`, `min-fresh`,
/// `only-if-cached`) apply as well, with either policy.
@frozen
public enum CachePolicy: HTTPRequestOption, Sendable, Hashable {
    /// RFC 9111's rules (the default): a fresh stored response answers the request; a stale one is validated
    /// with the server, or served while it is revalidated when `stale-while-revalidate` allows; the response is
    /// stored when it may be.
    case useCache
    /// Skip stored responses: the request goes to the server unconditionally, and its response is stored when it
    /// may be (a pull to refresh).
    case reload
    /// Never go to the server: answer with the stored response, fresh or stale (unless it must be revalidated
    /// once stale: `must-revalidate`, `no-cache`), or with a `504 Gateway Timeout` made by the cache when there
    /// is none (RFC 9111 §5.2.1.7). For showing what is there while offline.
    case onlyIfCached
    /// RFC 9111's rules for reading, but this request's response is not stored (as with a request's `no-store`).
    case doNotStore

    public static let defaultOptionValue: CachePolicy = .useCache
}

extension HTTPRequest {
    /// How a ``Cache`` treats this request; ``CachePolicy/useCache`` by default.
    public var cachePolicy: CachePolicy {
        get { self[option: CachePolicy.self] }
        set { self[option: CachePolicy.self] = newValue }
    }
}

/// Where a ``Cache`` keeps its responses: ``MemoryCacheStore``, ``DiskCacheStore``, or one of your own.
///
/// A store maps keys (a method and an absolute URL, as the cache makes them) to the *variants* stored for that URL
/// — one ``CacheEntry`` for each set of request header field values a response's `Vary` selects it by (RFC 9111
/// §4.1), the most recently stored first — and decides what to keep within its limits. It never interprets an
/// entry: freshness, validation, `Vary` and which variants to keep are the cache's business. Every operation must
/// be safe to call concurrently, must not trap whatever it finds in its storage, and may forget entries at any
/// time — an entry it cannot read back intact is a miss, never a wrong answer.
///
/// ```swift
/// let store = DiskCacheStore(directory: cachesDirectory.appending(path: "http"), maximumSize: 50 << 20)
/// let chain = ApplyEnvironment(environment: .production) --> Cache(store: store) --> URLSessionLoader()
/// ```
///
/// The operations are `async` so that a store can do its I/O away from Swift's cooperative threads; the cache
/// awaits each one before it answers the load that caused it, so a load that follows sees what the one before
/// stored.
public protocol CacheStore: Sendable {
    /// The variants stored under `key`, the most recently stored first; empty when there are none. A store that
    /// keeps entries by recency counts this as a use.
    func variants(for key: String) async -> [CacheEntry]

    /// Stores `variants` under `key`, the most recently stored first, replacing what was there, and makes room for
    /// them by its own rules. A store that cannot keep them all (larger than its limit, say) keeps the longest
    /// prefix it can — none at all leaves nothing under `key`. An empty list removes `key`.
    func store(_ variants: [CacheEntry], for key: String) async

    /// Removes every variant stored under `key`, if any.
    func removeEntry(for key: String) async

    /// Removes every entry.
    func removeAll() async
}

extension CacheStore {
    /// The most recently stored variant under `key`, or `nil`.
    public func entry(for key: String) async -> CacheEntry? {
        await variants(for: key).first
    }

    /// Stores `entry` as the only variant under `key`.
    public func store(_ entry: CacheEntry, for key: String) async {
        await store([entry], for: key)
    }
}

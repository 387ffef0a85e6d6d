/// Where a ``Cache`` keeps its responses: ``MemoryCacheStore``, ``DiskCacheStore``, or one of your own.
///
/// A store maps keys (a method and an absolute URL, as the cache makes them) to ``CacheEntry`` values, and decides
/// what to keep within its limits. It never interprets an entry: freshness, validation and `Vary` are the cache's
/// business. Every operation must be safe to call concurrently, must not trap whatever it finds in its storage,
/// and may forget entries at any time — an entry it cannot read back intact is a miss, never a wrong answer.
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
    /// The entry stored under `key`, or `nil`. A store that keeps entries by recency counts this as a use.
    func entry(for key: String) async -> CacheEntry?

    /// Stores `entry` under `key`, replacing what was there, and makes room for it by its own rules. An entry the
    /// store cannot keep (larger than its limit, say) leaves no entry under `key`.
    func store(_ entry: CacheEntry, for key: String) async

    /// Removes the entry stored under `key`, if any.
    func removeEntry(for key: String) async

    /// Removes every entry.
    func removeAll() async
}

/// A ``CacheStore`` in memory, up to a size limit, evicting the least recently used entries first.
///
/// ```swift
/// let cache = Cache(store: MemoryCacheStore(maximumSize: 20 << 20))  // 20 MiB
/// ```
///
/// Entries are counted by ``CacheEntry/size``, the variants of a URL together. The variants under one key may take at
/// most a quarter of the limit, so that one large response cannot empty the store: beyond it, the least recently
/// stored variants are not kept. The store lives as long as the object: entries do not survive a restart
/// (``DiskCacheStore`` does that).
public final class MemoryCacheStore: CacheStore {
    /// The most bytes the entries may occupy together.
    public let maximumSize: Int

    private let entries: Locked<LRUList<String, [CacheEntry]>>

    /// Creates an empty store.
    ///
    /// - Parameter maximumSize: The most bytes the entries may occupy together; 10 MiB by default.
    public init(maximumSize: Int = 10 << 20) {
        self.maximumSize = max(0, maximumSize)
        self.entries = Locked(LRUList())
    }

    /// The number of keys held (each with one or more variants).
    public var count: Int { entries.withLock { $0.count } }

    /// The bytes the entries occupy together, by ``CacheEntry/size``.
    public var size: Int { entries.withLock { $0.totalCost } }

    public func variants(for key: String) async -> [CacheEntry] {
        entries.withLock { $0.use(key) } ?? []
    }

    public func store(_ variants: [CacheEntry], for key: String) async {
        var kept = 0
        var size = 0
        for variant in variants {
            guard size + variant.size <= maximumSize / 4 else { break }
            size += variant.size
            kept += 1
        }
        let stored = Array(variants.prefix(kept))
        // Released after the lock: the last reference to a large body is dropped outside it.
        var evicted: [[CacheEntry]] = []
        entries.withLock { entries in
            guard !stored.isEmpty else {
                if let previous = entries.remove(key) { evicted.append(previous) }
                return
            }
            if let previous = entries.set(stored, cost: size, for: key) { evicted.append(previous) }
            while entries.totalCost > maximumSize, let oldest = entries.removeOldest() { evicted.append(oldest.value) }
        }
        _ = evicted
    }

    public func removeEntry(for key: String) async {
        let removed = entries.withLock { $0.remove(key) }
        _ = removed
    }

    public func removeAll() async {
        var removed = LRUList<String, [CacheEntry]>()
        entries.withLock { swap(&$0, &removed) }
        _ = removed
    }

    /// The keys from the least to the most recently used; for tests.
    package var keysFromLeastRecentlyUsed: [String] { entries.withLock { $0.keysFromOldest } }
}

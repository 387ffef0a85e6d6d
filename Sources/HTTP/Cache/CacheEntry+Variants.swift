extension CacheEntry {
    /// The most variants a ``Cache`` keeps for one URL; storing another leaves out the least recently stored.
    static let maximumVariants = 8

    /// The whole variant that answers `request` (RFC 9111 §4.1): of those whose `Vary` fields the request matches,
    /// the one with the most recent `Date`, and of equally recent ones the most recently stored (the first); `nil`
    /// when none matches. A partial one never answers for the whole (§3.3).
    static func select(from variants: [CacheEntry], for request: HTTPRequest) -> CacheEntry? {
        var selected: CacheEntry?
        for variant in variants where !variant.isPartial && variant.matchesVary(of: request) {
            if let current = selected, (variant.metadata.date ?? -.infinity) <= (current.metadata.date ?? -.infinity) {
                continue
            }
            selected = variant
        }
        return selected
    }

    /// `stored` with `entry`, the response to `request`, as the most recently stored variant. The variants `request`
    /// would have selected are replaced by it (it is the newer answer to the same request); the others are kept, up
    /// to ``maximumVariants`` in all, the least recently stored left out first.
    ///
    /// A partial `entry` (RFC 9111 §3.4) is combined with a partial variant of the same representation it overlaps
    /// or touches (``combining(_:with:)``); a whole variant of that representation makes it needless, and `stored`
    /// stays as it is.
    static func variants(_ stored: [CacheEntry], adding entry: CacheEntry, for request: HTTPRequest) -> [CacheEntry] {
        var entry = entry
        var others: [CacheEntry] = []
        for variant in stored {
            guard variant.matchesVary(of: request) else {
                others.append(variant)
                continue
            }
            guard entry.isPartial, let tag = entry.strongEntityTag, variant.strongEntityTag == tag else { continue }
            if !variant.isPartial { return stored }  // the whole representation is stored already
            if let combined = combining(entry, with: variant) {
                entry = combined
            } else if variant.storedRange?.length == entry.storedRange?.length {
                others.append(variant)  // another part of the same representation, apart from this one
            }
        }
        return [entry] + others.prefix(maximumVariants - 1)
    }
}

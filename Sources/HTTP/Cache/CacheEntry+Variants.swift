extension CacheEntry {
    /// The most variants a ``Cache`` keeps for one URL; storing another leaves out the least recently stored.
    static let maximumVariants = 8

    /// The variant that answers `request` (RFC 9111 §4.1): of those whose `Vary` fields the request matches, the
    /// one with the most recent `Date`, and of equally recent ones the most recently stored (the first); `nil` when
    /// none matches.
    static func select(from variants: [CacheEntry], for request: HTTPRequest) -> CacheEntry? {
        var selected: CacheEntry?
        for variant in variants where variant.matchesVary(of: request) {
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
    static func variants(_ stored: [CacheEntry], adding entry: CacheEntry, for request: HTTPRequest) -> [CacheEntry] {
        var variants = [entry]
        for variant in stored where variants.count < maximumVariants && !variant.matchesVary(of: request) {
            variants.append(variant)
        }
        return variants
    }
}

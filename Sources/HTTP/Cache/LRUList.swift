/// Values by key, in order of use, with a running total of their costs: what ``MemoryCacheStore`` and
/// ``DiskCacheStore`` evict from, least recently used first.
///
/// A doubly linked list threaded through an array of slots, with a dictionary from keys to slots: every
/// operation is one dictionary access and a few array writes, so a lookup that counts as a use costs no more than
/// a plain dictionary lookup does.
struct LRUList<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        var value: Value?
        var cost: Int
        /// The slot used just before this one (towards the least recent), or -1.
        var older: Int
        /// The slot used just after this one (towards the most recent), or -1.
        var newer: Int
    }

    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var slotOfKey: [Key: Int] = [:]
    private var newest = -1
    private var oldest = -1

    /// The sum of the costs of the values held.
    private(set) var totalCost = 0

    /// The number of values held.
    var count: Int { slotOfKey.count }

    init() {}

    /// The value for `key`, which becomes the most recently used; `nil` when there is none.
    mutating func use(_ key: Key) -> Value? {
        guard let slot = slotOfKey[key] else { return nil }
        moveToNewest(slot)
        return slots[slot].value
    }

    /// The value for `key`, without counting a use.
    func peek(_ key: Key) -> Value? {
        slotOfKey[key].flatMap { slots[$0].value }
    }

    /// Sets the value for `key`, which becomes the most recently used, and returns the value it replaces.
    @discardableResult
    mutating func set(_ value: Value, cost: Int, for key: Key) -> Value? {
        if let slot = slotOfKey[key] {
            let previous = slots[slot].value
            totalCost += cost - slots[slot].cost
            slots[slot].value = value
            slots[slot].cost = cost
            moveToNewest(slot)
            return previous
        }
        let slot: Int
        let new = Slot(key: key, value: value, cost: cost, older: newest, newer: -1)
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = new
        } else {
            slot = slots.count
            slots.append(new)
        }
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        slotOfKey[key] = slot
        totalCost += cost
        return nil
    }

    /// Removes the value for `key` and returns it.
    @discardableResult
    mutating func remove(_ key: Key) -> Value? {
        guard let slot = slotOfKey.removeValue(forKey: key) else { return nil }
        unlink(slot)
        let value = slots[slot].value
        totalCost -= slots[slot].cost
        slots[slot].value = nil
        freeSlots.append(slot)
        return value
    }

    /// Removes the least recently used value and returns its key and value; `nil` when empty.
    mutating func removeOldest() -> (key: Key, value: Value)? {
        guard oldest >= 0 else { return nil }
        let key = slots[oldest].key
        guard let value = remove(key) else { return nil }
        return (key, value)
    }

    /// Removes everything.
    mutating func removeAll() {
        self = LRUList()
    }

    /// The keys from the least to the most recently used.
    var keysFromOldest: [Key] {
        var keys: [Key] = []
        var slot = oldest
        while slot >= 0 {
            keys.append(slots[slot].key)
            slot = slots[slot].newer
        }
        return keys
    }

    private mutating func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let older = slots[slot].older
        let newer = slots[slot].newer
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        slots[slot].older = -1
        slots[slot].newer = -1
    }
}

import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct MemoryCacheStoreTests {
    func entry(bodySize: Int) -> CacheEntry {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        return CacheEntry(
            status: .ok, headers: [:], body: Data(count: bodySize), url: nil, requestDate: date, responseDate: date)
    }

    @Test func storesAndRemovesEntries() async {
        let store = MemoryCacheStore()
        await store.store(entry(bodySize: 3), for: "GET https://a/1")
        #expect(await store.entry(for: "GET https://a/1")?.body.count == 3)
        #expect(await store.entry(for: "GET https://a/2") == nil)
        await store.removeEntry(for: "GET https://a/1")
        #expect(await store.entry(for: "GET https://a/1") == nil)
        await store.store(entry(bodySize: 3), for: "x")
        await store.removeAll()
        #expect(store.count == 0 && store.size == 0)
    }

    @Test func evictsTheLeastRecentlyUsedBeyondItsLimit() async {
        let size = entry(bodySize: 1_000).size
        let store = MemoryCacheStore(maximumSize: size * 4)
        for key in ["a", "b", "c", "d"] { await store.store(entry(bodySize: 1_000), for: key) }
        _ = await store.entry(for: "a")  // a is now the most recently used
        await store.store(entry(bodySize: 1_000), for: "e")
        #expect(store.keysFromLeastRecentlyUsed == ["c", "d", "a", "e"])
        #expect(store.size <= store.maximumSize)
        #expect(await store.entry(for: "b") == nil)
    }

    @Test func anEntryLargerThanAQuarterOfTheLimitIsNotKeptAndRemovesTheOldOne() async {
        let store = MemoryCacheStore(maximumSize: 8_000)
        await store.store(entry(bodySize: 10), for: "a")
        await store.store(entry(bodySize: 3_000), for: "a")
        #expect(await store.entry(for: "a") == nil)
        #expect(store.count == 0)
    }
}

import Foundation
import Testing

@testable import HTTP

/// Partial content (RFC 9111 §3.3–3.4): this cache never stores a `206`, never answers a request with `Range` from
/// the store, and so never combines ranges; a `206` is never taken for a whole response.
@Suite(.noHang) struct CachePartialContentTests: CacheFixture {
    let clock = ManualDate()
    let mock = MockLoader()

    private func partial(_ range: String, body: String) {
        mock.then(
            status: .partialContent,
            headers: ["Cache-Control": "max-age=3600", "Content-Range": range, "ETag": "\"r\""],
            body: Data(body.utf8))
    }

    @Test func aPartialResponseToARangeRequestPassesUnstored() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        let ranged = cacheRequest(headers: ["Range": "bytes=-5"])
        partial("bytes 4-9/10", body: "01234")
        partial("bytes 4-9/10", body: "01234")
        let first = try await cache.load(ranged).get()
        #expect(first.status == .partialContent && first.text == "01234")
        #expect(try await cache.load(ranged).get().status == .partialContent)
        #expect(mock.receivedRequests.count == 2)
        #expect(store.count == 0)

        // A request without Range is never answered with the range.
        ok(["Cache-Control": "max-age=3600"], body: "0123456789")
        let whole = try await cache.load(cacheRequest()).get()
        #expect(whole.status == .ok && whole.text == "0123456789")
        #expect(mock.receivedRequests.count == 3)
    }

    @Test func aPartialResponseToARequestWithoutRangeIsNotStoredAsAWholeOne() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        partial("bytes 0-4/10", body: "01234")
        let odd = try await cache.load(cacheRequest()).get()
        #expect(odd.status == .partialContent)
        #expect(odd.cacheStatus == "Cache; fwd=uri-miss; fwd-status=206")
        #expect(store.count == 0)
        ok(["Cache-Control": "max-age=3600"], body: "0123456789")
        #expect(try await cache.load(cacheRequest()).get().text == "0123456789")
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func aPartialResponseLeavesTheStoredWholeResponseInPlace() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=10", "ETag": "\"w\""], body: "0123456789")
        _ = await cache.load(cacheRequest())
        clock.advance(by: 20)
        // The server answers the revalidation with a range: delivered, never stored over the whole response.
        partial("bytes 0-4/10", body: "01234")
        #expect(try await cache.load(cacheRequest()).get().status == .partialContent)
        var offline = cacheRequest()
        offline.cachePolicy = .onlyIfCached
        let stored = try await cache.load(offline).get()
        #expect(stored.status == .ok && stored.text == "0123456789")
    }

    @Test func aStoredWholeResponseDoesNotAnswerARangeRequest() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=3600"], body: "0123456789")
        _ = await cache.load(cacheRequest())
        partial("bytes 0-1/10", body: "01")
        let ranged = try await cache.load(cacheRequest(headers: ["Range": "bytes=0-1"])).get()
        #expect(ranged.status == .partialContent && ranged.text == "01")
        #expect(ranged.cacheStatus == nil)  // passed: the cache had no say
        #expect(try await cache.load(cacheRequest()).get().cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func mustUnderstandDoesNotMakeAPartialResponseStorable() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        mock.then(
            status: .partialContent, headers: ["Cache-Control": "max-age=3600, no-store, must-understand"],
            body: Data("01".utf8))
        _ = await cache.load(cacheRequest())
        #expect(store.count == 0)
    }
}

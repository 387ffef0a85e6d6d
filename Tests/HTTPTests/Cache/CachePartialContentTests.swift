import Foundation
import Testing

@testable import HTTP

/// Partial content (RFC 9111 §3.3–3.4): a `206` to a request for one byte range is stored when it has a strong
/// `ETag`, answers later requests for ranges it holds, and is combined with other parts of the same representation —
/// into a whole `200` once every byte is there. A partial response never answers a request without `Range`. The
/// cases follow the public HTTP caching test suite's `partial.mjs` (ids in the comments), with bodies that match
/// their `Content-Range`.
@Suite(.noHang) struct CachePartialContentTests: CacheFixture {
    let clock = ManualDate()
    let mock = MockLoader()

    private func partial(_ range: String, body: String, etag: String = "\"r\"", maxAge: Int = 3600) {
        mock.then(
            status: .partialContent,
            headers: ["Cache-Control": "max-age=\(maxAge)", "Content-Range": range, "ETag": etag],
            body: Data(body.utf8))
    }

    private let key = CacheKey.make(for: cacheRequest())!

    private func ranged(_ range: String, _ extra: HTTPHeaders = [:]) -> HTTPRequest {
        var headers = extra
        headers["Range"] = range
        return cacheRequest(headers: headers)
    }

    // partial-store-partial-reuse-partial
    @Test func aPartialResponseIsStoredAndAnswersTheSameRange() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        partial("bytes 5-9/10", body: "56789")
        let first = try await cache.load(ranged("bytes=-5")).get()
        #expect(first.status == .partialContent && first.text == "56789")
        #expect(first.cacheStatus == "Cache; fwd=uri-miss; fwd-status=206; stored")
        let second = try await cache.load(ranged("bytes=-5")).get()
        #expect(second.status == .partialContent && second.text == "56789")
        #expect(second.headers["Content-Range"] == "bytes 5-9/10" && second.headers["Content-Length"] == "5")
        #expect(second.cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(mock.receivedRequests.count == 1)
    }

    // partial-store-complete-reuse-partial, -no-last, -suffix
    @Test(arguments: [
        ("bytes=0-1", "01", "bytes 0-1/11"), ("bytes=1-", "1234567890", "bytes 1-10/11"),
        ("bytes=-1", "0", "bytes 10-10/11"), ("bytes=3-99", "34567890", "bytes 3-10/11"),
        ("bytes=-99", "01234567890", "bytes 0-10/11"), ("BYTES=2-2, ", "2", "bytes 2-2/11"),
    ])
    func aStoredWholeResponseAnswersRangesOfIt(range: String, text: String, contentRange: String) async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=3600"], body: "01234567890")
        _ = await cache.load(cacheRequest())
        let response = try await cache.load(ranged(range)).get()
        #expect(response.status == .partialContent && response.text == text)
        #expect(response.headers["Content-Range"] == contentRange)
        #expect(response.headers["Content-Length"] == String(text.utf8.count))
        #expect(mock.receivedRequests.count == 1)
    }

    // partial-store-partial-reuse-partial-byterange, -absent, -suffix
    @Test(arguments: [("bytes=6-8", "678"), ("bytes=6-", "6789"), ("bytes=-1", "9"), ("bytes=5-9", "56789")])
    func aStoredPartialResponseAnswersRangesWithinIt(range: String, text: String) async throws {
        let cache = makeCache()
        partial("bytes 5-9/10", body: "56789")
        _ = await cache.load(ranged("bytes=-5"))
        let response = try await cache.load(ranged(range)).get()
        #expect(response.status == .partialContent && response.text == text)
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func aRangeThePartHoldsOnlyInPartIsSentOnAndTheAnswerCombined() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        partial("bytes 0-4/10", body: "01234")
        partial("bytes 3-7/10", body: "34567")
        _ = await cache.load(ranged("bytes=0-4"))
        let overlapping = try await cache.load(ranged("bytes=3-7")).get()
        #expect(overlapping.text == "34567" && mock.receivedRequests.count == 2)
        #expect(mock.receivedRequests[1].headers["Range"] == "bytes=3-7")  // sent as it was asked
        let combined = try await cache.load(ranged("bytes=1-6")).get()
        #expect(combined.text == "123456" && combined.headers["Content-Range"] == "bytes 1-6/10")
        #expect(mock.receivedRequests.count == 2)
        #expect(try #require(await store.variants(for: key).first).isPartial)
    }

    @Test func partsOfOneRepresentationCombineIntoAWholeResponseThatAnswersEveryRequest() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        partial("bytes 5-9/10", body: "56789")
        partial("bytes 0-4/10", body: "01234")
        _ = await cache.load(ranged("bytes=5-"))
        _ = await cache.load(ranged("bytes=0-4"))
        let whole = try await cache.load(cacheRequest()).get()
        #expect(whole.status == .ok && whole.text == "0123456789")
        #expect(whole.headers["Content-Length"] == "10" && whole.headers["Content-Range"] == nil)
        #expect(whole.cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(mock.receivedRequests.count == 2)
        #expect(await store.variants(for: key).count == 1)
    }

    @Test func partsAreCombinedOnlyUnderOneStrongETagAndOneLength() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        // A weak ETag: never stored.
        partial("bytes 0-4/10", body: "01234", etag: "W/\"r\"")
        _ = await cache.load(ranged("bytes=0-4"))
        #expect(store.count == 0)
        // No ETag: never stored.
        mock.then(
            status: .partialContent, headers: ["Cache-Control": "max-age=60", "Content-Range": "bytes 0-4/10"],
            body: Data("01234".utf8))
        _ = await cache.load(ranged("bytes=0-4"))
        #expect(store.count == 0)
        // Another representation replaces the part stored; it is never mixed with it.
        partial("bytes 0-4/10", body: "01234", etag: "\"one\"")
        partial("bytes 5-9/10", body: "abcde", etag: "\"two\"")
        _ = await cache.load(ranged("bytes=0-4"))
        _ = await cache.load(ranged("bytes=5-9"))
        let variants = await store.variants(for: key)
        #expect(variants.count == 1 && variants.first?.body == Data("abcde".utf8))
        // Another length is another representation too.
        partial("bytes 0-4/11", body: "ABCDE", etag: "\"two\"")
        _ = await cache.load(ranged("bytes=0-4"))
        #expect(await store.variants(for: key).map(\.body) == [Data("ABCDE".utf8)])
    }

    @Test func aPartWhoseBodyDisagreesWithItsContentRangeIsNotStored() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        partial("bytes 4-9/10", body: "01234")  // six bytes announced, five sent (as partial.mjs's own cases do)
        partial("bytes 0-4/*", body: "01234")  // an unknown length
        partial("bytes 0-4/10, bytes 6-7/10", body: "01234")
        for _ in 0..<3 { _ = await cache.load(ranged("bytes=0-4")) }
        #expect(store.count == 0)
    }

    @Test func aStalePartIsNotServedButSentForAgainAndOnlyIfCachedServesIt() async throws {
        let cache = makeCache()
        partial("bytes 0-4/10", body: "01234", maxAge: 10)
        partial("bytes 0-4/10", body: "01234", maxAge: 10)
        _ = await cache.load(ranged("bytes=0-4"))
        clock.advance(by: 20)
        let offline = try await cache.load(ranged("bytes=1-2", ["Cache-Control": "only-if-cached"])).get()
        #expect(offline.status == .partialContent && offline.text == "12")
        let missing = try await cache.load(ranged("bytes=6-7", ["Cache-Control": "only-if-cached"])).get()
        #expect(missing.status == .gatewayTimeout)
        _ = await cache.load(ranged("bytes=0-4"))
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func requestsWithSeveralRangesIfRangeOrAnotherUnitPassUntouched() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=3600", "ETag": "\"w\""], body: "0123456789")
        _ = await cache.load(cacheRequest())
        for request in [
            ranged("bytes=0-1, 4-5"), ranged("bytes=0-1", ["If-Range": "\"w\""]), ranged("items=0-1"),
            ranged("bytes=5-2"), ranged("bytes=a-"),
        ] {
            mock.then(status: .partialContent, body: Data("x".utf8))
            let response = try await cache.load(request).get()
            #expect(response.cacheStatus == nil, "\(request.headers)")  // passed: the cache had no say
        }
        #expect(mock.receivedRequests.count == 6)
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

    @Test func aPartialResponseNeverAnswersARequestWithoutRange() async throws {
        let cache = makeCache()
        partial("bytes 0-4/10", body: "01234")
        _ = await cache.load(ranged("bytes=0-4"))
        ok(["Cache-Control": "max-age=3600"], body: "0123456789")
        let whole = try await cache.load(cacheRequest()).get()
        #expect(whole.status == .ok && whole.text == "0123456789")
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

    @Test func mustUnderstandStoresAPartWithNoStoreAndNeverAPartialResponseToAWholeRequest() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        let headers: HTTPHeaders = [
            "Cache-Control": "max-age=3600, no-store, must-understand", "Content-Range": "bytes 0-1/10",
            "ETag": "\"r\"",
        ]
        mock.then(status: .partialContent, headers: headers, body: Data("01".utf8))
        _ = await cache.load(cacheRequest())
        #expect(store.count == 0)
        mock.then(status: .partialContent, headers: headers, body: Data("01".utf8))
        _ = await cache.load(ranged("bytes=0-1"))
        #expect(store.count == 1)
    }

    // MARK: The fields' grammar

    @Test func rangeAndContentRangeAreReadToTheLetter() {
        #expect(ByteRange.requested(by: ["bytes=0-499"]) == .from(0, through: 499))
        #expect(ByteRange.requested(by: ["bytes=500-"]) == .from(500, through: nil))
        #expect(ByteRange.requested(by: ["bytes=-500"]) == .suffix(500))
        #expect(ByteRange.requested(by: ["Bytes= 1-2 ,"]) == .from(1, through: 2))
        for invalid in ["bytes=", "bytes=-", "bytes=1-2,3-4", "bytes=2-1", "bytes=+1-2", "bytes=1.0-2", "bytes 1-2"] {
            #expect(ByteRange.requested(by: [invalid]) == nil, "\(invalid)")
        }
        #expect(ByteRange.requested(by: ["bytes=0-1", "bytes=2-3"]) == nil)
        #expect(ByteRange.contentRange("bytes 0-4/10")?.range == ByteRange(first: 0, last: 4))
        for invalid in ["bytes 0-4/*", "bytes */10", "bytes 5-4/10", "bytes 0-10/10", "bits 0-1/2", "bytes 0-1 /2"] {
            #expect(ByteRange.contentRange(invalid) == nil, "\(invalid)")
        }
        #expect(ByteRange.Requested.from(10, through: nil).resolved(length: 10) == nil)
        #expect(ByteRange.Requested.suffix(0).resolved(length: 10) == nil)
    }

    /// Random bytes never trap the readers of `Range` and `Content-Range`, and what they read is in bounds.
    @Test func randomRangeFieldsNeverTrap() {
        let seed = SplitMix64.seed()
        print("CachePartialContentTests: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let pieces = ["bytes", "=", " ", "-", ",", "/", "*", "0", "9", "99999999999999999999", "\u{0}", "é"]
        for _ in 0..<10_000 {
            let text = (0..<Int.random(in: 0...10, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            if let requested = ByteRange.requested(by: [text]), let range = requested.resolved(length: 100) {
                #expect(range.first >= 0 && range.first <= range.last && range.last < 100, "seed \(seed): \(text)")
            }
            if let content = ByteRange.contentRange(text) {
                #expect(content.range.first <= content.range.last && content.range.last < content.length)
            }
        }
    }
}

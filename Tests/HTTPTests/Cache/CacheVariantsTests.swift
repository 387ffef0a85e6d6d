import Foundation
import Testing

@testable import HTTP

/// Several responses stored for one URL, one per set of `Vary`'d request field values (RFC 9111 §4.1), in both
/// stores.
@Suite(.noHang) struct CacheVariantsTests: CacheFixture {
    let clock = ManualDate()
    let mock = MockLoader()
    let directory = TemporaryDirectory()

    private func language(_ value: String) -> HTTPRequest {
        cacheRequest(headers: ["Accept-Language": value])
    }

    @Test(arguments: ["memory", "disk"])
    func aSecondVariantDoesNotEvictTheFirst(_ kind: String) async throws {
        let store: any CacheStore =
            kind == "memory" ? MemoryCacheStore() : DiskCacheStore(directory: directory.url.appending(path: kind))
        let cache = makeCache(store: store)
        ok(["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: "hello")
        ok(["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: "bonjour")
        _ = await cache.load(language("en"))
        let french = try await cache.load(language("fr")).get()
        #expect(french.cacheStatus == "Cache; fwd=vary-miss; fwd-status=200; stored")

        let english = try await cache.load(language("en")).get()
        #expect(english.text == "hello" && english.cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(try await cache.load(language("fr")).get().text == "bonjour")
        #expect(mock.receivedRequests.count == 2)
        #expect(await store.variants(for: "GET https://api.example.com/people/42").count == 2)
    }

    @Test func aNewResponseReplacesOnlyTheVariantItsRequestSelects() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        ok(["Cache-Control": "max-age=10", "Vary": "Accept-Language"], body: "hello")
        ok(["Cache-Control": "max-age=10", "Vary": "Accept-Language"], body: "bonjour")
        ok(["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: "hello again")
        _ = await cache.load(language("en"))
        _ = await cache.load(language("fr"))
        clock.advance(by: 20)
        #expect(try await cache.load(language("en")).get().text == "hello again")
        let variants = await store.variants(for: "GET https://api.example.com/people/42")
        #expect(variants.map { String(decoding: $0.body, as: UTF8.self) } == ["hello again", "bonjour"])
    }

    @Test func theNumberOfVariantsIsBoundedAndTheLeastRecentlyStoredGoesFirst() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        let count = CacheEntry.maximumVariants + 1
        for index in 0..<count {
            ok(["Cache-Control": "max-age=600", "Vary": "X-Variant"], body: "v\(index)")
            _ = await cache.load(cacheRequest(headers: ["X-Variant": "\(index)"]))
        }
        let variants = await store.variants(for: "GET https://api.example.com/people/42")
        #expect(variants.count == CacheEntry.maximumVariants)
        #expect(variants.first?.body == Data("v\(count - 1)".utf8))
        // The first one stored is gone: its request reaches the server again.
        ok(["Cache-Control": "max-age=600", "Vary": "X-Variant"], body: "v0 again")
        #expect(try await cache.load(cacheRequest(headers: ["X-Variant": "0"])).get().text == "v0 again")
        #expect(try await cache.load(cacheRequest(headers: ["X-Variant": "2"])).get().text == "v2")
        #expect(mock.receivedRequests.count == count + 1)
    }

    @Test func ofTwoMatchingVariantsTheMostRecentDateAnswers() {
        let request = language("en")
        func variant(_ body: String, date: TimeInterval, vary: String?) -> CacheEntry {
            var headers: HTTPHeaders = ["Date": HTTPDateText.format(Date(timeIntervalSince1970: date))]
            if let vary { headers["Vary"] = vary }
            let varying: HTTPHeaders = vary == nil ? [:] : ["accept-language": "en"]
            return CacheEntry(
                status: .ok, headers: headers, body: Data(body.utf8), url: nil,
                requestDate: Date(timeIntervalSince1970: date), responseDate: Date(timeIntervalSince1970: date),
                varyingRequestHeaders: varying)
        }
        let older = variant("older", date: 1_800_000_000, vary: nil)
        let newer = variant("newer", date: 1_800_000_100, vary: "Accept-Language")
        let other = variant("other", date: 1_800_000_200, vary: "Accept-Encoding")
        // `other` is the most recent, but varies on a field this request does not have and the stored one did not
        // either: it matches, as RFC 9111 §4.1 says an absent field matches an absent field.
        #expect(CacheEntry.select(from: [older, newer, other], for: request)?.body == Data("other".utf8))
        #expect(CacheEntry.select(from: [older, newer], for: request)?.body == Data("newer".utf8))
        #expect(CacheEntry.select(from: [newer, older], for: request)?.body == Data("newer".utf8))
        #expect(CacheEntry.select(from: [newer], for: language("fr")) == nil)
        // Of equally recent ones, the most recently stored (the first).
        let twin = variant("twin", date: 1_800_000_100, vary: nil)
        #expect(CacheEntry.select(from: [twin, newer], for: request)?.body == Data("twin".utf8))
    }

    @Test func anUnsafeRequestRemovesEveryVariant() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        ok(["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        ok(["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        _ = await cache.load(language("en"))
        _ = await cache.load(language("fr"))
        mock.then(status: .noContent)
        _ = await cache.load(cacheRequest(method: .post))
        #expect(await store.variants(for: "GET https://api.example.com/people/42").isEmpty)
    }

    @Test func aStoreKeepsTheVariantsThatFitAQuarterOfItsLimit() async {
        func entry(_ size: Int) -> CacheEntry {
            CacheEntry(
                status: .ok, headers: [:], body: Data(count: size), url: nil, requestDate: Date(), responseDate: Date())
        }
        let memory = MemoryCacheStore(maximumSize: 8_000)
        await memory.store([entry(1_200), entry(1_200), entry(1_200)], for: "k")
        #expect(await memory.variants(for: "k").map(\.body.count) == [1_200])
        await memory.store([entry(3_000)], for: "k")
        #expect(await memory.variants(for: "k").isEmpty && memory.count == 0)

        let disk = DiskCacheStore(directory: directory.url, maximumSize: 8_000)
        await disk.store([entry(1_200), entry(1_200), entry(1_200)], for: "k")
        #expect(await disk.variants(for: "k").map(\.body.count) == [1_200])
        await disk.store([entry(3_000)], for: "k")
        #expect(await disk.variants(for: "k").isEmpty)
        #expect(directory.entryFiles.isEmpty)
        await disk.store([], for: "k")
        #expect(await disk.count == 0)
    }

    @Test func variantsSurviveARestartInOrder() async throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let variants = ["a", "b", "c"].map { body in
            CacheEntry(
                status: .ok, headers: ["Vary": "X"], body: Data(body.utf8), url: nil, requestDate: date,
                responseDate: date, varyingRequestHeaders: ["x": body])
        }
        await DiskCacheStore(directory: directory.url).store(variants, for: "k")
        let read = await DiskCacheStore(directory: directory.url).variants(for: "k")
        #expect(read.map(\.body) == variants.map(\.body))
        #expect(read.map { $0.varyingRequestHeaders["x"] } == ["a", "b", "c"])
    }

    @Test func aFileOfTheFirstFormatIsReadAsOneVariantAndRewrittenWhenStored() async throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let old = CacheEntry(
            status: .ok, headers: ["Cache-Control": "max-age=60"], body: Data("old".utf8), url: nil,
            requestDate: date, responseDate: date)
        let key = "GET https://api.example.com/a"
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        try CacheEntryFile.encodeVersion1(old, key: key).write(to: URL(fileURLWithPath: directory.file(for: key)))

        let store = DiskCacheStore(directory: directory.url)
        let read = await store.variants(for: key)
        #expect(read.count == 1 && read.first?.body == Data("old".utf8))
        #expect(read.first?.metadata.freshnessLifetime == 60)

        await store.store(read + [old], for: key)
        let rewritten = try Data(contentsOf: URL(fileURLWithPath: directory.file(for: key)))
        #expect(Array(rewritten.prefix(8)) == Array("HTTPCE02".utf8))
        #expect(await store.variants(for: key).count == 2)
    }

    @Test func aFileOfAnotherVersionIsNoEntry() throws {
        let date = Date(timeIntervalSince1970: 1)
        let entry = CacheEntry(
            status: .ok, headers: [:], body: Data(), url: nil, requestDate: date, responseDate: date)
        var file = [UInt8](try #require(CacheEntryFile.encode([entry], key: "k")))
        #expect(CacheEntryFile.decode(file)?.variants.count == 1)
        file.replaceSubrange(0..<8, with: Array("HTTPCE03".utf8))
        #expect(CacheEntryFile.decode(file) == nil)
    }
}

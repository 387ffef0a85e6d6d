import Foundation
import HTTP
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's own cache is off, so that the chain's ``Cache`` is the only one.
@Suite(.noHang) struct URLSessionCacheIsOffTests {
    @Test func theDefaultConfigurationHasNoURLCache() {
        let configuration = URLSessionLoader.defaultConfiguration
        #expect(configuration.urlCache == nil)
        #expect(configuration.requestCachePolicy == .reloadIgnoringLocalCacheData)
        #expect(URLSessionLoader().session.configuration.urlCache == nil)
    }
}

/// The cache against a real httpbin on loopback: `/cache`, `/cache/{n}`, `/etag/{etag}` and `/response-headers`,
/// with the cache's clock starting at the real time and moved by the tests.
@Suite(.noHang, .enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct CacheIntegrationTests {
    let base = TestServers.httpbin!
    let clock = ManualDate(Date())
    let recorder = AttemptRecorder()

    func makeCache(store: any CacheStore = MemoryCacheStore()) -> Cache {
        let cache = Cache(store: store, now: clock.closure)
        cache.nextLoader = recorder
        recorder.nextLoader = URLSessionLoader()
        return cache
    }

    func request(
        _ path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:], method: HTTPMethod = .get
    )
        -> HTTPRequest
    {
        var request = HTTPRequest(method: method, url: base.appendingPathComponent(path), headers: headers)
        if !query.isEmpty { request.query = query }
        return request
    }

    /// The `X-Probe` header httpbin echoes in the body.
    func probe(_ response: HTTPResponse) -> String? {
        (response.json["headers"] as? [String: Any])?["X-Probe"] as? String
    }

    @Test func urlSessionAloneCachesNothing() async throws {
        let loader = URLSessionLoader()
        let first = try await loader.load(request("/cache/60", headers: ["X-Probe": "1"])).get()
        let second = try await loader.load(request("/cache/60", headers: ["X-Probe": "2"])).get()
        #expect(first.headers["Cache-Control"] == "public, max-age=60")
        #expect(probe(first) == "1" && probe(second) == "2")
    }

    @Test func cacheNIsServedFromTheStoreUntilItsMaxAgeThenFetchedAgain() async throws {
        let cache = makeCache()
        let first = try await cache.load(request("/cache/60", headers: ["X-Probe": "1"])).get()
        #expect(first.cacheStatus == "Cache; fwd=uri-miss; fwd-status=200; stored")
        clock.advance(by: 30)
        let hit = try await cache.load(request("/cache/60", headers: ["X-Probe": "2"])).get()
        #expect(hit.cacheStatus?.hasPrefix("Cache; hit; ttl=") == true)
        #expect(probe(hit) == "1")  // the stored body, not a new one
        #expect(Int(hit.headers["Age"] ?? "") ?? 0 >= 30)
        #expect(recorder.all.count == 1)

        clock.advance(by: 31)
        let refetched = try await cache.load(request("/cache/60", headers: ["X-Probe": "3"])).get()
        #expect(probe(refetched) == "3")
        #expect(refetched.cacheStatus == "Cache; fwd=stale; fwd-status=200; stored")
        #expect(recorder.all.count == 2)
    }

    @Test func cacheIsRevalidatedAndIts304ServesTheStoredBody() async throws {
        let cache = makeCache()
        let first = try await cache.load(request("/cache", headers: ["X-Probe": "1"])).get()
        let etag = try #require(first.headers["ETag"])
        #expect(first.headers["Last-Modified"] != nil)
        clock.advance(by: 10)  // past the heuristic lifetime, a tenth of the second or so since Last-Modified
        let validated = try await cache.load(request("/cache", headers: ["X-Probe": "2"])).get()
        #expect(validated.status == .ok)
        #expect(probe(validated) == "1")
        #expect(validated.body == first.body)
        #expect(validated.cacheStatus == "Cache; fwd=stale; fwd-status=304; stored")
        let sent = try #require(recorder.all.last?.request)
        #expect(sent.headers["If-None-Match"] == etag)
        #expect(sent.headers["If-Modified-Since"] == first.headers["Last-Modified"])
    }

    @Test func etagIsRevalidatedAndTheCallersOwnConditionalRequestGetsThe304() async throws {
        let cache = makeCache()
        let first = try await cache.load(request("/etag/abc", headers: ["X-Probe": "1"])).get()
        #expect(first.headers["ETag"] == "abc")
        let validated = try await cache.load(request("/etag/abc", headers: ["X-Probe": "2"])).get()
        #expect(validated.status == .ok && probe(validated) == "1")
        #expect(validated.cacheStatus == "Cache; fwd=stale; fwd-status=304; stored")

        let own = try await cache.load(request("/etag/abc", headers: ["If-None-Match": "abc"])).get()
        #expect(own.status == .notModified)
        #expect(own.cacheStatus == "Cache; fwd=request; fwd-status=304")
        let other = try await cache.load(request("/etag/abc", headers: ["If-None-Match": "xyz"])).get()
        #expect(other.status == .ok)
    }

    @Test func noStoreIsNeverStoredAndPrivateIs() async throws {
        let cache = makeCache()
        let noStore = [URLQueryItem(name: "Cache-Control", value: "no-store")]
        _ = try await cache.load(request("/response-headers", query: noStore)).get()
        let again = try await cache.load(request("/response-headers", query: noStore)).get()
        #expect(again.cacheStatus == "Cache; fwd=uri-miss; fwd-status=200")
        let privateQuery = [URLQueryItem(name: "Cache-Control", value: "private, max-age=60")]
        _ = try await cache.load(request("/response-headers", query: privateQuery)).get()
        let hit = try await cache.load(request("/response-headers", query: privateQuery)).get()
        #expect(hit.cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(recorder.all.count == 3)
    }

    @Test func staleWhileRevalidateServesStaleAndRefreshesInTheBackground() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        let query = [URLQueryItem(name: "Cache-Control", value: "max-age=30, stale-while-revalidate=60")]
        _ = try await cache.load(request("/response-headers", query: query)).get()
        let key = try #require(store.keysFromLeastRecentlyUsed.first)
        clock.advance(by: 45)
        let stale = try await cache.load(request("/response-headers", query: query)).get()
        #expect(stale.cacheStatus?.hasSuffix("detail=stale-while-revalidate") == true)
        try await eventually { cache.backgroundRevalidationCount == 0 && recorder.all.count == 2 }
        // The server's answer replaced the stored response. (On the cache's clock, moved 45 s ahead of the
        // server's, that answer's Date makes it 45 s old, and stale again: clock skew counts, as RFC 9111 says.)
        #expect(try #require(await store.entry(for: key)).responseDate == clock.now)
        #expect(recorder.all.last?.request.throttlePriority == .low)
    }

    @Test func varyKeepsVariantsApart() async throws {
        let cache = makeCache()
        let query = [
            URLQueryItem(name: "Cache-Control", value: "max-age=60"), URLQueryItem(name: "Vary", value: "X-Lang"),
        ]
        _ = try await cache.load(request("/response-headers", query: query, headers: ["X-Lang": "en"])).get()
        let same = try await cache.load(request("/response-headers", query: query, headers: ["X-Lang": "en"])).get()
        #expect(same.cacheStatus?.hasPrefix("Cache; hit") == true)
        let other = try await cache.load(request("/response-headers", query: query, headers: ["X-Lang": "fr"])).get()
        #expect(other.cacheStatus == "Cache; fwd=vary-miss; fwd-status=200; stored")
    }

    @Test func aPostToTheSameURLInvalidatesIt() async throws {
        let cache = makeCache()
        let query = [URLQueryItem(name: "Cache-Control", value: "max-age=600")]
        _ = try await cache.load(request("/response-headers", query: query)).get()
        #expect(
            try await cache.load(request("/response-headers", query: query)).get().cacheStatus?.hasPrefix("Cache; hit")
                == true)
        #expect(try await cache.load(request("/response-headers", query: query, method: .post)).get().status == .ok)
        let after = try await cache.load(request("/response-headers", query: query)).get()
        #expect(after.cacheStatus == "Cache; fwd=uri-miss; fwd-status=200; stored")
    }

    @Test func theDiskStoreServesAfterARestartWithoutTheServer() async throws {
        let directory = TemporaryDirectory()
        _ = try await makeCache(store: DiskCacheStore(directory: directory.url))
            .load(request("/cache/600", headers: ["X-Probe": "disk"])).get()
        let restarted = Cache(store: DiskCacheStore(directory: directory.url), now: clock.closure)
        restarted.nextLoader = MockLoader()  // no server at all
        let hit = try await restarted.load(request("/cache/600")).get()
        #expect(probe(hit) == "disk")
        #expect(hit.cacheStatus?.hasPrefix("Cache; hit") == true)
    }
}

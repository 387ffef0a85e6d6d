import Foundation
import Testing

@testable import HTTP

/// Per-request choices: ``CachePolicy`` and the request's own `Cache-Control` directives.
@Suite(.noHang) struct CachePolicyTests: CacheFixture {
    let clock = ManualDate()
    let mock = MockLoader()

    @Test func reloadGoesToTheServerAndStoresTheAnswer() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=600"], body: "first")
        ok(["Cache-Control": "max-age=600"], body: "second")
        _ = await cache.load(cacheRequest())
        var reload = cacheRequest()
        reload.cachePolicy = .reload
        let reloaded = try await cache.load(reload).get()
        #expect(reloaded.text == "second")
        #expect(reloaded.cacheStatus == "Cache; fwd=request; fwd-status=200; stored")
        #expect(mock.receivedRequests[1].headers["If-None-Match"] == nil)
        #expect(try await cache.load(cacheRequest()).get().text == "second")
    }

    @Test func onlyIfCachedServesWhatIsStoredFreshOrStaleAndOtherwiseA504() async throws {
        let cache = makeCache()
        var offline = cacheRequest()
        offline.cachePolicy = .onlyIfCached
        let none = try await cache.load(offline).get()
        #expect(none.status == .gatewayTimeout)
        #expect(none.cacheStatus == "Cache; detail=only-if-cached")
        ok(["Cache-Control": "max-age=10"])
        _ = await cache.load(cacheRequest())
        clock.advance(by: 3600)
        let stale = try await cache.load(offline).get()
        #expect(stale.text == "stored body" && stale.cacheStatus == "Cache; hit; ttl=-3590")
        let directive = try await cache.load(cacheRequest(headers: ["Cache-Control": "only-if-cached"])).get()
        #expect(directive.status == .ok)
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func doNotStoreReadsTheStoreButStoresNothing() async throws {
        let cache = makeCache()
        var request = cacheRequest()
        request.cachePolicy = .doNotStore
        ok(["Cache-Control": "max-age=60"], body: "unstored")
        #expect(try await cache.load(request).get().cacheStatus == "Cache; fwd=uri-miss; fwd-status=200")
        ok(["Cache-Control": "max-age=60"], body: "stored")
        _ = await cache.load(cacheRequest())
        #expect(try await cache.load(request).get().text == "stored")
        var noStore = cacheRequest("/other", headers: ["Cache-Control": "no-store"])
        ok(["Cache-Control": "max-age=60"])
        _ = await cache.load(noStore)
        noStore.headers = [:]
        ok(["Cache-Control": "max-age=60"])
        #expect(try await cache.load(noStore).get().cacheStatus?.hasPrefix("Cache; fwd=uri-miss") == true)
    }

    @Test(arguments: ["no-cache", "max-age=40", "min-fresh=60"], [false, true])
    func requestDirectivesNarrowWhatIsFreshEnough(directive: String, asPragma: Bool) async throws {
        guard !asPragma || directive == "no-cache" else { return }
        let cache = makeCache()
        ok(["Cache-Control": "max-age=100", "ETag": "\"d\""])
        _ = await cache.load(cacheRequest())
        clock.advance(by: 50)
        mock.then(status: .notModified)
        let headers: HTTPHeaders = asPragma ? ["Pragma": directive] : ["Cache-Control": directive]
        let response = try await cache.load(cacheRequest(headers: headers)).get()
        #expect(response.cacheStatus == "Cache; fwd=stale; fwd-status=304; stored")
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func maxStaleLetsAStaleResponseThrough() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=100", "ETag": "\"d\""])
        _ = await cache.load(cacheRequest())
        clock.advance(by: 150)
        let stale = try await cache.load(cacheRequest(headers: ["Cache-Control": "max-stale=60"])).get()
        #expect(stale.cacheStatus == "Cache; hit; ttl=-50")
        let any = try await cache.load(cacheRequest(headers: ["Cache-Control": "max-stale"])).get()
        #expect(any.cacheStatus == "Cache; hit; ttl=-50")
        mock.then(status: .notModified)
        _ = await cache.load(cacheRequest(headers: ["Cache-Control": "max-stale=10"]))
        #expect(mock.receivedRequests.count == 2)
    }
}

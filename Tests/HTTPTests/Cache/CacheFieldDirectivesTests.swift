import Foundation
import Testing

@testable import HTTP

/// Qualified `no-cache="…"` (RFC 9111 §5.2.2.4) and `private="…"` (§5.2.2.7), and `Set-Cookie` (§3.1), through the
/// cache.
@Suite(.noHang) struct CacheFieldDirectivesTests: CacheFixture {
    let clock = ManualDate()
    let mock = MockLoader()

    @Test func qualifiedNoCacheServesTheResponseWithoutTheListedFieldsUntilItIsValidated() async throws {
        let cache = makeCache()
        ok([
            "Cache-Control": #"max-age=10, no-cache="X-Session, x-other""#, "X-Session": "s1", "X-Other": "o",
            "X-Kept": "k", "ETag": "\"v1\"",
        ])
        let miss = try await cache.load(cacheRequest()).get()
        #expect(miss.headers["X-Session"] == "s1")  // the response as the server sent it

        let hit = try await cache.load(cacheRequest()).get()
        #expect(hit.cacheStatus?.hasPrefix("Cache; hit") == true && mock.receivedRequests.count == 1)
        #expect(hit.headers["X-Session"] == nil && hit.headers["X-Other"] == nil)
        #expect(hit.headers["X-Kept"] == "k" && hit.text == "stored body")

        // Once validated with the server, the stored fields may be sent.
        clock.advance(by: 20)
        mock.then { request in
            #expect(request.headers["If-None-Match"] == "\"v1\"")
            return .success(HTTPResponse(request: request, status: .notModified, headers: ["ETag": "\"v1\""]))
        }
        let validated = try await cache.load(cacheRequest()).get()
        #expect(validated.cacheStatus == "Cache; fwd=stale; fwd-status=304; stored")
        #expect(validated.headers["X-Session"] == "s1" && validated.headers["X-Other"] == "o")
    }

    @Test func qualifiedNoCacheFieldsAreWithheldFromStaleAnswersToo() async throws {
        let cache = makeCache()
        ok(["Cache-Control": #"max-age=10, stale-if-error=60, no-cache="X-Session""#, "X-Session": "s1"])
        mock.then(failWith: .cannotConnect)
        _ = await cache.load(cacheRequest())
        clock.advance(by: 20)
        let stale = try await cache.load(cacheRequest()).get()
        #expect(stale.cacheStatus == "Cache; fwd=stale; detail=stale-if-error")
        #expect(stale.headers["X-Session"] == nil)
        let offline = cacheRequest()
        var onlyIfCached = offline
        onlyIfCached.cachePolicy = .onlyIfCached
        let fromStore = try await cache.load(onlyIfCached).get()
        #expect(fromStore.status == .ok && fromStore.headers["X-Session"] == nil)
    }

    @Test func anUnqualifiedNoCacheIsStillRevalidatedEveryTime() async throws {
        let cache = makeCache()
        ok(["Cache-Control": #"max-age=600, no-cache="""#, "ETag": "\"v1\""])
        _ = await cache.load(cacheRequest())
        mock.then(status: .notModified, headers: ["ETag": "\"v1\""])
        _ = await cache.load(cacheRequest())
        #expect(mock.receivedRequests.count == 2)
        #expect(mock.receivedRequests.last?.headers["If-None-Match"] == "\"v1\"")
    }

    @Test func thisPrivateCacheStoresQualifiedPrivateFields() async throws {
        let cache = makeCache()
        ok(["Cache-Control": #"max-age=60, private="X-User""#, "X-User": "alice"])
        _ = await cache.load(cacheRequest())
        let hit = try await cache.load(cacheRequest()).get()
        #expect(hit.cacheStatus?.hasPrefix("Cache; hit") == true && hit.headers["X-User"] == "alice")
    }

    @Test func underSharedCacheRulesPrivateFieldsAreNotStoredAndUnqualifiedPrivateIsNotStoredAtAll() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store, policy: .sharedCacheRules)
        let authorized = { (path: String) in cacheRequest(path, headers: ["Authorization": "Bearer t"]) }
        ok(["Cache-Control": #"public, max-age=60, private="X-User, X-Plan""#, "X-User": "alice", "X-Plan": "pro"])
        let miss = try await cache.load(authorized("/a")).get()
        #expect(miss.headers["X-User"] == "alice")  // delivered, but not stored
        let hit = try await cache.load(authorized("/a")).get()
        #expect(hit.cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(hit.headers["X-User"] == nil && hit.headers["X-Plan"] == nil)
        let stored = try #require(await store.entry(for: "GET https://api.example.com/a"))
        #expect(!stored.headers.contains("X-User"))

        ok(["Cache-Control": "private, must-revalidate, max-age=60"])
        ok(["Cache-Control": "private, must-revalidate, max-age=60"])
        _ = await cache.load(authorized("/b"))
        _ = await cache.load(authorized("/b"))
        #expect(mock.receivedRequests.count == 3)
        #expect(await store.entry(for: "GET https://api.example.com/b") == nil)
    }

    // MARK: Set-Cookie

    @Test func setCookieIsDeliveredWithTheResponseButNeverStoredNorServedFromTheStore() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store)
        ok(["Cache-Control": "max-age=10", "Set-Cookie": "session=abc", "Set-Cookie2": "old=1", "ETag": "\"v1\""])
        #expect(try await cache.load(cacheRequest()).get().headers["Set-Cookie"] == "session=abc")
        let stored = try #require(await store.entry(for: "GET https://api.example.com/people/42"))
        #expect(!stored.headers.contains("Set-Cookie") && !stored.headers.contains("Set-Cookie2"))
        #expect(try await cache.load(cacheRequest()).get().headers["Set-Cookie"] == nil)

        // A 304 that sets a cookie: the cookie is the server's answer to this request, so it is delivered, and
        // still not stored.
        clock.advance(by: 20)
        mock.then(status: .notModified, headers: ["ETag": "\"v1\"", "Set-Cookie": "session=def"])
        let validated = try await cache.load(cacheRequest()).get()
        #expect(validated.headers.values(for: "Set-Cookie") == ["session=def"])
        let freshened = try #require(await store.entry(for: "GET https://api.example.com/people/42"))
        #expect(!freshened.headers.contains("Set-Cookie"))
        #expect(try await cache.load(cacheRequest()).get().headers["Set-Cookie"] == nil)
    }
}

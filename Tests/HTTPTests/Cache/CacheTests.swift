import Foundation
import Testing

@testable import HTTP

/// The cache's RFC 9111 behaviour, over a MockLoader, with a manual clock.
@Suite(.noHang) struct CacheTests: CacheFixture {
    let clock = ManualDate()
    let mock = MockLoader()

    // MARK: Freshness

    @Test func aFreshResponseIsServedFromTheStoreWithoutReachingTheServer() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=60"])
        let first = try await cache.load(cacheRequest()).get()
        #expect(first.cacheStatus == "Cache; fwd=uri-miss; fwd-status=200; stored")

        clock.advance(by: 30)
        let second = cacheRequest()
        let hit = try await cache.load(second).get()
        #expect(mock.receivedRequests.count == 1)
        #expect(hit.status == .ok && hit.text == "stored body")
        #expect(hit.headers["Age"] == "30")
        #expect(hit.cacheStatus == "Cache; hit; ttl=30")
        #expect(hit.request.id == second.id)
    }

    @Test func maxAgeCountsTheAgeFieldAndTheTimeInTheStore() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=60", "Age": "50"])
        ok(["Cache-Control": "max-age=60"], body: "new")
        _ = await cache.load(cacheRequest())
        clock.advance(by: 9)
        #expect(try await cache.load(cacheRequest()).get().headers["Age"] == "59")
        clock.advance(by: 2)
        let refetched = try await cache.load(cacheRequest()).get()
        #expect(refetched.text == "new")
        #expect(refetched.cacheStatus == "Cache; fwd=stale; fwd-status=200; stored")
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func expiresMinusDateIsTheLifetimeAndAnInvalidExpiresIsStale() async throws {
        let cache = makeCache()
        ok(["Expires": clock.httpDate(120)])
        _ = await cache.load(cacheRequest("/expires"))
        clock.advance(by: 119)
        #expect(try await cache.load(cacheRequest("/expires")).get().cacheStatus == "Cache; hit; ttl=1")

        ok(["Expires": "0", "ETag": "\"e\""])
        ok(["Expires": "0", "ETag": "\"e\""])
        _ = await cache.load(cacheRequest("/invalid"))
        _ = await cache.load(cacheRequest("/invalid"))
        #expect(mock.receivedRequests.count == 3)
        #expect(mock.receivedRequests.last?.headers["If-None-Match"] == "\"e\"")
    }

    @Test func maxAgeWinsOverExpires() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=10", "Expires": clock.httpDate(3600)])
        ok(["Cache-Control": "max-age=10"])
        _ = await cache.load(cacheRequest())
        clock.advance(by: 11)
        _ = await cache.load(cacheRequest())
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func heuristicFreshnessIsATenthOfTheTimeSinceLastModifiedAtMostADay() async throws {
        let cache = makeCache()
        // Modified five days before the response: fresh for twelve hours.
        ok(["Last-Modified": clock.httpDate(-5 * 86_400)])
        _ = await cache.load(cacheRequest("/recent"))
        clock.advance(by: 11 * 3600)
        #expect(try await cache.load(cacheRequest("/recent")).get().cacheStatus?.hasPrefix("Cache; hit") == true)
        clock.advance(by: 2 * 3600)
        ok(["Last-Modified": clock.httpDate(-5 * 86_400)])
        _ = await cache.load(cacheRequest("/recent"))
        #expect(mock.receivedRequests.count == 2)
        #expect(mock.receivedRequests.last?.headers["If-Modified-Since"] != nil)

        // Modified a year ago: a day at most.
        ok(["Last-Modified": clock.httpDate(-365 * 86_400)])
        _ = await cache.load(cacheRequest("/old"))
        clock.advance(by: 86_399)
        #expect(try await cache.load(cacheRequest("/old")).get().cacheStatus == "Cache; hit; ttl=1")
    }

    @Test func noHeuristicFreshnessForAStatusThatDoesNotAllowIt() async throws {
        let cache = makeCache()
        mock.then(status: .found, headers: ["Last-Modified": clock.httpDate(-86_400 * 30), "Location": "/x"])
        mock.then(status: .found, headers: ["Location": "/x"])
        _ = await cache.load(cacheRequest())
        _ = await cache.load(cacheRequest())
        #expect(mock.receivedRequests.count == 2)
    }

    // MARK: Validation

    /// RFC 9110 §15.1 lists the heuristically cacheable statuses; every other status gets no heuristic lifetime.
    @Test func heuristicFreshnessOnlyForTheStatusesRFC9110Allows() {
        let allowed: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let headers: HTTPHeaders = [
            "Date": HTTPDateText.format(now), "Last-Modified": HTTPDateText.format(now - 86_400 * 5),
        ]
        for code in 100..<600 {
            let metadata = CacheEntry.Metadata(
                status: HTTPStatus(rawValue: code), headers: headers, requestDate: now, responseDate: now)
            #expect(metadata.isHeuristic == allowed.contains(code), "\(code)")
            #expect(metadata.freshnessLifetime == (allowed.contains(code) ? 43_200 : 0), "\(code)")
        }
    }

    @Test(arguments: [300, 301, 308])
    func redirectsThatAllowAHeuristicAreServedFromTheStore(code: Int) async throws {
        let cache = makeCache()
        mock.then(
            status: HTTPStatus(rawValue: code),
            headers: [
                "Date": clock.httpDate(), "Last-Modified": clock.httpDate(-86_400), "Location": "/elsewhere",
            ])
        _ = await cache.load(cacheRequest())
        clock.advance(by: 60)
        let hit = try await cache.load(cacheRequest()).get()
        #expect(hit.status.rawValue == code && hit.cacheStatus?.hasPrefix("Cache; hit") == true)
    }

    @Test func aStaleResponseIsRevalidatedAndA304ServesTheStoredBodyWithUpdatedFields() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=60", "ETag": "\"v1\"", "X-Version": "1", "Content-Type": "text/plain"])
        mock.then { request in
            #expect(request.headers["If-None-Match"] == "\"v1\"")
            return .success(
                HTTPResponse(
                    request: request, status: .notModified,
                    headers: ["Cache-Control": "max-age=120", "ETag": "\"v1\"", "X-Version": "2"]))
        }
        _ = await cache.load(cacheRequest())
        clock.advance(by: 61)
        let validated = try await cache.load(cacheRequest()).get()
        #expect(validated.status == .ok)
        #expect(validated.text == "stored body")
        #expect(validated.headers["X-Version"] == "2")
        #expect(validated.headers["Content-Type"] == "text/plain")
        #expect(validated.cacheStatus == "Cache; fwd=stale; fwd-status=304; stored")
        #expect(validated.request.headers["If-None-Match"] == "\"v1\"")  // what was sent

        // The 304's max-age now applies, from the time of the validation.
        clock.advance(by: 100)
        let hit = try await cache.load(cacheRequest()).get()
        #expect(hit.cacheStatus == "Cache; hit; ttl=20")
        #expect(hit.headers["X-Version"] == "2")
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func bothValidatorsAreSentWhenTheResponseHadBoth() async throws {
        let cache = makeCache()
        let modified = clock.httpDate(-60)
        ok(["ETag": "W/\"w\"", "Last-Modified": modified, "Cache-Control": "no-cache"])
        mock.then(status: .notModified)
        _ = await cache.load(cacheRequest())
        let validated = try await cache.load(cacheRequest()).get()
        #expect(validated.status == .ok && validated.text == "stored body")
        let sent = mock.receivedRequests[1]
        #expect(sent.headers["If-None-Match"] == "W/\"w\"")
        #expect(sent.headers["If-Modified-Since"] == modified)
    }

    @Test func a304ForAnotherETagDropsTheEntryAndAsksAgainUnconditionally() async throws {
        let cache = makeCache()
        ok(["ETag": "\"a\"", "Cache-Control": "no-cache"], body: "a")
        mock.then(status: .notModified, headers: ["ETag": "\"b\""])
        ok(["ETag": "\"c\"", "Cache-Control": "no-cache"], body: "c")
        _ = await cache.load(cacheRequest())
        let result = try await cache.load(cacheRequest()).get()
        #expect(result.text == "c")
        #expect(mock.receivedRequests.count == 3)
        #expect(mock.receivedRequests[2].headers["If-None-Match"] == nil)
    }

    @Test func theCallersOwnConditionalRequestGetsThe304AndFreshensTheEntry() async throws {
        let cache = makeCache()
        ok(["ETag": "\"v1\"", "Cache-Control": "max-age=10"])
        mock.then(status: .notModified, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=100"])
        _ = await cache.load(cacheRequest())
        clock.advance(by: 20)
        let own = try await cache.load(cacheRequest(headers: ["If-None-Match": "\"v1\""])).get()
        #expect(own.status == .notModified)
        #expect(own.body.isEmpty)
        #expect(own.cacheStatus == "Cache; fwd=request; fwd-status=304")
        // The entry was freshened by that 304: fresh for 100 s from now.
        clock.advance(by: 50)
        #expect(try await cache.load(cacheRequest()).get().cacheStatus == "Cache; hit; ttl=50")
        #expect(mock.receivedRequests.count == 2)
    }

    // MARK: Vary

    @Test func varyStoresTheRequestFieldsAndAnotherValueIsAMiss() async throws {
        let cache = makeCache()
        let english = cacheRequest(headers: ["Accept-Language": "en"])
        let french = cacheRequest(headers: ["Accept-Language": "fr"])
        ok(["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: "hello")
        ok(["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: "bonjour")
        _ = await cache.load(english)
        #expect(try await cache.load(english).get().text == "hello")
        let miss = try await cache.load(french).get()
        #expect(miss.text == "bonjour")
        #expect(miss.cacheStatus == "Cache; fwd=vary-miss; fwd-status=200; stored")
        #expect(try await cache.load(french).get().text == "bonjour")
        #expect(mock.receivedRequests.count == 2)
        // A request without the field does not match a response stored for one with it.
        ok(["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: "default")
        #expect(try await cache.load(cacheRequest()).get().text == "default")
    }

    @Test func varyValuesAreComparedAfterCombiningLinesAndTrimming() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=60", "Vary": "accept-encoding, Accept"])
        _ = await cache.load(cacheRequest(headers: ["Accept": "text/html,  application/json"]))
        let split = cacheRequest(
            headers: HTTPHeaders([
                .init(name: "accept", value: "text/html"), .init(name: "Accept", value: "application/json"),
            ]))
        #expect(try await cache.load(split).get().cacheStatus?.hasPrefix("Cache; hit") == true)
    }

    @Test func varyStarIsNeverStored() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=60", "Vary": "*"])
        ok(["Cache-Control": "max-age=60", "Vary": "*"])
        _ = await cache.load(cacheRequest())
        _ = await cache.load(cacheRequest())
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func secretVaryValuesAreKeptOnlyAsADigest() async throws {
        let store = MemoryCacheStore()
        let cache = makeCache(store: store, policy: .privateCacheRules)
        let token = "Bearer secret-token-123"
        ok(["Cache-Control": "max-age=60", "Vary": "Authorization, Accept"])
        _ = await cache.load(cacheRequest(headers: ["Authorization": token, "Accept": "text/plain"]))
        let key = try #require(store.keysFromLeastRecentlyUsed.first)
        let entry = try #require(await store.entry(for: key))
        #expect(entry.varyingRequestHeaders["Accept"] == "text/plain")
        let digest = try #require(entry.varyingRequestHeaders["Authorization"])
        #expect(!digest.contains("secret"))
        #expect(
            try await cache.load(cacheRequest(headers: ["Authorization": token, "Accept": "text/plain"])).get()
                .cacheStatus?.hasPrefix("Cache; hit") == true)
        ok(["Cache-Control": "max-age=60", "Vary": "Authorization, Accept"])
        _ = await cache.load(cacheRequest(headers: ["Authorization": "Bearer other", "Accept": "text/plain"]))
        #expect(mock.receivedRequests.count == 2)
    }

    // MARK: Directives

    @Test func noStoreIsNotStoredAndRemovesAnEarlierEntry() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=0, must-revalidate", "ETag": "\"1\""])
        ok(["Cache-Control": "no-store, max-age=60"])
        ok(["Cache-Control": "max-age=60"])
        _ = await cache.load(cacheRequest())
        let noStore = try await cache.load(cacheRequest()).get()
        #expect(noStore.cacheStatus == "Cache; fwd=stale; fwd-status=200")
        let third = try await cache.load(cacheRequest()).get()
        #expect(third.cacheStatus == "Cache; fwd=uri-miss; fwd-status=200; stored")
        #expect(mock.receivedRequests[2].headers["If-None-Match"] == nil)
    }

    @Test func noCacheIsStoredButRevalidatedEveryTime() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "no-cache, max-age=3600", "ETag": "\"n\""])
        mock.then(status: .notModified).then(status: .notModified)
        _ = await cache.load(cacheRequest())
        for _ in 0..<2 {
            let response = try await cache.load(cacheRequest()).get()
            #expect(response.text == "stored body")
            #expect(response.cacheStatus == "Cache; fwd=stale; fwd-status=304; stored")
        }
        #expect(mock.receivedRequests.count == 3)
    }

    @Test func mustRevalidateIsNeverServedStale() async throws {
        let cache = makeCache()
        ok([
            "Cache-Control": "max-age=10, must-revalidate, stale-if-error=600, stale-while-revalidate=600",
            "ETag": "\"m\"",
        ])
        mock.then(status: .serviceUnavailable)
        mock.then(failWith: .cannotConnect)
        _ = await cache.load(cacheRequest())
        clock.advance(by: 20)
        var request = cacheRequest(headers: ["Cache-Control": "max-stale"])
        #expect(try await cache.load(request).get().status == .serviceUnavailable)
        request.cachePolicy = .onlyIfCached
        #expect(try await cache.load(request).get().status == .gatewayTimeout)
        #expect(await cache.load(cacheRequest()).error?.code == .cannotConnect)
    }

    @Test func privateAndPublicResponsesAreStored() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "private, max-age=60"])
        ok(["Cache-Control": "public"])  // public alone: heuristically cacheable, no lifetime, no validator
        ok(["Cache-Control": "public", "Last-Modified": clock.httpDate(-10 * 3600)])
        _ = await cache.load(cacheRequest("/private"))
        #expect(try await cache.load(cacheRequest("/private")).get().cacheStatus == "Cache; hit; ttl=60")
        _ = await cache.load(cacheRequest("/public-useless"))
        _ = await cache.load(cacheRequest("/public"))
        #expect(try await cache.load(cacheRequest("/public")).get().cacheStatus == "Cache; hit; ttl=3600")
        #expect(mock.receivedRequests.count == 3)
    }

    @Test func errorsAndUnstorableStatusesPassUnstored() async throws {
        let cache = makeCache()
        mock.then(failWith: .timedOut)
        mock.then(status: .partialContent, headers: ["Cache-Control": "max-age=60"])
        mock.then(status: .internalServerError)
        mock.then(status: .notFound, headers: ["Cache-Control": "max-age=60"])
        #expect(await cache.load(cacheRequest()).error?.code == .timedOut)
        #expect(try await cache.load(cacheRequest()).get().cacheStatus == "Cache; fwd=uri-miss; fwd-status=206")
        #expect(try await cache.load(cacheRequest()).get().cacheStatus == "Cache; fwd=uri-miss; fwd-status=500")
        _ = await cache.load(cacheRequest())
        // A 404 is a response, and stored like one.
        #expect(try await cache.load(cacheRequest()).get().status == .notFound)
        #expect(mock.receivedRequests.count == 4)
    }

    // MARK: stale-while-revalidate, stale-if-error

    @Test func staleWhileRevalidateServesStaleAndRevalidatesInTheBackground() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": "\"s1\""], body: "old")
        ok(["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": "\"s2\""], body: "new")
        _ = await cache.load(cacheRequest())
        clock.advance(by: 30)
        let stale = try await cache.load(cacheRequest()).get()
        #expect(stale.text == "old")
        #expect(stale.cacheStatus == "Cache; hit; ttl=-20; detail=stale-while-revalidate")
        try await eventually { cache.backgroundRevalidationCount == 0 && mock.receivedRequests.count == 2 }
        let background = mock.receivedRequests[1]
        #expect(background.headers["If-None-Match"] == "\"s1\"")
        #expect(background.throttlePriority == .low)
        #expect(try await cache.load(cacheRequest()).get().text == "new")
        #expect(mock.receivedRequests.count == 2)

        // Beyond the window: validated while the caller waits.
        clock.advance(by: 100)
        mock.then(status: .notModified)
        let validated = try await cache.load(cacheRequest()).get()
        #expect(validated.text == "new")
        #expect(validated.cacheStatus == "Cache; fwd=stale; fwd-status=304; stored")
    }

    @Test func oneBackgroundRevalidationAtATimePerEntry() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=1, stale-while-revalidate=60", "ETag": "\"x\""])
        let gate = AsyncStream.makeStream(of: Void.self)
        mock.then { request in
            for await _ in gate.stream {}
            return .success(HTTPResponse(request: request, status: .notModified))
        }
        _ = await cache.load(cacheRequest())
        clock.advance(by: 5)
        for _ in 0..<5 { #expect(try await cache.load(cacheRequest()).get().text == "stored body") }
        try await eventually { mock.receivedRequests.count == 2 }
        #expect(cache.backgroundRevalidationCount == 1)
        gate.continuation.finish()
        try await eventually { cache.backgroundRevalidationCount == 0 }
        #expect(try await cache.load(cacheRequest()).get().cacheStatus?.hasPrefix("Cache; hit; ttl=") == true)
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func staleIfErrorServesTheStaleResponseWhenRevalidationFails() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=10, stale-if-error=60", "ETag": "\"e\""])
        mock.then(failWith: .cannotConnect)
        mock.then(status: .serviceUnavailable)
        mock.then(status: .notFound)
        _ = await cache.load(cacheRequest())
        clock.advance(by: 30)
        let afterFailure = try await cache.load(cacheRequest()).get()
        #expect(afterFailure.text == "stored body")
        #expect(afterFailure.cacheStatus == "Cache; fwd=stale; detail=stale-if-error")
        let after503 = try await cache.load(cacheRequest()).get()
        #expect(after503.status == .ok)
        #expect(after503.cacheStatus == "Cache; fwd=stale; fwd-status=503; detail=stale-if-error")
        // A 404 is the server's answer, not an error.
        #expect(try await cache.load(cacheRequest()).get().status == .notFound)
    }

    @Test func staleIfErrorEndsWithItsWindowAndNeverCoversACancellation() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=10", "ETag": "\"e\""])
        mock.then(failWith: .cannotConnect)
        mock.then(failWith: .cannotConnect)
        mock.then(failWith: .cancelled)
        _ = await cache.load(cacheRequest())
        clock.advance(by: 30)
        // The request's own stale-if-error applies too.
        let withDirective = cacheRequest(headers: ["Cache-Control": "stale-if-error=25"])
        #expect(try await cache.load(withDirective).get().cacheStatus == "Cache; fwd=stale; detail=stale-if-error")
        #expect(
            await cache.load(cacheRequest(headers: ["Cache-Control": "stale-if-error=5"])).error?.code == .cannotConnect
        )
        #expect(await cache.load(withDirective).error?.code == .cancelled)
    }

    @Test func staleIfErrorNeverOverridesMustRevalidateOrNoCacheAndNeedsPermission() async throws {
        let cache = makeCache()
        for (path, directives) in [
            ("/a", "max-age=10, stale-if-error=60, must-revalidate"), ("/b", "max-age=10, stale-if-error=60, no-cache"),
            ("/c", "max-age=10"),
        ] {
            ok(["Cache-Control": directives, "ETag": "\"e\""])
            _ = await cache.load(cacheRequest(path))
        }
        clock.advance(by: 30)
        for path in ["/a", "/b", "/c"] {
            mock.then(status: .badGateway)
            #expect(try await cache.load(cacheRequest(path)).get().status == .badGateway, "\(path)")
        }
        // 501 and other 5xx the RFC does not name are the server's answer.
        ok(["Cache-Control": "max-age=10, stale-if-error=60", "ETag": "\"e\""])
        _ = await cache.load(cacheRequest("/d"))
        clock.advance(by: 30)
        mock.then(status: .notImplemented)
        #expect(try await cache.load(cacheRequest("/d")).get().status == .notImplemented)
        mock.then(status: .gatewayTimeout)
        #expect(try await cache.load(cacheRequest("/d")).get().status == .ok)
    }

    // MARK: Unsafe methods

    @Test func aSuccessfulUnsafeRequestInvalidatesItsURLAndSameOriginLocations() async throws {
        let cache = makeCache()
        for path in ["/items/1", "/items/2", "/items/3"] {
            ok(["Cache-Control": "max-age=600"])
            _ = await cache.load(cacheRequest(path))
        }
        ok(["Cache-Control": "max-age=600"])
        _ = await cache.load(HTTPRequest(host: "other.example.com", path: "/items/3"))
        #expect(mock.receivedRequests.count == 4)

        mock.then(
            status: .created,
            headers: [
                "Location": "/items/2", "Content-Location": "https://other.example.com/items/3",
            ])
        _ = await cache.load(cacheRequest("/items/1", method: .post))
        for _ in 0..<3 { ok(["Cache-Control": "max-age=600"]) }
        let statuses = try await ["/items/1", "/items/2", "/items/3"].asyncMap {
            try await cache.load(cacheRequest($0)).get().cacheStatus ?? ""
        }
        #expect(statuses.map { $0.hasPrefix("Cache; hit") } == [false, false, true])
        let other = try await cache.load(HTTPRequest(host: "other.example.com", path: "/items/3")).get()
        #expect(other.cacheStatus?.hasPrefix("Cache; hit") == true)
    }

    @Test func aFailedUnsafeRequestInvalidatesNothing() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=600"])
        mock.then(status: .internalServerError)
        mock.then(failWith: .cannotConnect)
        _ = await cache.load(cacheRequest())
        _ = await cache.load(cacheRequest(method: .delete))
        _ = await cache.load(cacheRequest(method: "PURGE"))
        #expect(try await cache.load(cacheRequest()).get().cacheStatus?.hasPrefix("Cache; hit") == true)
    }

    // MARK: Authorization (RFC 9111 §3.5)

    @Test func aResponseToARequestWithAuthorizationIsStoredOnlyWhereASharedCacheCouldStoreIt() async throws {
        let cache = makeCache()
        let authorized: HTTPHeaders = ["Authorization": "Bearer t"]
        for control in [
            "max-age=60", "private, max-age=60", "public, max-age=60", "must-revalidate, max-age=60",
            "s-maxage=60, max-age=60",
        ] {
            ok(["Cache-Control": control])
            let path = "/" + control.filter(\.isLetter)
            let response = try await cache.load(cacheRequest(path, headers: authorized)).get()
            let stored = response.cacheStatus?.hasSuffix("; stored") == true
            #expect(
                stored == ["public", "must-revalidate", "s-maxage"].contains { control.hasPrefix($0) }, "\(control)")
        }
    }

    @Test func thePrivateCachePolicyStoresAuthorizedResponsesLikeAnyOther() async throws {
        let cache = makeCache(policy: .privateCacheRules)
        ok(["Cache-Control": "private, max-age=60"])
        _ = await cache.load(cacheRequest(headers: ["Authorization": "Bearer t"]))
        #expect(
            try await cache.load(cacheRequest(headers: ["Authorization": "Bearer t"])).get().cacheStatus
                == "Cache; hit; ttl=60")
    }

    // MARK: What the cache leaves alone

    @Test func requestsTheCacheCannotKeyOrAnswerPassUntouched() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=600"])
        _ = await cache.load(cacheRequest())
        let passing = [
            cacheRequest(method: .head),
            cacheRequest(headers: ["Range": "bytes=0-1, 4-5"]),  // several ranges (one is answered from the store)
            HTTPRequest(path: "/people/42"),  // relative: no host yet
            cacheRequest(headers: ["X-Bad": "a\r\nInjected: yes"]),  // the terminal refuses it
            HTTPRequest(host: "api.example.com", path: "/people/42", body: DataBody(Data("x".utf8))),
            streamed(cacheRequest()),
        ]
        for request in passing {
            mock.then(status: .noContent)
            let response = try await cache.load(request).get()
            #expect(response.status == .noContent)
            #expect(response.cacheStatus == nil)
        }
        #expect(mock.receivedRequests.count == 1 + passing.count)
    }

    @Test func aStreamedResponseIsNeitherStoredNorAnsweredFromTheStore() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=600"])
        _ = try await cache.load(streamed(cacheRequest("/streamed"))).get()
        ok(["Cache-Control": "max-age=600"], body: "buffered")
        let buffered = try await cache.load(cacheRequest("/streamed")).get()
        #expect(buffered.text == "buffered")
        #expect(buffered.cacheStatus == "Cache; fwd=uri-miss; fwd-status=200; stored")
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func itDescribesItsStoreAndPolicy() {
        #expect(
            Cache(store: MemoryCacheStore(), authorizationPolicy: .privateCacheRules).configurationDescription
                == "store: MemoryCacheStore, authorizationPolicy: privateCacheRules")
    }

    private func streamed(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        request.responseDelivery = .stream
        return request
    }

    @Test func theKeyIgnoresCaseOfSchemeAndHostDefaultPortsAndFragments() async throws {
        let cache = makeCache()
        ok(["Cache-Control": "max-age=600"])
        _ = await cache.load(HTTPRequest(url: URL(string: "https://api.example.com/a?x=1")!))
        for url in ["HTTPS://API.Example.com:443/a?x=1", "https://api.example.com/a?x=1#top"] {
            #expect(
                try await cache.load(HTTPRequest(url: URL(string: url)!)).get().cacheStatus?.hasPrefix("Cache; hit")
                    == true)
        }
        for url in [
            "https://api.example.com/a?x=2", "http://api.example.com/a?x=1", "https://api.example.com:8443/a?x=1",
        ] {
            mock.then(status: .noContent)
            #expect(try await cache.load(HTTPRequest(url: URL(string: url)!)).get().status == .noContent)
        }
    }

    @Test func setCookieAndHopByHopFieldsAreNotStored() async throws {
        let cache = makeCache()
        ok([
            "Cache-Control": "max-age=60", "Set-Cookie": "session=abc", "Connection": "close, X-Hop", "X-Hop": "1",
            "Keep-Alive": "timeout=5", "X-Kept": "yes",
        ])
        let first = try await cache.load(cacheRequest()).get()
        #expect(first.headers["Set-Cookie"] == "session=abc")  // the caller of the miss sees everything
        let hit = try await cache.load(cacheRequest()).get()
        #expect(hit.headers["Set-Cookie"] == nil && hit.headers["X-Hop"] == nil && hit.headers["Keep-Alive"] == nil)
        #expect(hit.headers["X-Kept"] == "yes")
    }

    @Test func removeResponseAndRemoveAllResponses() async throws {
        let cache = makeCache()
        for path in ["/a", "/b"] {
            ok(["Cache-Control": "max-age=600"])
            _ = await cache.load(cacheRequest(path))
        }
        await cache.removeResponse(for: cacheRequest("/a"))
        mock.then(status: .noContent)
        #expect(try await cache.load(cacheRequest("/a")).get().status == .noContent)
        #expect(try await cache.load(cacheRequest("/b")).get().cacheStatus?.hasPrefix("Cache; hit") == true)
        await cache.removeAllResponses()
        mock.then(status: .noContent)
        #expect(try await cache.load(cacheRequest("/b")).get().status == .noContent)
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

import Foundation
import Testing

@testable import HTTP

/// The cache's decisions, driven state by state without a loader, a store or a clock.
@Suite(.noHang) struct CacheTransactionTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func entry(_ headers: HTTPHeaders, at date: Date? = nil, body: String = "body") -> CacheEntry {
        let date = date ?? start
        var headers = headers
        if !headers.contains("Date") { headers["Date"] = HTTPDateText.format(date) }
        return CacheEntry(
            status: .ok, headers: headers, body: Data(body.utf8), url: nil, requestDate: date, responseDate: date)
    }

    func transaction(_ request: HTTPRequest = cacheRequest()) -> CacheTransaction {
        CacheTransaction(request: request, authorizationPolicy: .sharedCacheRules)
    }

    @Test func aGetIsLookedUpUnderItsMethodAndURL() {
        var get = transaction(HTTPRequest(url: URL(string: "HTTPS://API.example.COM:443/a/b?q=1#f")!))
        guard case .lookUp(let key) = get.start(now: start) else {
            Issue.record("not looked up")
            return
        }
        #expect(key == "GET https://api.example.com/a/b?q=1")
    }

    @Test func otherSafeMethodsPassAndUnsafeOnesAreSentToInvalidate() {
        for method in [HTTPMethod.options, .trace] {
            var safe = transaction(cacheRequest(method: method))
            guard case .pass = safe.start(now: start) else {
                Issue.record("\(method) not passed")
                continue
            }
        }
        for method in [HTTPMethod.post, .put, .patch, .delete, "PROPFIND"] {
            var unsafe = transaction(cacheRequest(method: method))
            guard case .forward = unsafe.start(now: start) else {
                Issue.record("\(method) not forwarded")
                continue
            }
            let response = HTTPResponse(request: cacheRequest(method: method), status: .noContent)
            guard case .deliver(_, .remove(let keys)) = unsafe.received(.success(response), now: start) else {
                Issue.record("\(method) invalidated nothing")
                continue
            }
            #expect(keys == ["GET https://api.example.com/people/42"])
        }
    }

    @Test func aHeadLooksUpTheGetResponseIsSentAsItIsAndA200WithTheSameValidatorsUpdatesIt() {
        var head = transaction(cacheRequest(method: .head))
        guard case .lookUp(let key) = head.start(now: start) else {
            Issue.record("HEAD not looked up")
            return
        }
        #expect(key == "GET https://api.example.com/people/42")
        let stored = entry(["Cache-Control": "max-age=10", "ETag": "\"a\"", "X-Version": "1"])
        guard case .forward(let sent) = head.lookedUp(stored, now: start + 60) else {
            Issue.record("HEAD not sent")
            return
        }
        #expect(sent.method == .head && sent.headers["If-None-Match"] == nil)
        let response = HTTPResponse(
            request: sent, status: .ok, headers: ["Cache-Control": "max-age=100", "ETag": "\"a\"", "X-Version": "2"])
        guard
            case .deliver(.success(let delivered), .store(let updated, let storedKey, _)) =
                head.received(.success(response), now: start + 60)
        else {
            Issue.record("the stored response was not updated")
            return
        }
        #expect(delivered.headers["X-Version"] == "2" && delivered.cacheStatus == nil)
        #expect(storedKey == key)
        #expect(updated.headers["X-Version"] == "2" && updated.body == stored.body)
        #expect(updated.metadata.freshnessLifetime == 100)

        // Another ETag: the stored response is not the one the HEAD describes any more.
        var other = transaction(cacheRequest(method: .head))
        _ = other.start(now: start)
        _ = other.lookedUp(stored, now: start)
        let changed = HTTPResponse(request: sent, status: .ok, headers: ["ETag": "\"b\""])
        guard case .deliver(_, .remove(let keys)) = other.received(.success(changed), now: start) else {
            Issue.record("the stored response was not removed")
            return
        }
        #expect(keys == [key])
    }

    @Test func pragmaNoCacheIsAMemberOfTheFieldNotASubstring() {
        let fresh = entry(["Cache-Control": "max-age=100"])
        for (pragma, isHit) in [("x-no-cache", true), ("no-cache-please", true), ("foo, No-Cache", false)] {
            var pragmatic = transaction(cacheRequest(headers: ["Pragma": pragma]))
            _ = pragmatic.start(now: start)
            switch pragmatic.lookedUp(fresh, now: start + 1) {
            case .respond: #expect(isHit, "Pragma: \(pragma)")
            default: #expect(!isHit, "Pragma: \(pragma)")
            }
        }
    }

    @Test func aFreshEntryIsAHitWithItsAgeAndTTL() throws {
        var hit = transaction()
        _ = hit.start(now: start)
        let action = hit.lookedUp(entry(["Cache-Control": "max-age=100"]), now: start + 40)
        guard case .respond(let response) = action else {
            Issue.record("not a hit: \(action)")
            return
        }
        #expect(response.headers["Age"] == "40")
        #expect(response.cacheStatus == "Cache; hit; ttl=60")
        #expect(response.text == "body")
    }

    @Test func aStaleEntryWithAValidatorIsValidatedAndA304IsDeliveredAsTheStored200() {
        var validation = transaction()
        _ = validation.start(now: start)
        let stored = entry(["Cache-Control": "max-age=10", "ETag": "\"t\"", "X-A": "old"])
        guard case .forward(let conditional) = validation.lookedUp(stored, now: start + 20) else {
            Issue.record("not validated")
            return
        }
        #expect(conditional.headers["If-None-Match"] == "\"t\"")
        let notModified = HTTPResponse(request: conditional, status: .notModified, headers: ["X-A": "new"])
        guard
            case .deliver(.success(let response), .store(let freshened, let key, _)) =
                validation.received(.success(notModified), now: start + 21)
        else {
            Issue.record("the 304 was not turned into the stored response")
            return
        }
        #expect(key == "GET https://api.example.com/people/42")
        #expect(response.status == .ok && response.text == "body" && response.headers["X-A"] == "new")
        #expect(freshened.responseDate == start + 21 && freshened.requestDate == start + 20)
        #expect(freshened.headers.values(for: "X-A") == ["new"])
        #expect(freshened.headers["Date"] == HTTPDateText.format(start + 21))
    }

    @Test func aStaleEntryWithoutAValidatorIsFetchedAgainAndKeptForStaleIfError() {
        var refetch = transaction()
        _ = refetch.start(now: start)
        let stored = entry(["Cache-Control": "max-age=10, stale-if-error=100"])
        guard case .forward(let request) = refetch.lookedUp(stored, now: start + 20) else {
            Issue.record("not sent")
            return
        }
        #expect(request.headers["If-None-Match"] == nil && request.headers["If-Modified-Since"] == nil)
        let failure = HTTPError(.cannotConnect, request: request)
        guard case .deliver(.success(let stale), .none) = refetch.received(.failure(failure), now: start + 21) else {
            Issue.record("the stale entry was not served")
            return
        }
        #expect(stale.cacheStatus == "Cache; fwd=stale; detail=stale-if-error")
    }

    @Test func staleWhileRevalidateRespondsAndABackgroundTransactionRevalidates() {
        var foreground = transaction()
        _ = foreground.start(now: start)
        let stored = entry(["Cache-Control": "max-age=10, stale-while-revalidate=30", "Last-Modified": "x"])
        guard case .respondAndRevalidate(let stale, _, let request) = foreground.lookedUp(stored, now: start + 25)
        else {
            Issue.record("not served stale")
            return
        }
        #expect(stale.cacheStatus == "Cache; hit; ttl=-15; detail=stale-while-revalidate")
        #expect(request.headers["If-Modified-Since"] == "x")
        var background = CacheTransaction(
            revalidating: stored, key: "k", for: cacheRequest(), authorizationPolicy: .sharedCacheRules,
            sentAt: start + 25)
        // The background transaction is validating: a 503 leaves the entry alone, a 304 freshens it.
        var failed = background
        guard
            case .deliver(_, .none) =
                failed.received(.success(HTTPResponse(request: request, status: .serviceUnavailable)), now: start + 26)
        else {
            Issue.record("a failed background revalidation changed the store")
            return
        }
        guard
            case .deliver(_, .store(let freshened, _, _)) =
                background.received(.success(HTTPResponse(request: request, status: .notModified)), now: start + 26)
        else {
            Issue.record("a 304 did not freshen the entry")
            return
        }
        #expect(freshened.responseDate == start + 26)
    }

    @Test func onlyIfCachedNeverForwards() {
        var request = cacheRequest()
        request.cachePolicy = .onlyIfCached
        var empty = transaction(request)
        _ = empty.start(now: start)
        guard case .respond(let timeout) = empty.lookedUp(nil, now: start) else {
            Issue.record("forwarded")
            return
        }
        #expect(timeout.status == .gatewayTimeout)
        var mustRevalidate = transaction(request)
        _ = mustRevalidate.start(now: start)
        guard
            case .respond(let refused) = mustRevalidate.lookedUp(
                entry(["Cache-Control": "max-age=1, must-revalidate"]), now: start + 5)
        else {
            Issue.record("forwarded")
            return
        }
        #expect(refused.status == .gatewayTimeout)
    }

    @Test func aNewResponseIsStoredOnlyWhenStorableAndUsable() {
        func update(
            _ headers: HTTPHeaders, status: HTTPStatus = .ok, request: HTTPRequest = cacheRequest()
        )
            -> String
        {
            var miss = transaction(request)
            _ = miss.start(now: start)
            _ = miss.lookedUp(nil, now: start)
            let response = HTTPResponse(request: request, status: status, headers: headers)
            switch miss.received(.success(response), now: start) {
            case .deliver(_, .store): return "store"
            case .deliver(_, .remove): return "remove"
            case .deliver(_, .none): return "none"
            case .forward: return "forward"
            }
        }
        #expect(update(["Cache-Control": "max-age=1"]) == "store")
        #expect(update(["ETag": "\"x\""]) == "store")  // stale at once, but revalidatable
        #expect(update([:]) == "none")  // stale at once with nothing to revalidate it by
        #expect(update(["Cache-Control": "stale-if-error=60"]) == "store")
        #expect(update(["Cache-Control": "no-store, max-age=60"]) == "remove")
        #expect(update(["Cache-Control": "max-age=60"], status: .partialContent) == "none")
        #expect(update(["Cache-Control": "max-age=60"], status: 599) == "store")
        #expect(update(["ETag": "\"x\""], status: .found) == "none")  // 302: not heuristically cacheable
        #expect(update(["Cache-Control": "max-age=60", "Vary": "Accept, *"]) == "none")
        let authorized = cacheRequest(headers: ["Authorization": "Basic dTpw"])
        #expect(update(["Cache-Control": "max-age=60"], request: authorized) == "none")
        #expect(update(["Cache-Control": "public, max-age=60"], request: authorized) == "store")
    }

    @Test func weakComparisonIgnoresTheWeakPrefix() {
        #expect(CacheTransaction.weaklyMatch("W/\"a\"", "\"a\""))
        #expect(CacheTransaction.weaklyMatch(" \"a\" ", "W/\"a\""))
        #expect(!CacheTransaction.weaklyMatch("\"a\"", "\"b\""))
    }
}

extension CacheTransaction {
    /// The store answered with at most one variant.
    mutating func lookedUp(_ found: CacheEntry?, now: Date) -> LookupAction {
        lookedUp(found.map { [$0] } ?? [], now: now)
    }
}

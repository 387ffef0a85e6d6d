import Foundation
import HTTP

/// A wall clock that moves only when a test says so, for `Cache(now:)`.
final class ManualDate: Sendable {
    private let current: Locked<Date>

    /// Starts at `start`; 2027-01-15 08:00:00 UTC by default.
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Locked(start)
    }

    var now: Date { current.value }

    /// The closure to give the cache.
    var closure: @Sendable () -> Date { { [current] in current.value } }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 += seconds }
    }

    /// `now` plus `offset` seconds, as an HTTP-date.
    func httpDate(_ offset: TimeInterval = 0) -> String {
        HTTPDateText.format(now.addingTimeInterval(offset))
    }
}

enum HTTPDateText {
    /// An IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

extension HTTPResponse {
    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The `Cache-Status` member this package's cache added (the last one).
    var cacheStatus: String? { headers.values(for: "Cache-Status").last }
}

/// A request for `path` on `https://api.example.com`.
func cacheRequest(
    _ path: String = "/people/42", method: HTTPMethod = .get, headers: HTTPHeaders = [:]
)
    -> HTTPRequest
{
    HTTPRequest(method: method, host: "api.example.com", path: path, headers: headers)
}

/// A cache over a MockLoader with a manual clock, for the suites that drive the cache through its loader.
protocol CacheFixture {
    var clock: ManualDate { get }
    var mock: MockLoader { get }
}

extension CacheFixture {
    func makeCache(
        store: any CacheStore = MemoryCacheStore(), policy: Cache.AuthorizationPolicy = .sharedCacheRules
    ) -> Cache {
        let cache = Cache(store: store, authorizationPolicy: policy, now: clock.closure)
        cache.nextLoader = mock
        return cache
    }

    /// Queues a 200 with `headers`, dated when it is sent.
    @discardableResult
    func ok(_ headers: HTTPHeaders, body: String = "stored body") -> MockLoader {
        mock.then { [clock] request in
            var headers = headers
            if !headers.contains("Date") { headers["Date"] = clock.httpDate() }
            return .success(HTTPResponse(request: request, status: .ok, headers: headers, body: Data(body.utf8)))
        }
    }
}

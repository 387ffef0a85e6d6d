import Foundation
import HTTP
import HTTPMetricsIntegration
import MetricsTestKit
import ObservabilityTestSupport
import Testing

@testable import HTTPMetricsIntegration

@Suite(.noHang) struct CacheMetricsTests {
    @Test func aCacheMissThenAHitAreCounted() async throws {
        let metrics = TestMetrics()
        let mock = MockLoader().then(status: .ok, headers: ["Cache-Control": "max-age=60"], body: Data("{}".utf8))
        let chain = Observe(MetricsObserver(factory: metrics)) --> Cache() --> mock
        let request = HTTPRequest(host: "api.example.com", path: "/people/42")

        _ = await chain.load(request)
        _ = await chain.load(request)

        #expect(mock.receivedRequests.count == 1)
        let miss = [("http.request.method", "GET"), ("http.cache.result", "miss"), ("http.cache.fwd", "uri-miss")]
        #expect(try metrics.expectCounter("http.client.cache.requests", miss).totalValue == 1)
        let hit = [("http.request.method", "GET"), ("http.cache.result", "hit")]
        #expect(try metrics.expectCounter("http.client.cache.requests", hit).totalValue == 1)
        // The hit never reached the terminal: one attempt, two loads.
        #expect(metrics.counterTotal(label: "http.client.requests") == 1)
        #expect(metrics.counterTotal(label: "http.client.loads") == 2)
    }

    @Test func aRevalidationIsCounted() async throws {
        let metrics = TestMetrics()
        let mock = MockLoader()
            .then(status: .ok, headers: ["Cache-Control": "no-cache", "ETag": "\"v1\""], body: Data("{}".utf8))
            .then(status: .notModified, headers: ["ETag": "\"v1\""])
        let chain = Observe(MetricsObserver(factory: metrics)) --> Cache() --> mock
        let request = HTTPRequest(host: "api.example.com", path: "/people/42")

        _ = await chain.load(request)
        let second = await chain.load(request)

        #expect(second.response?.status == .ok)
        #expect(mock.receivedRequests.last?.headers["If-None-Match"] == "\"v1\"")
        let revalidated = [
            ("http.request.method", "GET"), ("http.cache.result", "revalidated"), ("http.cache.fwd", "stale"),
        ]
        #expect(try metrics.expectCounter("http.client.cache.requests", revalidated).totalValue == 1)
    }

    @Test func aLoadWithoutACacheIsNotCounted() async throws {
        let metrics = TestMetrics()
        let chain = Observe(MetricsObserver(factory: metrics)) --> MockLoader().then(status: .ok)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(metrics.counters(label: "http.client.cache.requests").isEmpty)
    }

    @Test(
        arguments: [
            ("Cache; hit; ttl=42", "hit", nil),
            ("Cache; hit; ttl=-3; detail=stale-while-revalidate", "hit", nil),
            ("Cache; fwd=uri-miss; fwd-status=200; stored", "miss", "uri-miss"),
            ("Cache; fwd=stale; fwd-status=304; stored", "revalidated", "stale"),
            ("Cache; fwd=stale; fwd-status=200", "miss", "stale"),
            ("Cache; fwd=stale; fwd-status=503; detail=stale-if-error", "stale", "stale"),
            ("Cache; detail=only-if-cached", "miss", nil),
            ("CDN; hit, Cache;fwd=vary-miss;fwd-status=200", "miss", "vary-miss"),
            ("Cache; fwd=\"/people?token=x\"", "miss", "other"),
        ] as [(String, String, String?)])
    func theCachesMemberIsRead(value: String, result: String, reason: String?) throws {
        let response = HTTPResponse(
            request: HTTPRequest(host: "api.example.com"), status: .ok, headers: ["Cache-Status": value])
        let status = try #require(CacheStatus(response))
        #expect(status.result == result)
        #expect(status.forwardReason == reason)
    }

    @Test func anotherCachesMemberAloneIsNotTheCaches() {
        let response = HTTPResponse(
            request: HTTPRequest(host: "api.example.com"), status: .ok, headers: ["Cache-Status": "CDN; hit; ttl=10"])
        #expect(CacheStatus(response) == nil)
    }
}

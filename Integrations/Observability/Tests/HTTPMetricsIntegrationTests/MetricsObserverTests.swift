import CoreMetrics
import Foundation
import HTTP
import HTTPAuth
import HTTPMetricsIntegration
import MetricsTestKit
import ObservabilityTestSupport
import Testing

/// The origin's dimensions of `https://api.example.com`.
let apiOrigin = [("url.scheme", "https"), ("server.address", "api.example.com"), ("server.port", "443")]

extension TestMetrics {
    /// Every dimension of every metric made: the metric's label, the dimension's name and its value.
    var allDimensions: [(label: String, name: String, value: String)] {
        let metrics: [(label: String, dimensions: [(String, String)])] =
            counters.map { ($0.label, $0.dimensions) } + meters.map { ($0.label, $0.dimensions) }
            + recorders.map { ($0.label, $0.dimensions) } + timers.map { ($0.label, $0.dimensions) }
        return metrics.flatMap { metric in metric.dimensions.map { (metric.label, $0.0, $0.1) } }
    }

    /// The values of the timers with `label` whose dimensions include `dimensions`.
    func timerValues(_ label: String, _ dimensions: [(String, String)] = []) -> [Int64] {
        timers(label: label, dimensions: dimensions).flatMap(\.values)
    }
}

@Suite(.noHang) struct MetricsObserverTests {
    /// A token refresh is a credential flow: counted once and timed, on the load that needed it; the token request
    /// itself is the loader's own, no load of the app's.
    @Test func aTokenRefreshIsCountedOnceAsACredentialFlow() async throws {
        let metrics = TestMetrics()
        let endpoints = OAuthEndpoints(
            authorization: URL(string: "https://id.example.com/authorize")!,
            token: URL(string: "https://id.example.com/token")!)
        let configuration = OAuthConfiguration(
            endpoints: .known(endpoints), clientID: "app", redirectURI: URL(string: "app:/cb")!,
            resourceOrigins: ["api.example.com"])
        let expired = OAuthCredentials(
            accessToken: "old", refreshToken: "r1", expirationDate: Date(timeIntervalSinceNow: -60))
        let tokens = #"{"access_token":"new","token_type":"Bearer","expires_in":3600}"#
        let mock = MockLoader()
            .then(status: .ok, headers: ["Content-Type": "application/json"], body: Data(tokens.utf8))
            .then(status: .ok)
        let chain =
            Observe(MetricsObserver(factory: metrics)) --> OAuth(configuration: configuration, credentials: expired)
            --> mock
        var request = HTTPRequest(host: "api.example.com", path: "/me")
        request.authenticationMethod = .oauth

        #expect(await chain.load(request).response?.status == .ok)

        let refreshed = [("http.client.credential.outcome", "refreshed")] + apiOrigin
        #expect(try metrics.expectCounter("http.client.credential.flows", refreshed).totalValue == 1)
        #expect(try metrics.expectTimer("http.client.credential.flow.duration", refreshed).values.count == 1)
        #expect(metrics.counterTotal(label: "http.client.loads") == 1)
    }

    @Test func aLoadAndItsAttemptAreCountedTimedAndNoLongerActive() async throws {
        let metrics = TestMetrics()
        let mock = MockLoader().then(status: .ok, body: Data(count: 213))
        let chain = Observe(MetricsObserver(factory: metrics)) --> mock

        _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/people/42"))

        let outcome =
            [
                ("http.request.method", "GET"), ("http.response.status_class", "2xx"),
                ("http.response.status_code", "200"),
            ] + apiOrigin
        #expect(try metrics.expectCounter("http.client.loads", outcome).totalValue == 1)
        #expect(try metrics.expectCounter("http.client.requests", outcome).totalValue == 1)
        #expect(try metrics.expectTimer("http.client.load.duration", outcome).values.count == 1)
        #expect(try metrics.expectTimer("http.client.request.duration", outcome).values.count == 1)
        let loadTime = try #require(metrics.timerValues("http.client.load.duration").first)
        let attemptTime = try #require(metrics.timerValues("http.client.request.duration").first)
        #expect(loadTime >= attemptTime && attemptTime >= 0)
        #expect(try metrics.expectMeter("http.client.active_loads").values == [1, 0])
        let active = try metrics.expectMeter(
            "http.client.active_requests", [("http.request.method", "GET")] + apiOrigin)
        #expect(active.values == [1, 0])
    }

    @Test func retriesAreAttemptsOfOneLoad() async throws {
        let metrics = TestMetrics()
        let mock = MockLoader().then(status: .serviceUnavailable).then(failWith: .cannotConnect).then(status: .ok)
        let chain = Observe(MetricsObserver(factory: metrics)) --> retryAtOnce(attempts: 3) --> mock

        let result = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(result.response?.status == .ok)
        #expect(metrics.counterTotal(label: "http.client.loads") == 1)
        #expect(metrics.counterTotal(label: "http.client.requests") == 3)
        #expect(metrics.counterTotal(label: "http.client.requests", dimensions: [("error.type", "503")]) == 1)
        #expect(metrics.counterTotal(label: "http.client.requests", dimensions: [("error.type", "cannotConnect")]) == 1)
        #expect(
            metrics.counterTotal(label: "http.client.requests", dimensions: [("http.response.status_class", "2xx")])
                == 1)
        #expect(metrics.counterTotal(label: "http.client.retries") == 2)
        #expect(
            metrics.counterTotal(label: "http.client.retries", dimensions: [("http.response.status_class", "5xx")]) == 1
        )
        #expect(metrics.timerValues("http.client.request.duration").count == 3)
        #expect(try metrics.expectMeter("http.client.active_loads").lastValue == 0)
        #expect(metrics.meters(label: "http.client.active_requests").allSatisfy { $0.lastValue == 0 })
    }

    @Test func aFailedLoadIsCountedByItsErrorType() async throws {
        let metrics = TestMetrics()
        let chain = Observe(MetricsObserver(factory: metrics)) --> MockLoader().then(failWith: .timedOut)

        _ = await chain.load(HTTPRequest(method: .delete, host: "api.example.com", path: "/people/42"))

        let dimensions = [("http.request.method", "DELETE"), ("error.type", "timedOut")] + apiOrigin
        #expect(try metrics.expectCounter("http.client.loads", dimensions).totalValue == 1)
        #expect(
            metrics.counters(label: "http.client.loads").allSatisfy { counter in
                !counter.dimensions.contains { $0.0 == "http.response.status_class" }
            })
    }

    @Test func anUnknownMethodIsOtherAndTheObserversOwnDimensionsAreAdded() async throws {
        let metrics = TestMetrics()
        let observer = MetricsObserver(factory: metrics, dimensions: [("service", "people")])
        let chain = Observe(observer) --> MockLoader().then(status: .noContent)

        _ = await chain.load(HTTPRequest(method: HTTPMethod(rawValue: "PURGE"), host: "api.example.com", port: 8443))

        let dimensions = [
            ("http.request.method", "_OTHER"), ("http.response.status_class", "2xx"),
            ("http.response.status_code", "204"), ("url.scheme", "https"), ("server.address", "api.example.com"),
            ("server.port", "8443"), ("service", "people"),
        ]
        #expect(try metrics.expectCounter("http.client.loads", dimensions).totalValue == 1)
        #expect(try metrics.expectMeter("http.client.active_loads", [("service", "people")]).lastValue == 0)
        #expect("\(observer)" == "MetricsObserver(dimensions: service=people)")
    }

    @Test func redirectsAreCountedByTheirStatus() async throws {
        let metrics = TestMetrics()
        let mock = MockLoader().then(status: .movedPermanently, headers: ["Location": "/v2/people/42"]).then(
            status: .ok)
        let chain = Observe(MetricsObserver(factory: metrics)) --> FollowRedirects() --> mock

        _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/v1/people/42"))

        let dimensions = [("http.request.method", "GET"), ("http.response.status_code", "301")] + apiOrigin
        #expect(try metrics.expectCounter("http.client.redirects", dimensions).totalValue == 1)
        #expect(metrics.counterTotal(label: "http.client.requests") == 2)
        #expect(metrics.counterTotal(label: "http.client.loads") == 1)
    }

    @Test func withoutABackendNoEventIsMadeForIt() async throws {
        let discarding = MetricsObserver(factory: NOOPMetricsHandler.instance)
        let recording = MetricsObserver(factory: TestMetrics())
        let kinds: [HTTPEvent.Kind] = [.loadStarted, .attemptFinished, .loadFinished, .init(rawValue: "custom")]
        #expect(kinds.allSatisfy { !discarding.isInterested(in: $0) })
        #expect(kinds.allSatisfy { recording.isInterested(in: $0) })

        // Alone in its `Observe`, it lets the terminal skip the attempt's events: their results are never built.
        let built = Locked(0)
        final class Terminal: HTTPLoader, @unchecked Sendable {  // Sendable: `built` is locked
            let built: Locked<Int>
            init(built: Locked<Int>) { self.built = built }
            override func load(_ request: HTTPRequest) async -> HTTPResult {
                let result = HTTPResult.success(HTTPResponse(request: request, status: .ok))
                request.emit(.attemptFinished, result: counted(result))
                return result
            }

            /// `result`, counting that it was built for an event.
            func counted(_ result: HTTPResult) -> HTTPResult {
                built.withLock { $0 += 1 }
                return result
            }
        }
        let chain = Observe(discarding) --> Terminal(built: built)
        #expect(await chain.load(HTTPRequest(host: "api.example.com")).response?.status == .ok)
        #expect(built.current == 0)
    }

    @Test func aCancelledLoadLeavesNothingActive() async throws {
        let metrics = TestMetrics()
        let mock = MockLoader().then(heldUntilCancelled)
        let chain = Observe(MetricsObserver(factory: metrics)) --> mock

        let load = Task { await chain.load(HTTPRequest(host: "api.example.com")) }
        try await eventually("\(mock.receivedRequests.count) received") { mock.receivedRequests.count == 1 }
        #expect(try metrics.expectMeter("http.client.active_loads").lastValue == 1)
        load.cancel()
        _ = try await load.finished()

        #expect(try metrics.expectMeter("http.client.active_loads").lastValue == 0)
        #expect(metrics.meters(label: "http.client.active_requests").allSatisfy { $0.lastValue == 0 })
        #expect(metrics.counterTotal(label: "http.client.loads", dimensions: [("error.type", "cancelled")]) == 1)
    }

    @Test func noDimensionCarriesAPathAQueryOrASecret() async throws {
        let metrics = TestMetrics()
        let chain =
            Observe(MetricsObserver(factory: metrics)) --> Cache() --> retryAtOnce(attempts: 2) --> FollowRedirects()
            --> Secrets.server()

        _ = await chain.load(Secrets.request())
        _ = await chain.load(Secrets.request())

        let dimensions = metrics.allDimensions
        #expect(dimensions.count > 20)
        for (label, name, value) in dimensions {
            #expect(Secrets.found(in: name + value).isEmpty, "\(label) \(name)=\(value)")
            #expect(!value.contains("/") && !value.contains("?") && !value.contains("="), "\(label) \(name)=\(value)")
        }
    }
}

import Foundation
import HTTP
import HTTPMetricsIntegration
import MetricsTestKit
import ObservabilityTestSupport
import Testing

@Suite(.noHang) struct CircuitBreakerMetricsTests {
    @Test func eachStateChangeIsCountedAndTheOriginsStateIsAGauge() async throws {
        let metrics = TestMetrics()
        let configuration = CircuitBreaker.Configuration(
            failureRateThreshold: 0.5, minimumNumberOfRequests: 1, openDuration: .zero)
        let breaker = CircuitBreaker(configuration: configuration)
        let recorder = CircuitBreakerMetrics(breaker, factory: metrics, dimensions: [("breaker", "api")])
        let running = Task { await recorder.run() }
        let chain = breaker --> MockLoader().then(status: .serviceUnavailable).then(status: .ok)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))  // fails: the circuit opens
        _ = await chain.load(HTTPRequest(host: "api.example.com"))  // the trial, after no open time: it closes

        let transitions = "http.client.circuit_breaker.transitions"
        try await eventually("\(metrics.counters(label: transitions).map(\.dimensions))") {
            metrics.counterTotal(label: transitions) == 3
        }
        func changes(_ from: String, _ to: String) -> [(String, String)] {
            apiOrigin + [
                ("http.client.circuit_breaker.previous_state", from), ("http.client.circuit_breaker.state", to),
                ("breaker", "api"),
            ]
        }
        #expect(try metrics.expectCounter(transitions, changes("closed", "open")).totalValue == 1)
        #expect(try metrics.expectCounter(transitions, changes("open", "half-open")).totalValue == 1)
        #expect(try metrics.expectCounter(transitions, changes("half-open", "closed")).totalValue == 1)
        let state = try metrics.expectGauge("http.client.circuit_breaker.state", apiOrigin + [("breaker", "api")])
        #expect(state.values == [2, 1, 0])
        running.cancel()
        try await running.finished()
    }

    @Test func runEndsWhenTheBreakerIsGone() async throws {
        var breaker: CircuitBreaker? = CircuitBreaker()
        let recorder = CircuitBreakerMetrics(breaker!, factory: TestMetrics())
        let running = Task { await recorder.run() }

        breaker = nil

        #expect(breaker == nil)
        try await running.finished()
    }
}

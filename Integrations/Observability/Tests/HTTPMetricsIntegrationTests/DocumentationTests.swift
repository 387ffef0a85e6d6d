import CoreMetrics
import Foundation
import HTTP
import HTTPMetricsIntegration
import MetricsTestKit
import ObservabilityTestSupport
import Testing

// The `swift` blocks of Sources/HTTPMetricsIntegration/HTTPMetricsIntegration.docc, each in a test, run in a
// `withMetricsFactory` scope so that the samples' default factory is a `TestMetrics`. Keep them in step.

@Suite(.noHang) struct MetricsDocumentationTests {
    @Test func theLandingPagesChainRecordsLoadsGaugesAndTransitions() async throws {
        let metrics = TestMetrics()
        try await withMetricsFactory(metrics) {
            // From HTTPMetricsIntegration.md:
            let throttle = Throttle(maximumNumberOfRequests: 6)
            let breaker = CircuitBreaker()
            let chain =
                Observe(MetricsObserver()) --> ApplyEnvironment(environment: .production) --> Cache()
                --> Retry() --> breaker --> throttle --> URLSessionLoader()
            let gauges = LoaderGauges([.running(in: throttle), .waiting(in: throttle)])
            let breakerMetrics = CircuitBreakerMetrics(breaker)

            #expect("\(chain)".contains("CircuitBreaker"))
            gauges.sample()
            #expect(try metrics.expectGauge("http.client.throttle.waiting").values == [0])
            let recording = Task { await breakerMetrics.run() }
            recording.cancel()
            try await recording.finished()
        }
        #expect(try metrics.expectMeter("http.client.active_loads").values.isEmpty)
    }

    @Test func theArticlesSamplerAndRecorderRunUntilCancelled() async throws {
        let metrics = TestMetrics()
        try await withMetricsFactory(metrics) {
            let throttle = Throttle(maximumNumberOfRequests: 1)
            let retry = Retry()
            let breaker = CircuitBreaker()
            // From RecordingMetrics.md:
            let gauges = LoaderGauges([.running(in: throttle), .waiting(in: throttle), .waiting(in: retry)])
            let sampler = Task { await gauges.run(every: .seconds(10)) }
            let breakerMetrics = CircuitBreakerMetrics(breaker)
            let recorder = Task { await breakerMetrics.run() }

            try await eventually("\(metrics.recorders.map(\.label))") {
                metrics.recorders.count == 3 && metrics.recorders.allSatisfy { !$0.values.isEmpty }
            }
            sampler.cancel()
            recorder.cancel()
            try await sampler.finished()
            try await recorder.finished()
        }
        #expect(try metrics.expectGauge("http.client.retry.waiting").values.first == 0)
    }
}

import Foundation
import HTTP
import HTTPMetricsIntegration
import MetricsTestKit
import ObservabilityTestSupport
import Testing

@Suite(.noHang) struct LoaderGaugesTests {
    @Test func aSampleSetsEachGaugeToItsLoadersCount() async throws {
        let metrics = TestMetrics()
        let throttle = Throttle(maximumNumberOfRequests: 1)
        let mock = MockLoader().then(heldUntilCancelled).then(heldUntilCancelled)
        let chain = throttle --> mock
        let gauges = LoaderGauges(
            [.running(in: throttle), .waiting(in: throttle, dimensions: [("pool", "api")])], factory: metrics)

        gauges.sample()
        #expect(try metrics.expectGauge("http.client.throttle.running").values == [0])

        let loads = (0..<3).map { _ in Task { await chain.load(HTTPRequest(host: "api.example.com")) } }
        try await eventually("running \(throttle.runningCount), waiting \(throttle.waitingCount)") {
            throttle.runningCount == 1 && throttle.waitingCount == 2
        }
        gauges.sample()

        #expect(try metrics.expectGauge("http.client.throttle.running").lastValue == 1)
        #expect(try metrics.expectGauge("http.client.throttle.waiting", [("pool", "api")]).lastValue == 2)
        for load in loads { load.cancel() }
        for load in loads { #expect(try await load.finished().error?.code == .cancelled) }
        gauges.sample()
        #expect(try metrics.expectGauge("http.client.throttle.waiting", [("pool", "api")]).lastValue == 0)
    }

    @Test func runSamplesUntilItsTaskIsCancelled() async throws {
        let metrics = TestMetrics()
        let retry = Retry()
        let deduplicate = Deduplicate()
        let count = Locked(0)
        let gauges = LoaderGauges(
            [
                .waiting(in: retry), .inFlight(in: deduplicate), .waiting(in: deduplicate),
                .init(label: "http.client.auth.waiting") {
                    count.withLock {
                        $0 += 1; return $0
                    }
                },
            ], factory: metrics)

        let sampler = Task { await gauges.run(every: .milliseconds(5)) }
        try await eventually("\(count.current) samples") { count.current >= 3 }
        sampler.cancel()
        try await sampler.finished()

        let samples = count.current
        #expect(try metrics.expectGauge("http.client.auth.waiting").values.count == samples)
        #expect(try metrics.expectGauge("http.client.retry.waiting").values.allSatisfy { $0 == 0 })
        #expect(try metrics.expectGauge("http.client.deduplicate.in_flight").values.count == samples)
        #expect(try metrics.expectGauge("http.client.deduplicate.waiting").values.count == samples)
    }

    @Test func aGaugeOfALoaderThatIsGoneReadsZero() throws {
        let metrics = TestMetrics()
        var throttle: Throttle? = Throttle(maximumNumberOfRequests: 1)
        let gauges = LoaderGauges([.running(in: throttle!)], factory: metrics)
        throttle = nil

        gauges.sample()

        #expect(throttle == nil)
        #expect(try metrics.expectGauge("http.client.throttle.running").values == [0])
    }
}

import Foundation
import HTTP
import HTTPMetricsIntegration
import MetricsTestKit
import ObservabilityTestSupport
import Testing

@Suite(.noHang) struct MetricsStressTests {
    @Test func underConcurrentLoadsCancelsAndAResetEachLoadIsCountedOnceAndNothingStaysActive() async throws {
        let metrics = TestMetrics()
        let mock = MockLoader()
        let count = 300
        for index in 0..<(count * 2) {
            mock.then { request in
                if index % 4 == 0 { return .success(HTTPResponse(request: request, status: .serviceUnavailable)) }
                try? await Task.sleep(for: .milliseconds(index % 5))
                return .success(HTTPResponse(request: request, status: .ok))
            }
        }
        let throttle = Throttle(maximumNumberOfRequests: 8)
        let chain = Observe(MetricsObserver(factory: metrics)) --> retryAtOnce(attempts: 2) --> throttle --> mock

        let loads = (0..<count).map { _ in Task { await chain.load(HTTPRequest(host: "api.example.com")) } }
        for (index, load) in loads.enumerated() where index % 7 == 3 { load.cancel() }
        try await eventually("\(mock.receivedRequests.count) received") { mock.receivedRequests.count >= 10 }
        let reset = Task { await chain.reset(mode: .cancel) }
        for load in loads { _ = try await load.finished() }
        try await reset.finished()

        #expect(metrics.counterTotal(label: "http.client.loads") == Int64(count))
        #expect(metrics.timerValues("http.client.load.duration").count == count)
        #expect(try metrics.expectMeter("http.client.active_loads").lastValue == 0)
        #expect(try metrics.expectMeter("http.client.active_loads").values.count == count * 2)
        // Every attempt the terminal started, it finished: each one counted once, nothing left active.
        #expect(metrics.counterTotal(label: "http.client.requests") == Int64(mock.receivedRequests.count))
        #expect(metrics.meters(label: "http.client.active_requests").allSatisfy { $0.lastValue == 0 })
    }
}

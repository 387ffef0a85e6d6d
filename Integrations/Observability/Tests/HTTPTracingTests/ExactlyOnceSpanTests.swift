import Foundation
import HTTP
import HTTPTracing
import InMemoryTracing
import ObservabilityTestSupport
import Testing
import Tracing

/// One span ends per load and per attempt, whatever ends it: a response, a failure, a cancellation, a reset.
@Suite(.noHang) struct ExactlyOnceSpanTests {
    @Test func aCancelledLoadEndsItsSpansOnce() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader().then(heldUntilCancelled)
        let chain = TraceLoads(tracer: tracer) --> retryAtOnce(attempts: 3) --> TraceAttempts(tracer: tracer) --> mock

        let load = Task { await chain.load(HTTPRequest(host: "api.example.com")) }
        try await eventually("\(mock.receivedRequests.count) received") { mock.receivedRequests.count == 1 }
        #expect(tracer.activeSpans.count == 2)
        load.cancel()
        let result = try await load.finished()

        #expect(result.error?.code == .cancelled)
        let spans = tracer.clientSpans
        #expect(spans.count == 2)
        #expect(spans.allSatisfy { $0["error.type"] == "cancelled" })
        #expect(tracer.activeSpans.isEmpty)
    }

    @Test func aResetEndsTheSpansOfTheLoadsItCancels() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader().then(heldUntilCancelled).then(heldUntilCancelled)
        let chain = TraceLoads(tracer: tracer) --> TraceAttempts(tracer: tracer) --> mock

        let loads = (0..<2).map { _ in Task { await chain.load(HTTPRequest(host: "api.example.com")) } }
        try await eventually("\(mock.receivedRequests.count) received") { mock.receivedRequests.count == 2 }
        let reset = Task { await chain.reset(mode: .cancel) }
        for load in loads { #expect(try await load.finished().error?.code == .cancelled) }
        try await reset.finished()
        // Refused while nothing runs? No: the reset is over, and a new load is traced as usual.
        let refusedOrServed = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(refusedOrServed.error?.code == .cannotConnect)  // the mock has no handler left
        let spans = tracer.clientSpans
        #expect(spans.count == 6)
        #expect(spans.filter { $0["error.type"] == "cancelled" }.count == 4)
        #expect(Set(spans.map(\.spanID)).count == 6)
        #expect(tracer.activeSpans.isEmpty)
    }

    @Test func aLoadRefusedDuringAResetEndsItsSpanOnce() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader().then(heldUntilCancelled)
        let chain = TraceLoads(tracer: tracer) --> TraceAttempts(tracer: tracer) --> mock

        let held = Task { await chain.load(HTTPRequest(host: "api.example.com")) }
        try await eventually("\(mock.receivedRequests.count) received") { mock.receivedRequests.count == 1 }
        let reset = Task { await chain.reset(mode: .drain) }  // waits for the held load
        try await eventually("resetting: \(chain.isResetting)") { chain.isResetting }
        let refused = await chain.load(HTTPRequest(host: "api.example.com"))
        held.cancel()
        _ = try await held.finished()
        try await reset.finished()

        #expect(refused.error?.code == .resetInProgress)
        let spans = tracer.clientSpans
        #expect(spans.filter { $0["error.type"] == "resetInProgress" }.count == 1)
        #expect(spans.count == 3)  // the held load and its attempt, and the refused load (refused before its attempt)
        #expect(tracer.activeSpans.isEmpty)
    }

    @Test func underConcurrentLoadsCancelsAndAResetEverySpanEndsOnce() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader()
        let count = 300
        var random = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &random)
        print("ExactlyOnceSpanTests seed: \(seed)")
        for index in 0..<(count * 3) {
            mock.then { request in
                if index % 3 == 0 { return .success(HTTPResponse(request: request, status: .serviceUnavailable)) }
                try? await Task.sleep(for: .milliseconds(Int(index % 7)))
                return .success(HTTPResponse(request: request, status: .ok))
            }
        }
        let chain = TraceLoads(tracer: tracer) --> retryAtOnce(attempts: 2) --> TraceAttempts(tracer: tracer) --> mock

        let loads = (0..<count).map { _ in Task { await chain.load(HTTPRequest(host: "api.example.com")) } }
        for (index, load) in loads.enumerated() where (UInt64(index) &* 2_654_435_761 ^ seed) % 5 == 0 { load.cancel() }
        try await eventually("\(mock.receivedRequests.count) received") { mock.receivedRequests.count >= 10 }
        let reset = Task { await chain.reset(mode: .cancel) }
        var results: [HTTPResult] = []
        for load in loads { results.append(try await load.finished()) }
        try await reset.finished()

        let spans = tracer.clientSpans
        let loadSpans = spans.filter { $0.parentSpanID == nil }
        let attemptSpans = spans.filter { $0.parentSpanID != nil }
        #expect(loadSpans.count == count)
        #expect(Set(spans.map(\.spanID)).count == spans.count)
        let loadIDs = Set(loadSpans.map(\.spanID))
        #expect(attemptSpans.allSatisfy { loadIDs.contains($0.parentSpanID ?? "") })
        // Every request sent carried its own attempt's span (an attempt refused by the reset has a span, and sent
        // nothing).
        let sentSpanIDs = mock.receivedRequests.compactMap { $0.headers[InMemoryTracer.spanIDKey] }
        #expect(sentSpanIDs.count == mock.receivedRequests.count)
        #expect(Set(sentSpanIDs).count == sentSpanIDs.count)
        #expect(Set(sentSpanIDs).isSubset(of: Set(attemptSpans.map(\.spanID))))
        // Each load's span says how it ended: the same outcome as its result.
        let outcomes = results.map { $0.error.map { "\($0.code)" } ?? $0.response.map { "\($0.status.rawValue)" } }
        let spanOutcomes = loadSpans.map { $0["error.type"] ?? $0["http.response.status_code"] }
        #expect(outcomes.sorted { ($0 ?? "") < ($1 ?? "") } == spanOutcomes.sorted { ($0 ?? "") < ($1 ?? "") })
        #expect(tracer.activeSpans.isEmpty)
    }
}

import Foundation
import HTTP
import Testing

@Suite(.noHang) struct PropagateTraceContextTests {
    /// `Observe → Retry → PropagateTraceContext → mock`, retrying every failure at once, up to three attempts.
    private func retryingChain(
        _ mock: MockLoader, trace: PropagateTraceContext = PropagateTraceContext()
    )
        -> HTTPLoader
    {
        Observe { _ in }
            --> Retry(strategy: Backoff.constant(delay: .zero, maximumNumberOfAttempts: 3), budget: nil)
            --> trace --> mock
    }

    @Test func eachRequestGetsAValidTraceParent() async throws {
        let mock = MockLoader().then(status: .ok)
        _ = await (PropagateTraceContext() --> mock).load(HTTPRequest(host: "example.com"))
        let sent = try #require(mock.receivedRequests.first)
        let header = try #require(sent.headers["traceparent"])
        #expect(header.wholeMatch(of: /00-[0-9a-f]{32}-[0-9a-f]{16}-00/) != nil, "\(header)")
        #expect(sent.traceParent?.description == header)
        #expect(sent.loadID != nil)  // stamped here, with nothing above
        #expect(sent.headers["tracestate"] == nil)
    }

    @Test func theAttemptsOfALoadShareItsTraceAndEachHasItsOwnParent() async throws {
        let mock = MockLoader().then(status: .serviceUnavailable).then(failWith: .timedOut).then(status: .ok)
        let result = await retryingChain(mock).load(HTTPRequest(host: "example.com"))
        #expect(result.response?.status == .ok)
        let parents = try mock.receivedRequests.map { try #require($0.traceParent) }
        #expect(parents.count == 3)
        #expect(Set(parents.map(\.traceID)).count == 1)
        #expect(Set(parents.map(\.parentID)).count == 3)
    }

    @Test func concurrentLoadsOfOneRequestValueAreDifferentTraces() async throws {
        let mock = MockLoader()
        for _ in 0..<4 { mock.then(status: .ok) }
        let chain = retryingChain(mock, trace: PropagateTraceContext(sampled: true))
        let request = HTTPRequest(host: "example.com", path: "/userinfo")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { _ = await chain.load(request) } }
        }
        let parents = try mock.receivedRequests.map { try #require($0.traceParent) }
        #expect(Set(parents.map(\.traceID)).count == 4)
        #expect(parents.allSatisfy { $0.flags == .sampled })
    }

    @Test func aValidTraceParentOfTheAppsIsSentAsItIs() async {
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let request = HTTPRequest(host: "example.com", headers: ["TraceParent": own, "tracestate": "vendor=1"])
        _ = await retryingChain(mock).load(request)
        #expect(mock.receivedRequests.count == 2)
        for sent in mock.receivedRequests {
            #expect(sent.headers.values(for: "traceparent") == [own])
            #expect(sent.headers["tracestate"] == "vendor=1")
        }
    }

    @Test func anInvalidTraceParentIsReplacedAndItsTraceStateDropped() async throws {
        let mock = MockLoader().then(status: .ok).then(status: .ok).then(status: .ok)
        let chain = PropagateTraceContext() --> mock
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let requests = [
            HTTPRequest(host: "example.com", headers: ["traceparent": "00-zz", "tracestate": "vendor=1"]),
            HTTPRequest(
                host: "example.com", headers: ["traceparent": valid, "Traceparent": valid, "tracestate": "a=1"]),
            HTTPRequest(host: "example.com", headers: ["tracestate": "vendor=2"]),
        ]
        for request in requests { _ = await chain.load(request) }
        let sent = mock.receivedRequests
        for request in sent {
            #expect(request.headers.values(for: "traceparent").count == 1)
            #expect(
                request.traceParent != nil
                    && request.traceParent?.traceID.description != "4bf92f3577b34da6a3ce929d0e0e4736")
        }
        #expect(sent[0].headers["tracestate"] == nil && sent[1].headers["tracestate"] == nil)
        #expect(sent[2].headers["tracestate"] == "vendor=2")  // passed through with a trace parent of our own
    }

    /// The app's current span, as a tracing library keeps it: in a task-local value.
    private enum CurrentSpan {
        @TaskLocal static var context: TraceParent?
    }

    @Test func theAppsSpanGivesTheTraceAndBecomesTheParentOfEachAttempt() async throws {
        let mock = MockLoader().then(status: .badGateway).then(status: .ok)
        let chain = retryingChain(mock, trace: PropagateTraceContext { _ in CurrentSpan.context })
        let span = try #require(TraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        await CurrentSpan.$context.withValue(span) {
            _ = await chain.load(HTTPRequest(host: "example.com"))
        }
        let parents = try mock.receivedRequests.map { try #require($0.traceParent) }
        #expect(parents.count == 2)
        #expect(parents.allSatisfy { $0.traceID == span.traceID && $0.flags == span.flags })
        #expect(Set(parents.map(\.parentID) + [span.parentID]).count == 3)
    }

    @Test func generatedIdentifiersAreDistinctAndNeverZero() async throws {
        let seed = SplitMix64.seed()
        print("PropagateTraceContextTests seed: \(seed) (HTTP_TEST_SEED=\(seed) replays it)")
        var random = SplitMix64(seed: seed)
        let loads = 2_000
        let mock = MockLoader()
        var attempts = 0
        for _ in 0..<loads {
            let failures = Int.random(in: 0...2, using: &random)
            attempts += failures + 1
            for _ in 0..<failures { mock.then(status: .serviceUnavailable) }
            mock.then(status: .ok)
        }
        let chain = retryingChain(mock)
        for index in 0..<loads { _ = await chain.load(HTTPRequest(host: "example.com", path: "/\(index)")) }
        let sent = mock.receivedRequests
        #expect(sent.count == attempts)
        let parents = try sent.map { try #require($0.traceParent) }
        #expect(Set(parents.map(\.parentID)).count == attempts)
        #expect(Set(parents.map(\.traceID)).count == loads)
        #expect(Set(sent.map(\.loadID)).count == loads)
        // A trace per load: the attempts of one load (one path) share it.
        let tracesByPath = Dictionary(grouping: zip(sent.map(\.path), parents), by: \.0).mapValues {
            Set($0.map(\.1.traceID))
        }
        #expect(tracesByPath.values.allSatisfy { $0.count == 1 })
    }
}

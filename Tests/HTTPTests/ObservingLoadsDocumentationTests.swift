import Foundation
import HTTP
import HTTPTestSupport
import Testing

// The code samples of HTTP.docc/ObservingLoads.md ("Observing loads: metrics, events and tracing"), kept identical to
// the article. Chains that end in a `URLSessionLoader` are built, never loaded through; the same pieces are run over
// `MockLoader`.

/// A stand-in for `Synchronization.Mutex`, which ThreadSanitizer cannot see on Linux (see
/// DocumentationExamplesTests.swift).
private final class Mutex<Value>: Sendable {
    private let lock: Locked<Value>
    init(_ value: Value) { lock = Locked(value) }
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result { try lock.withLock(body) }
}

extension ServerEnvironment {
    fileprivate static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

// "Read what a transfer took".
private func logTimings(of result: HTTPResult) {
    guard let metrics = result.response?.metrics ?? result.error?.metrics else { return }
    let head = metrics.timeToResponseHead.map { ", first byte after \($0)" } ?? ""
    print("attempt \(metrics.attemptNumber) took \(metrics.duration)\(head)")
    print("started \(metrics.startDate), \(metrics.responseBodyBytesReceived) bytes received")
}

// "Observe every load".
private final class LoadTimes: HTTPEventObserver {
    private let durations = Mutex<[String: [Duration]]>([:])

    func handle(_ event: HTTPEvent) {
        guard event.kind == .loadFinished, let duration = event.duration else { return }
        durations.withLock { $0[event.request.host ?? "-", default: []].append(duration) }
    }

    func durations(for host: String) -> [Duration] {
        durations.withLock { $0[host] ?? [] }
    }
}

// "Report from a loader of your own".
private final class CannedTerminal: HTTPLoader, @unchecked Sendable {  // Sendable: no state
    override func load(_ request: HTTPRequest) async -> HTTPResult {
        var metrics = HTTPMetrics(startingNowFor: request)
        request.emit(.attemptStarted)
        var response = HTTPResponse(request: request, status: .ok, body: Data(#"{"id":42}"#.utf8))
        metrics.responseHeadReceived = .now
        metrics.end = .now
        metrics.responseBodyBytesReceived = Int64(response.body.count)
        response.metrics = metrics
        request.emit(.attemptFinished, result: .success(response))
        return .success(response)
    }
}

// "Propagate a trace context".
private enum CurrentSpan {
    @TaskLocal static var traceParent: TraceParent?
}

private struct AttemptSpans: HTTPEventObserver {
    let record: @Sendable (TraceParent, Duration) -> Void

    func handle(_ event: HTTPEvent) {
        guard event.kind == .attemptFinished, let span = event.request.traceParent, let metrics = event.metrics
        else { return }
        record(span, metrics.duration)
    }
}

@Suite(.noHang) struct ObservingLoadsDocumentationTests {
    @Test func timingsOfAResultAndOfAFailure() async {
        let mock = MockLoader().then(status: .ok, body: Data(count: 213)).then(failWith: .timedOut)
        let success = await mock.load(HTTPRequest(host: "api.example.com"))
        let failure = await mock.load(HTTPRequest(host: "api.example.com"))
        logTimings(of: success)
        logTimings(of: failure)
        #expect(success.response?.metrics?.responseBodyBytesReceived == 213)
        #expect(failure.error?.metrics?.attemptNumber == 1)
    }

    @Test func anObserverCollectsTheDurationsOfLoads() async {
        let times = LoadTimes()
        let chain = Observe(times) --> ApplyEnvironment(environment: .production) --> Retry() --> URLSessionLoader()
        #expect(chain.nextLoader?.nextLoader is Retry)

        let mock = MockLoader().then(status: .ok).then(status: .notFound)
        let testChain = Observe(times) --> ApplyEnvironment(environment: .production) --> Retry() --> mock
        _ = await testChain.load(HTTPRequest(path: "/people/42"))
        _ = await testChain.load(HTTPRequest(path: "/people/43"))
        #expect(times.durations(for: "api.example.com").count == 2)
        #expect(times.durations(for: "elsewhere.example").isEmpty)
    }

    @Test func aTerminalOfYourOwnReportsItsAttempts() async throws {
        let kinds = Locked<[HTTPEvent.Kind]>([])
        let chain = Observe { event in kinds.withLock { $0.append(event.kind) } } --> CannedTerminal()
        let response = try await chain.load(HTTPRequest(host: "api.example.com")).get()
        #expect(kinds.value == [.loadStarted, .attemptStarted, .attemptFinished, .loadFinished])
        let metrics = try #require(response.metrics)
        #expect(metrics.responseBodyBytesReceived == 9 && metrics.timeToResponseHead != nil)
        #expect(metrics.start <= metrics.responseHeadReceived! && metrics.responseHeadReceived! <= metrics.end)
    }

    @Test func tracedChainsAndTheAppsSpan() async throws {
        let traced =
            PrintLoader()
            --> ApplyEnvironment(environment: .production)
            --> Retry()
            --> PropagateTraceContext(sampled: true)
            --> URLSessionLoader()
        #expect(traced.nextLoader?.nextLoader?.nextLoader is PropagateTraceContext)

        let joined = PropagateTraceContext { _ in CurrentSpan.traceParent }
        let spans = Locked<[TraceParent]>([])
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let chain =
            Observe(AttemptSpans { span, _ in spans.withLock { $0.append(span) } })
            --> Retry(strategy: Backoff.constant(delay: .zero, maximumNumberOfAttempts: 2), budget: nil)
            --> joined --> mock
        let app = try #require(TraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        _ = await CurrentSpan.$traceParent.withValue(app) {
            await chain.load(HTTPRequest(host: "api.example.com"))
        }
        // Two attempts, each a span of the app's trace with an id of its own.
        #expect(spans.value.count == 2)
        #expect(spans.value.allSatisfy { $0.traceID == app.traceID })
        #expect(Set(spans.value.map(\.parentID)).count == 2)
        #expect(spans.value.map(\.description) == mock.receivedRequests.map { $0.headers["traceparent"] ?? "" })
    }

    @Test func aGaugeIsSampledWhileRequestsWait() async throws {
        let reported = Locked<[Int]>([])
        @Sendable func report(_ name: String, _ value: Int) {
            if name == "http.throttle.queue" { reported.withLock { $0.append(value) } }
        }
        // A terminal that holds every request until the gate opens.
        let gate = Locked<(isOpen: Bool, held: [CheckedContinuation<Void, Never>])>((false, []))
        let terminal = MockLoader()
        for _ in 0..<8 {
            terminal.then { request in
                await withCheckedContinuation { continuation in
                    let isOpen = gate.withLock { gate -> Bool in
                        if !gate.isOpen { gate.held.append(continuation) }
                        return gate.isOpen
                    }
                    if isOpen { continuation.resume() }
                }
                return .success(HTTPResponse(request: request, status: .ok))
            }
        }
        let throttle = Throttle(maximumNumberOfRequests: 6)
        let chain = throttle --> terminal
        let loads = (0..<8).map { _ in Task { await chain.load(HTTPRequest(host: "api.example.com")) } }
        try await eventually { throttle.runningCount == 6 && throttle.waitingCount == 2 }

        let sampler = Task {
            while !Task.isCancelled {
                report("http.throttle.queue", throttle.waitingCount)  // your metrics system
                try? await Task.sleep(for: .seconds(10))
            }
        }
        try await eventually { !reported.value.isEmpty }
        sampler.cancel()
        #expect(reported.value.first == 2)

        let held = gate.withLock { gate in
            gate.isOpen = true
            defer { gate.held = [] }
            return gate.held
        }
        for continuation in held { continuation.resume() }
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(throttle.runningCount == 0 && throttle.waitingCount == 0)
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        let article = DocumentationSamples.catalog(of: "HTTP", fromTestFile: #filePath)
            .appendingPathComponent("ObservingLoads.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(missing.isEmpty, "ObservingLoads.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

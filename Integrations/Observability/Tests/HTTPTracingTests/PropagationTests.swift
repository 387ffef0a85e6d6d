import Foundation
import HTTP
import HTTPTracing
import InMemoryTracing
import Instrumentation
import ObservabilityTestSupport
import Testing
import Tracing

@Suite(.noHang) struct PropagationTests {
    @Test func withW3CPropagationTheAttemptsTraceparentGoesOutAndPropagateTraceContextKeepsIt() async throws {
        let tracer = W3CTracer()
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let chain =
            TraceLoads(tracer: tracer) --> retryAtOnce(attempts: 2) --> PropagateTraceContext(sampled: true)
            --> TraceAttempts(tracer: tracer) --> PropagateTraceContext() --> mock

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        let attempts = tracer.recorder.clientSpans.dropLast()
        #expect(attempts.count == 2)
        let sent = mock.receivedRequests.map { $0.headers.values(for: TraceParent.headerName) }
        #expect(sent.map(\.count) == [1, 1])
        for (fields, attempt) in zip(sent, attempts) {
            let parent = try #require(fields.first.flatMap { TraceParent($0) })
            #expect(parent.traceID.description == attempt.traceID)
            #expect(parent.parentID.description == attempt.spanID)
            #expect(parent.flags.contains(.sampled))
        }
    }

    @Test func withOnlyTheLoadTracedTheLoadsTraceparentGoesOut() async throws {
        let tracer = W3CTracer()
        let mock = MockLoader().then(status: .ok)
        let chain = TraceLoads(tracer: tracer) --> PropagateTraceContext() --> mock

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        let load = try #require(tracer.recorder.clientSpans.first)
        let parent = try #require(
            mock.receivedRequests.first?.headers[TraceParent.headerName].flatMap { TraceParent($0) })
        #expect(parent.parentID.description == load.spanID)
    }

    @Test func withAnInstrumentThatWritesNoTraceparentPropagateTraceContextAddsOne() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader().then(status: .ok)
        let chain = TraceLoads(tracer: tracer) --> TraceAttempts(tracer: tracer) --> PropagateTraceContext() --> mock

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        let sent = try #require(mock.receivedRequests.first)
        #expect(sent.headers[InMemoryTracer.spanIDKey] == tracer.clientSpans.first?.spanID)
        #expect(sent.headers[TraceParent.headerName].flatMap { TraceParent($0) } != nil)
    }

    @Test func theTracerOfAWithTracerScopeIsUsedWhenNoneIsGiven() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader().then(status: .ok)
        let chain = TraceLoads() --> TraceAttempts() --> mock

        _ = await withTracer(tracer) {
            await chain.load(HTTPRequest(host: "api.example.com"))
        }

        #expect(tracer.clientSpans.count == 2)
        #expect(mock.receivedRequests.first?.headers[InMemoryTracer.spanIDKey] == tracer.clientSpans.first?.spanID)
    }

    @Test func withoutATracerARequestPassesThroughUntouched() async throws {
        // Nothing in these tests bootstraps the InstrumentationSystem: the installed tracer is the no-op one.
        let mock = MockLoader().then(status: .ok)
        let chain = TraceLoads() --> TraceAttempts() --> mock
        let request = HTTPRequest(host: "api.example.com", headers: ["Accept": "application/json"])

        let result = await chain.load(request)

        #expect(result.response?.status == .ok)
        let sent = try #require(mock.receivedRequests.first)
        #expect(sent.headers == request.headers)
        #expect("\(chain)".contains("TraceLoads(tracer: installed)"))
    }

    @Test func anAttemptTracerGivenExplicitlyTracesBelowALoadWithNothingInstalled() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader().then(status: .ok)
        let chain = TraceLoads() --> TraceAttempts(tracer: tracer) --> mock

        let result = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(result.response?.status == .ok)
        #expect(tracer.clientSpans.count == 1)
        #expect(mock.receivedRequests.first?.headers[InMemoryTracer.spanIDKey] == tracer.clientSpans.first?.spanID)
    }

    @Test func anExplicitNoOpTracerIsNoTracer() async throws {
        let mock = MockLoader().then(status: .ok)
        let chain = TraceLoads(tracer: NoOpTracer()) --> mock

        _ = await ServiceContext.withValue(.topLevel) {
            await chain.load(HTTPRequest(host: "api.example.com"))
        }

        #expect(mock.receivedRequests.first?.headers.isEmpty == true)
    }
}

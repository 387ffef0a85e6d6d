import Foundation
import HTTP
import HTTPTracing
import InMemoryTracing
import ObservabilityTestSupport
import Testing
import Tracing

// The `swift` blocks of Sources/HTTPTracing/HTTPTracing.docc and the loaders' documentation, each in a test, run
// in a `withTracer` scope so that the samples' installed tracer is an `InMemoryTracer`. Keep them in step.

@Suite(.noHang) struct TracingDocumentationTests {
    @Test func theLandingPagesChainHasBothLoadersOnTheInstalledTracer() {
        // From HTTPTracing.md:
        let chain =
            TraceLoads() --> ApplyEnvironment(environment: .production) --> Retry() --> FollowRedirects()
            --> TraceAttempts() --> URLSessionLoader()

        let description = "\(chain)"
        #expect(description.contains("TraceLoads(tracer: installed)"))
        #expect(description.contains("TraceAttempts(tracer: installed)"))
    }

    @Test func theArticlesChainSendsOneTraceparent() async throws {
        let tracer = W3CTracer()
        let mock = MockLoader().then(status: .ok)
        await withTracer(tracer) {
            // From TracingLoads.md, with a MockLoader for the URLSessionLoader:
            let chain =
                TraceLoads() --> Retry() --> PropagateTraceContext(sampled: true) --> TraceAttempts() --> mock

            let result = await chain.load(HTTPRequest(host: "api.example.com"))
            #expect(result.response?.status == .ok)
        }
        let attempt = try #require(tracer.recorder.clientSpans.first)
        let sent = try #require(mock.receivedRequests.first?.headers.values(for: TraceParent.headerName))
        #expect(sent.count == 1)
        #expect(sent.first.flatMap { TraceParent($0) }?.parentID.description == attempt.spanID)
    }
}

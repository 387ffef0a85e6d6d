import Foundation
import HTTP
import HTTPTracing
import InMemoryTracing
import Instrumentation
import ObservabilityTestSupport
import Testing
import Tracing

extension FinishedInMemorySpan {
    /// The attribute's value as text, or `nil`.
    subscript(_ name: String) -> String? {
        switch attributes.get(name) {
        case nil: nil
        case .string(let text): text
        case .int64(let number): "\(number)"
        case let value?: "\(value)"
        }
    }

    /// Every attribute and the status message, as text.
    var rendered: String {
        var text = operationName
        attributes.forEach { name, value in text += " \(name)=\(value)" }
        return text + " status=\(status.map { "\($0.code) \($0.message ?? "")" } ?? "unset")"
    }
}

extension InMemoryTracer {
    /// The finished spans named after a method: the loads' and attempts', not the caller's own.
    var clientSpans: [FinishedInMemorySpan] { finishedSpans.filter { $0.kind == .client } }
}

@Suite(.noHang) struct TraceLoadsTests {
    @Test func aLoadIsAClientSpanWithItsAttemptAsAChildUnderTheCallersSpan() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader().then(status: .ok)
        let chain = TraceLoads(tracer: tracer) --> TraceAttempts(tracer: tracer) --> mock

        let result = await tracer.withSpan("handle request", ofKind: .server) { _ in
            await chain.load(HTTPRequest(host: "api.example.com", path: "/people/42"))
        }

        #expect(result.response?.status == .ok)
        let caller = try #require(tracer.finishedSpans.first { $0.operationName == "handle request" })
        let spans = tracer.clientSpans
        #expect(spans.count == 2)
        let attempt = try #require(spans.first)  // it ends first
        let load = try #require(spans.last)
        #expect(load.parentSpanID == caller.spanID && load.traceID == caller.traceID)
        #expect(attempt.parentSpanID == load.spanID && attempt.traceID == caller.traceID)
        // Numbers are numbers, as the conventions type them.
        #expect(load.attributes.get("server.port") == .int64(443))
        #expect(load.attributes.get("http.response.status_code") == .int64(200))
        for span in spans {
            #expect(span.operationName == "GET")
            #expect(span["http.request.method"] == "GET")
            #expect(span["server.address"] == "api.example.com")
            #expect(span["server.port"] == "443")
            #expect(span["url.full"] == "https://api.example.com/people/42")
            #expect(span["http.response.status_code"] == "200")
            #expect(span["http.request.resend_count"] == nil)
            #expect(span["error.type"] == nil)
            #expect(span.status == nil)
        }
        // The attempt's context went out with the request, through the tracer's own propagation.
        let sent = try #require(mock.receivedRequests.first)
        #expect(sent.headers[InMemoryTracer.spanIDKey] == attempt.spanID)
        #expect(sent.headers[InMemoryTracer.traceIDKey] == caller.traceID)
        #expect(tracer.activeSpans.filter { $0.kind == .client }.isEmpty)
    }

    @Test func retriesAreSiblingAttemptsCountingTheirResends() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader().then(status: .serviceUnavailable).then(failWith: .cannotConnect).then(status: .ok)
        let chain = TraceLoads(tracer: tracer) --> retryAtOnce(attempts: 3) --> TraceAttempts(tracer: tracer) --> mock

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        let spans = tracer.clientSpans
        #expect(spans.count == 4)
        let load = try #require(spans.last)
        let attempts = spans.dropLast()
        #expect(attempts.allSatisfy { $0.parentSpanID == load.spanID })
        #expect(attempts.map { $0["http.request.resend_count"] } == [nil, "1", "2"])
        #expect(attempts.map { $0["error.type"] } == ["503", "cannotConnect", nil])
        #expect(attempts.map { $0.status?.code } == [.error, .error, nil])
        #expect(load["http.request.resend_count"] == "2")
        #expect(load["http.response.status_code"] == "200" && load.status == nil)
        // Each attempt carried its own span's context.
        #expect(mock.receivedRequests.map { $0.headers[InMemoryTracer.spanIDKey] } == attempts.map(\.spanID))
    }

    @Test func redirectHopsAreAttempts() async throws {
        let tracer = InMemoryTracer()
        let mock = MockLoader()
            .then(status: .found, headers: ["Location": "https://cdn.example.com:8443/a/42.png"])
            .then(status: .ok)
        let chain = TraceLoads(tracer: tracer) --> FollowRedirects() --> TraceAttempts(tracer: tracer) --> mock

        _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/avatars/42"))

        let spans = tracer.clientSpans
        #expect(spans.count == 3)
        #expect(spans[0]["url.full"] == "https://api.example.com/avatars/42")
        #expect(spans[0]["http.response.status_code"] == "302")
        #expect(spans[1]["url.full"] == "https://cdn.example.com:8443/a/42.png")
        #expect(spans[1]["server.port"] == "8443")
        #expect(spans[1]["http.request.resend_count"] == "1")
        // The load's attributes are those of the request sent last.
        #expect(spans[2]["server.address"] == "cdn.example.com")
        #expect(spans[2]["http.response.status_code"] == "200")
        #expect(spans[2]["http.request.resend_count"] == "1")
    }

    @Test func aClientErrorAndAFailureMarkTheSpanAsAnError() async throws {
        let tracer = InMemoryTracer()
        let chain = TraceLoads(tracer: tracer) --> MockLoader().then(status: .notFound).then(failureQuotingSecrets)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))
        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        let spans = tracer.clientSpans
        #expect(spans.map { $0["error.type"] } == ["404", "cannotConnect"])
        #expect(spans.map { $0.status?.code } == [.error, .error])
        let message = try #require(spans.last?.status?.message)
        #expect(message.hasPrefix("could not connect to https://"))
        #expect(Secrets.found(in: message).isEmpty, "\(message)")
    }

    @Test func aRelativeRequestGetsItsServerFromTheRequestSent() async throws {
        let tracer = InMemoryTracer()
        let environment = try #require(ServerEnvironment(baseURL: URL(string: "http://localhost:8080/v1")!))
        let chain =
            TraceLoads(tracer: tracer) --> ApplyEnvironment(environment: environment)
            --> MockLoader().then(status: .ok)

        _ = await chain.load(HTTPRequest(path: "/people"))

        let load = try #require(tracer.clientSpans.first)
        #expect(load["server.address"] == "localhost")
        #expect(load["server.port"] == "8080")
        #expect(load["url.full"] == "http://localhost:8080/v1/people")
    }

    @Test func anUnknownMethodIsNamedHTTP() async throws {
        let tracer = InMemoryTracer()
        let chain = TraceLoads(tracer: tracer) --> MockLoader().then(status: .ok)

        _ = await chain.load(HTTPRequest(method: HTTPMethod(rawValue: "PURGE"), host: "api.example.com"))

        let span = try #require(tracer.clientSpans.first)
        #expect(span.operationName == "HTTP")
        #expect(span["http.request.method"] == "_OTHER")
        #expect(span["http.request.method_original"] == "PURGE")
    }

    @Test func theLoadIDIsAnAttributeWhereALoaderStampedOne() async throws {
        let tracer = InMemoryTracer()
        let chain = Observe { _ in } --> TraceLoads(tracer: tracer) --> MockLoader().then(status: .ok)

        let result = await chain.load(HTTPRequest(host: "api.example.com"))

        let load = try #require(result.response?.request.loadID)
        #expect(tracer.clientSpans.first?["http.load_id"] == "\(load.rawValue)")
    }

    @Test func noSecretAppearsInAnySpan() async throws {
        let tracer = InMemoryTracer()
        let chain =
            TraceLoads(tracer: tracer) --> retryAtOnce(attempts: 2) --> FollowRedirects()
            --> TraceAttempts(tracer: tracer) --> Secrets.server()

        let first = await chain.load(Secrets.request())
        let second = await chain.load(Secrets.request())

        #expect(first.error?.code == .cannotConnect)
        #expect(second.error?.code == .unusableRedirect)
        let spans = tracer.clientSpans
        #expect(spans.count == 6)  // two loads: three attempts, then one
        #expect(spans.map { $0["error.type"] }.filter { $0 == "unusableRedirect" }.count == 1)
        for span in spans { #expect(Secrets.found(in: span.rendered).isEmpty, "\(span.rendered)") }
        #expect(spans.first?["url.full"]?.hasPrefix("https://api.example.com/people/42?token=") == true)
    }
}

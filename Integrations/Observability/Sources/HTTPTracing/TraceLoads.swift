public import HTTP
import HTTPObservabilityConventions
import Instrumentation
public import Tracing

/// A loader that records each load through it as an OpenTelemetry client span, parented on the caller's
/// `ServiceContext`, and sends the span's context with the request.
///
/// ```swift
/// let chain =
///     TraceLoads() --> ApplyEnvironment(environment: .production) --> Auth(...) --> Retry()
///     --> FollowRedirects() --> TraceAttempts() --> URLSessionLoader()
/// ```
///
/// The span covers the whole load — every attempt, every wait — and ends exactly once, when the load completes:
/// with a response, a failure, a cancellation or a reset. It is named and attributed as the OpenTelemetry HTTP
/// client conventions say: named after the method (`GET`; `HTTP` for one they do not know), kind `client`, with
/// `http.request.method`, `server.address`, `server.port`, `url.full` (redacted by ``redaction``),
/// `http.response.status_code`, `http.request.resend_count` (the attempts after the first, counted by
/// ``TraceAttempts``), `error.type` (an `HTTPError.Code`, or the status of a `4xx` or `5xx`, which set the
/// span's status to error) and `http.load_id` where a `LoadID` is stamped. The request's attributes are
/// those of the request that was sent last, so a relative request, completed by `ApplyEnvironment` below,
/// has its server too.
///
/// ## Context and propagation
///
/// The span's parent is `ServiceContext.current` when the load starts: the caller's span, since loads run in the
/// caller's task. The loads below run with the span's context as `ServiceContext.current`, and the installed
/// instrument writes it into the request's header fields (`InstrumentationSystem.instrument.inject`; with W3C
/// propagation, a `traceparent`). ``TraceAttempts`` below records each attempt as a child span and writes the
/// attempt's context instead, as the conventions ask: the server's span is then a child of the attempt that reached
/// it. `PropagateTraceContext` sends a request that already carries a valid `traceparent` as it is, so the
/// two agree; with an instrument that writes no `traceparent`, it adds its own.
///
/// ## Tracer
///
/// The installed tracer (`InstrumentationSystem.tracer`, or a `withTracer` scope's) at each load, unless you pass
/// one. With none installed, a load passes through untouched, at the cost of looking the tracer up.
// Safety: configuration is immutable (`let`); the loader keeps no other state.
public final class TraceLoads: HTTPLoader, @unchecked Sendable {
    /// Which values are hidden in `url.full` and status messages.
    public let redaction: Redaction
    private let tracer: (any Tracer)?

    /// Creates a loader that traces each load.
    ///
    /// - Parameters:
    ///   - tracer: The tracer to record spans with and to inject their context; `nil` (the default) for the installed
    ///     one, looked up at each load.
    ///   - redaction: Which values to hide in `url.full` and status messages; `Redaction.standard` by default.
    public init(tracer: (any Tracer)? = nil, redaction: Redaction = .standard) {
        self.tracer = tracer
        self.redaction = redaction
    }

    public override var configurationDescription: String {
        "tracer: \(tracer.map { "\(type(of: $0))" } ?? "installed")"
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        let tracing = Tracing(tracer)
        guard let tracer = tracing.tracer else {
            // No tracer: nothing to record. An instrument that only propagates still gets the caller's context.
            guard tracing.instrument != nil, let context = ServiceContext.current else {
                return await loadNext(request)
            }
            return await loadNext(tracing.injecting(context, into: request))
        }
        let attempts = AttemptCounter()
        var parent = ServiceContext.current ?? .topLevel
        parent[AttemptCounterKey.self] = attempts
        let span = tracer.startSpan(ClientSpan.name(of: request), context: parent, ofKind: .client)
        if span.isRecording { ClientSpan.setRequestAttributes(of: request, on: span, redaction: redaction) }
        let traced = tracing.injecting(span.context, into: request)
        let result = await ServiceContext.withValue(span.context) { await loadNext(traced) }
        if span.isRecording {
            // The request sent last, when it went elsewhere: a relative request completed below, a redirect.
            let sent = result.sentRequest
            if !ClientSpan.hasSameTarget(sent, request) {
                ClientSpan.setRequestAttributes(of: sent, on: span, redaction: redaction)
            }
            let resends = max(attempts.value, sent.attemptNumber) - 1
            if resends > 0 { span.attributes[Conventions.resendCount] = resends }
            ClientSpan.setResultAttributes(of: result, on: span, redaction: redaction)
        }
        span.end()
        return result
    }
}

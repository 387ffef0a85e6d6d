public import HTTP
import HTTPObservabilityConventions
import Instrumentation
public import Tracing

/// A loader that records each attempt through it — each retry, each redirect hop — as an OpenTelemetry client span,
/// a child of the load's span, and sends the attempt's context with it.
///
/// Put it just above the terminal, below `Retry` and `FollowRedirects`, with ``TraceLoads`` at the
/// head of the chain:
///
/// ```swift
/// let chain = TraceLoads() --> Retry() --> FollowRedirects() --> TraceAttempts() --> URLSessionLoader()
/// ```
///
/// Each request passing through gets a span named after its method, kind `client`, parented on
/// `ServiceContext.current` (the load's span that ``TraceLoads`` started, or the caller's without it), with the
/// attributes ``TraceLoads`` documents — `http.request.resend_count` being the number of attempts of the load
/// before this one (retries and redirects alike; without ``TraceLoads`` above, the request's
/// `HTTPRequest.attemptNumber` less one). The installed instrument writes the attempt's context into the
/// request's header fields, replacing the load's, so that the server's span is the attempt's child. The span ends
/// exactly once, when the attempt completes — also when it is cancelled or a reset refuses it.
///
/// Without a tracer, a request passes through untouched.
// Safety: configuration is immutable (`let`); the loader keeps no other state.
public final class TraceAttempts: HTTPLoader, @unchecked Sendable {
    /// Which values are hidden in `url.full` and status messages.
    public let redaction: Redaction
    private let tracer: (any Tracer)?

    /// Creates a loader that traces each attempt.
    ///
    /// - Parameters:
    ///   - tracer: The tracer to record spans with and to inject their context; `nil` (the default) for the installed
    ///     one, looked up at each attempt. Give it the tracer you give ``TraceLoads``.
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
            guard tracing.instrument != nil, let context = ServiceContext.current else {
                return await loadNext(request)
            }
            return await loadNext(tracing.injecting(context, into: request))
        }
        let parent = ServiceContext.current ?? .topLevel
        let resends = parent[AttemptCounterKey.self]?.next() ?? (request.attemptNumber - 1)
        let span = tracer.startSpan(ClientSpan.name(of: request), context: parent, ofKind: .client)
        if span.isRecording {
            ClientSpan.setRequestAttributes(of: request, on: span, redaction: redaction)
            if resends > 0 { span.attributes[Conventions.resendCount] = resends }
        }
        let traced = tracing.injecting(span.context, into: request)
        let result = await ServiceContext.withValue(span.context) { await loadNext(traced) }
        if span.isRecording { ClientSpan.setResultAttributes(of: result, on: span, redaction: redaction) }
        span.end()
        return result
    }
}

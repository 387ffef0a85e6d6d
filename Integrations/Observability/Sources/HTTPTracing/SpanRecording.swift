import HTTP
import HTTPObservabilityConventions
import Instrumentation
import Synchronization
import Tracing

/// The tracer and the instrument a load is traced and propagated with: the ones given to the loader, or those
/// installed (`InstrumentationSystem`, or a `withTracer` scope) when the load starts.
struct Tracing {
    /// The tracer spans are started with; `nil` when none is installed.
    let tracer: (any Tracer)?
    /// The instrument that writes the context into header fields; `nil` when there is none.
    let instrument: (any Instrument)?

    /// Resolves `tracer`, or the installed tracer and instrument when it is `nil`.
    ///
    /// Without anything installed this is one look-up of the installed instrument and a comparison of its type: the
    /// cost of a load that is not traced.
    init(_ tracer: (any Tracer)?) {
        if let tracer {
            self.tracer = type(of: tracer) == NoOpTracer.self ? nil : tracer
            self.instrument = self.tracer
            return
        }
        let instrument = InstrumentationSystem.instrument
        guard type(of: instrument) != NoOpInstrument.self else {
            self.tracer = nil
            self.instrument = nil
            return
        }
        let installed = InstrumentationSystem.tracer
        self.tracer = type(of: installed) == NoOpTracer.self ? nil : installed
        self.instrument = instrument
    }

    /// `request` with `context` written into its header fields by the instrument, if there is one.
    func injecting(_ context: ServiceContext, into request: HTTPRequest) -> HTTPRequest {
        guard let instrument else { return request }
        var injected = request
        instrument.inject(context, into: &injected.headers, using: HeaderFieldsInjector())
        return injected
    }
}

/// Writes the instrument's values into a request's header fields, replacing a field of the same name (a context
/// injected above, for the load, is replaced by the attempt's).
struct HeaderFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier[key] = value
    }
}

/// Counts a load's attempts, for each attempt's `http.request.resend_count`: ``TraceLoads`` puts one in the
/// context of the load's span, and ``TraceAttempts`` below takes a number from it for each attempt.
final class AttemptCounter: Sendable {
    private let count = Atomic<Int>(0)

    /// The number of attempts counted before this one; counts this one.
    func next() -> Int {
        count.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// The number of attempts counted.
    var value: Int { count.load(ordering: .relaxed) }
}

/// The key of a load's ``AttemptCounter`` in a `ServiceContext`.
enum AttemptCounterKey: ServiceContextKey {
    typealias Value = AttemptCounter
    static var nameOverride: String? { "http.load.attempts" }
}

/// Names and attributes of client spans, as the OpenTelemetry HTTP conventions give them.
enum ClientSpan {
    /// `GET`, … : the method; `HTTP` for a method the conventions do not know.
    static func name(of request: HTTPRequest) -> String {
        Conventions.isKnown(request.method) ? request.method.rawValue : "HTTP"
    }

    /// Sets the attributes of `request`: method, URL (redacted), server address and port, the load's identity.
    static func setRequestAttributes(of request: HTTPRequest, on span: any Span, redaction: Redaction) {
        span.updateAttributes { attributes in
            attributes[Conventions.method] = request.conventionalMethod
            if !Conventions.isKnown(request.method) { attributes[Conventions.originalMethod] = request.method.rawValue }
            if let host = request.host {
                attributes[Conventions.serverAddress] = host
                if let port = request.effectivePort { attributes[Conventions.serverPort] = port }
                attributes[Conventions.urlFull] = request.redactedURL(redaction)
            }
            if let load = request.loadID { attributes[Conventions.loadID] = Int64(truncatingIfNeeded: load.rawValue) }
        }
    }

    /// Whether `a` and `b` go to the same URL with the same method: what their attributes show.
    static func hasSameTarget(_ a: HTTPRequest, _ b: HTTPRequest) -> Bool {
        a.host == b.host && a.port == b.port && a.scheme == b.scheme && a.method == b.method
            && a.percentEncodedPath == b.percentEncodedPath && a.percentEncodedQuery == b.percentEncodedQuery
    }

    /// Sets the attributes of `result` — the status code, the error type — and the span's status: an error for a
    /// failure and for a `4xx` or `5xx`, as the conventions ask of a client span.
    static func setResultAttributes(of result: HTTPResult, on span: any Span, redaction: Redaction) {
        let status = result.status ?? result.error?.response?.status
        let errorType = result.errorType
        span.updateAttributes { attributes in
            if let status { attributes[Conventions.statusCode] = status.rawValue }
            if let errorType { attributes[Conventions.errorType] = errorType }
        }
        guard errorType != nil else { return }
        let message = result.error.map { redaction.display(body: $0.message) }
        span.setStatus(SpanStatus(code: .error, message: message))
    }
}

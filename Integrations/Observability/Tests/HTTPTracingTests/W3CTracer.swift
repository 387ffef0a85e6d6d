import InMemoryTracing
import Instrumentation
import Tracing

/// An in-memory tracer whose ids are W3C Trace Context ids (32 and 16 hex digits) and which propagates them as a
/// `traceparent` header field, as an OpenTelemetry tracer with the W3C propagator does.
struct W3CTracer: Tracer {
    typealias Span = InMemorySpan

    let recorder = InMemoryTracer(
        idGenerator: .init(
            nextTraceID: { hex(UInt64.random(in: 1...UInt64.max)) + hex(UInt64.random(in: 1...UInt64.max)) },
            nextSpanID: { hex(UInt64.random(in: 1...UInt64.max)) }
        ))

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> InMemorySpan {
        recorder.startSpan(
            operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line
        )
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    )
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    )
    where Extract.Carrier == Carrier {}
}

/// 16 lowercase hex digits.
private func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

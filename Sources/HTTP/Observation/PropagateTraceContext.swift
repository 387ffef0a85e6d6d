/// A loader that adds a W3C Trace Context `traceparent` header field to each request it sends on, so that the
/// server's traces and logs can be joined with the app's.
///
/// ```swift
/// let chain =
///     PrintLoader() --> ApplyEnvironment(environment: .production) --> Retry()
///     --> PropagateTraceContext(sampled: true) --> URLSessionLoader()
/// // traceparent: 00-<trace id of the load>-<new span id per attempt>-01
/// ```
///
/// Each request passing through gets `00-<trace id>-<parent id>-<flags>` (see ``TraceParent``):
///
/// - **trace id**: the app's, when `context` returns its current span (from a task-local value, say: loads run in
///   the caller's task); otherwise one per load, derived from its ``LoadID`` (stamped here if no loader above did),
///   so every attempt of a load shares it.
/// - **parent id**: a new span id each time a request passes through: with this loader below ``Retry``, each attempt
///   is a span of its own, as the standard intends (the parent id names the caller's side of *this* request). An
///   ``HTTPEventObserver`` that records spans reads it from ``HTTPEvent/request`` (``HTTPRequest/traceParent``).
/// - **flags**: the app's context's, or ``TraceParent/Flags/sampled`` when `sampled` is `true`. It says the caller
///   may record the trace; services that sample by their parent's decision record theirs too.
///
/// A request that already carries one valid `traceparent` is sent as it is: the app's own tracer decided. An invalid
/// one (or several) is replaced, and its `tracestate` dropped with it, as the standard asks of a participant that
/// cannot parse the trace parent; otherwise `tracestate` is passed through untouched.
///
/// ## Where it goes
///
/// Below ``Retry``, with a loader that stamps the load's identity above it — ``Observe`` or ``PrintLoader`` —
/// so that the attempts of a load share its trace id and each has its own parent id. Without one of those above,
/// put it above ``Retry``: every attempt then carries the same `traceparent`. (Below ``Retry`` with nothing above,
/// each attempt would start a trace of its own.)
// Safety: configuration is immutable (`let`).
public final class PropagateTraceContext: HTTPLoader, @unchecked Sendable {
    /// Whether requests of traces begun here carry the ``TraceParent/Flags/sampled`` flag.
    public let isSampled: Bool
    private let context: @Sendable (HTTPRequest) -> TraceParent?

    /// - Parameters:
    ///   - sampled: Whether requests of traces begun here (no `context`) say the caller records the trace. `false`
    ///     by default: an app that records nothing says so.
    ///   - context: The app's current span for a request, if it has one: its trace id and flags are used, and its
    ///     span becomes the parent of each attempt's. Called once per request passing through, in the load's task.
    public init(
        sampled: Bool = false,
        context: @escaping @Sendable (HTTPRequest) -> TraceParent? = { _ in nil }
    ) {
        self.isSampled = sampled
        self.context = context
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        let existing = request.headers.values(for: TraceParent.headerName)
        if existing.count == 1, TraceParent(existing[0]) != nil { return await loadNext(request) }
        var traced = request
        if !existing.isEmpty { traced.headers[TraceParent.stateHeaderName] = nil }
        let parent: TraceParent
        if let span = context(traced) {
            parent = TraceParent(traceID: span.traceID, parentID: .next(), flags: span.flags)
        } else {
            let load = traced.observe()
            parent = TraceParent(traceID: .init(for: load), parentID: .next(), flags: isSampled ? .sampled : [])
        }
        traced.headers[TraceParent.headerName] = parent.description
        return await loadNext(traced)
    }
}

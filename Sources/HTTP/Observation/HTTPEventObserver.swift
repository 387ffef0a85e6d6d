/// Receives the events of the loads it observes: when each starts and finishes, each attempt, each retry.
///
/// Install an observer with ``Observe`` at the head of a chain:
///
/// ```swift
/// struct SlowLoadLogger: HTTPEventObserver {
///     func handle(_ event: HTTPEvent) {
///         guard event.kind == .loadFinished, let duration = event.duration, duration > .seconds(1) else { return }
///         print("slow: \(event.loadID) \(event.request) took \(duration)")
///     }
/// }
///
/// let chain = Observe(SlowLoadLogger()) --> Retry() --> URLSessionLoader()
/// ```
///
/// Events are delivered synchronously, on the task (or the transport's thread) where they happen, in the order
/// they happen for each load; the events of concurrent loads interleave. So ``handle(_:)`` must be quick and must
/// not block: hand anything slow (a file, a network) to a queue or a task of your own. It is called concurrently
/// for concurrent loads, hence `Sendable`: keep mutable state behind a lock.
///
/// An observer that drops some kinds of event — a logger whose level filters them out, metrics without a backend —
/// says so with ``isInterested(in:)``: the loaders then do not make those events for it, and a load whose observers
/// want none of its events costs little more than an unobserved one. One that wants a load's last event only for
/// some outcomes (failures) says so with ``isInterested(in:result:)``.
public protocol HTTPEventObserver: Sendable {
    /// Handles one event. Called synchronously where the event happens; never blocks, never throws.
    func handle(_ event: HTTPEvent)

    /// Whether ``handle(_:)`` would do anything with an event of `kind` now.
    ///
    /// Asked just before an event of that kind is made, for each event: an event that no observer of the load is
    /// interested in is never made (no clock read, no result built), and an observer that is not interested is not
    /// handed it. Answer `false` only for events ``handle(_:)`` would drop, and keep it quick (a comparison): it is
    /// asked for every event of every load. The default implementation answers `true`.
    ///
    /// - Parameter kind: The kind of event about to be made.
    /// - Returns: `false` when ``handle(_:)`` would ignore every event of this kind.
    func isInterested(in kind: HTTPEvent.Kind) -> Bool

    /// Whether ``handle(_:)`` would do anything with an event of `kind` that ends with `result` now: asked instead of
    /// ``isInterested(in:)`` before the last event of a load (``HTTPEvent/Kind/loadFinished``) is made, whose outcome
    /// is known by then.
    ///
    /// For an observer whose interest depends on the outcome — a logger that writes failures at a level it keeps and
    /// successes at one it filters out — so that the event of a load nobody will log is never made. The default
    /// implementation answers ``isInterested(in:)``.
    func isInterested(in kind: HTTPEvent.Kind, result: HTTPResult) -> Bool
}

extension HTTPEventObserver {
    /// `true`: the observer receives every event.
    public func isInterested(in kind: HTTPEvent.Kind) -> Bool { true }

    /// ``isInterested(in:)``: the outcome does not matter to the observer.
    public func isInterested(in kind: HTTPEvent.Kind, result: HTTPResult) -> Bool { isInterested(in: kind) }

    /// Whether the observer wants an event of `kind`, asking about `result` when the event has one known up front.
    fileprivate func wants(_ kind: HTTPEvent.Kind, _ result: HTTPResult?) -> Bool {
        guard let result else { return isInterested(in: kind) }
        return isInterested(in: kind, result: result)
    }
}

extension [any HTTPEventObserver] {
    /// Hands the event `make` builds to the observers interested in `kind` (with `result`, when it is known before the
    /// event is made), in order; builds it only if one is.
    ///
    /// By index into the array itself, whose subscript lends each observer in place: an element read through an
    /// iterator or an `UnsafeBufferPointer` is copied for each call (a retain and a release of a boxed observer).
    func deliver(_ kind: HTTPEvent.Kind, result: HTTPResult? = nil, _ make: () -> HTTPEvent) {
        var index = 0
        while index < count, !self[index].wants(kind, result) { index += 1 }
        guard index < count else { return }
        let event = make()
        self[index].handle(event)
        index += 1
        while index < count {
            if self[index].wants(kind, result) { self[index].handle(event) }
            index += 1
        }
    }
}

/// An observer made of a closure, for `Observe { event in … }`.
struct ClosureObserver: HTTPEventObserver {
    let body: @Sendable (HTTPEvent) -> Void

    func handle(_ event: HTTPEvent) {
        body(event)
    }
}

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
public protocol HTTPEventObserver: Sendable {
    /// Handles one event. Called synchronously where the event happens; never blocks, never throws.
    func handle(_ event: HTTPEvent)
}

/// An observer made of a closure, for `Observe { event in … }`.
struct ClosureObserver: HTTPEventObserver {
    let body: @Sendable (HTTPEvent) -> Void

    func handle(_ event: HTTPEvent) {
        body(event)
    }
}

/// Requests parked until a loader answers them: a table a loader keeps in its ``Locked`` state.
///
/// A request takes an identifier with ``nextID()`` (so that its cancellation handler can find it), then parks
/// its continuation with ``park(_:_:)`` from inside `withCheckedContinuation`. Whoever answers it — the end of
/// a flow, its cancellation, a reset — stores the answer here under the lock with ``answer(_:with:)`` or
/// ``answerAll(with:)``, and resumes the continuation that returns after the lock. The woken request then
/// takes its answer with ``takeAnswer(_:)``, under the lock again.
///
/// The answer goes through the lock rather than through the continuation for ThreadSanitizer's sake. When a
/// continuation is resumed before its task has suspended, the task goes on without a job switch, a hand-over
/// ThreadSanitizer cannot see (swiftlang/swift#57803): it reports the answer's fields, written on one thread
/// and read on another, as a data race. Through the mutex it sees the order. The test suite runs under
/// ThreadSanitizer with `halt_on_error=1`, so the code has to be visibly correct, not only correct.
package struct Waiters<Answer> {
    private var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var answers: [UInt64: Answer] = [:]
    private var lastID: UInt64 = 0

    package init() {}

    /// The number of requests parked and not yet answered.
    package var count: Int { waiting.count }

    /// An identifier for a request about to wait; identifiers grow in arrival order.
    package mutating func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// Whether request `id` is parked and not yet answered.
    package func isWaiting(_ id: UInt64) -> Bool { waiting[id] != nil }

    /// Whether request `id` has an answer it has not taken yet: given before it parked, it must not park.
    package func isAnswered(_ id: UInt64) -> Bool { answers[id] != nil }

    /// Parks request `id` until it is answered.
    package mutating func park(_ id: UInt64, _ continuation: CheckedContinuation<Void, Never>) {
        waiting[id] = continuation
    }

    /// Answers request `id` if it is parked, and returns its continuation to resume after the lock; `nil`
    /// when it was answered already (a cancellation that came after the answer changes nothing).
    package mutating func answer(_ id: UInt64, with answer: Answer) -> CheckedContinuation<Void, Never>? {
        guard let continuation = waiting.removeValue(forKey: id) else { return nil }
        answers[id] = answer
        return continuation
    }

    /// Answers request `id` before it parked: it resumes its own continuation.
    package mutating func answerUnparked(_ id: UInt64, with answer: Answer) {
        answers[id] = answer
    }

    /// Answers every parked request with `answer`, and returns their continuations in arrival order (first
    /// come, first served) to resume after the lock.
    package mutating func answerAll(with answer: Answer) -> [CheckedContinuation<Void, Never>] {
        let continuations = waiting.valuesInKeyOrder()
        for id in waiting.keys { answers[id] = answer }
        waiting = [:]
        return continuations
    }

    /// The answer for request `id`, once its continuation has been resumed; it can be taken once.
    package mutating func takeAnswer(_ id: UInt64) -> Answer? {
        answers.removeValue(forKey: id)
    }
}

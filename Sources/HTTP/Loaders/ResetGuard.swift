/// A loader that refuses requests while the chain below it resets, and lets one reset through at a time.
///
/// While a reset runs, every load fails at once with ``HTTPError/Code/resetInProgress``. A second
/// ``HTTPLoader/reset()`` called on the guard while one runs does not start another: it waits for the running one
/// and returns with it.
///
/// ```swift
/// let chain = ResetGuard() --> Auth(...) --> URLSessionLoader()
/// await chain.reset()   // log out; requests meanwhile fail with .resetInProgress
/// ```
///
/// Every loader refuses loads during a reset, and every loader lets one reset called on it run at a time: the base
/// class, ``HTTPLoader``, keeps that protocol (see ``HTTPLoader/reset(mode:)``). The guard holds nothing and
/// overrides nothing; it makes the protocol visible at the head of a chain, in its description and to a reader.
///
/// It also makes a draining reset wait for the loads of the loader below it. A reset counts a load at a loader when
/// the loader above handed it over, so the loads of a chain's head are not counted: a reset waits for what the head
/// sent on, not for what the head does after that returns. With `FollowRedirects` or `Retry` at the head, a reset
/// can therefore end between a hop's answer and the head's decision about it, and the next hop goes out after the
/// reset. Under a guard the head is a loader like the others, and the reset ends only after its loads have.
// Safety: it has no state of its own; the base class keeps its reset state behind locks and atomics.
public final class ResetGuard: HTTPLoader, @unchecked Sendable {
    public override init() {}

    /// How many resets are waiting for the running one; for tests.
    var waitingResetCount: Int { participation.joinedCount }
}

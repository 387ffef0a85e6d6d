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
/// It also makes a draining reset wait for all of each load of the loader below it. A reset counts a load at a loader
/// when the loader above hands it over, so the loads of a chain's head are counted only by the head itself: the
/// package's loaders that send again after an answer (``FollowRedirects``, ``Retry``, ``Cache``, the credential loaders)
/// do (``HTTPLoader/withLoadCounted(_:)``), so a reset never ends between a hop's answer and their decision about
/// it. A loader of your own that sends more than once per load and does not count its loads is safe at the head of
/// a chain only under a guard.
// Safety: it has no state of its own; the base class keeps its reset state behind locks and atomics.
public final class ResetGuard: HTTPLoader, @unchecked Sendable {
    public override init() {}

    /// How many resets are waiting for the running one; for tests.
    var waitingResetCount: Int { participation.joinedCount }
}

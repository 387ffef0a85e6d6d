/// A loader that refuses requests while the chain below it resets, and lets one reset through at a time.
///
/// While a reset runs, every load fails at once with ``HTTPError/Code/resetInProgress``. A second
/// ``reset()`` called on the guard while one runs does not start another: it waits for the running one and
/// returns with it.
///
/// ```swift
/// let chain = ResetGuard() --> Auth(...) --> URLSessionLoader()
/// await chain.reset()   // log out; requests meanwhile fail with .resetInProgress
/// ```
///
/// Every loader of this package refuses loads during a reset (see ``HTTPLoader/reset(mode:)``); the guard
/// makes that explicit at the head of a chain whose other loaders may not, and collapses concurrent resets.
// Safety: all mutable state lives in `state`, behind a lock.
public final class ResetGuard: HTTPLoader, @unchecked Sendable {
    private struct State {
        /// Resets that have begun and not ended, whoever started them.
        var resetsInProgress = 0
        /// Whether a reset started through this guard runs.
        var isResetting = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    public override init() {}

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        if state.withLock({ $0.resetsInProgress > 0 }), !request.isPartOfReset {
            return .failure(
                HTTPError(.resetInProgress, request: request, message: "refused by ResetGuard while the chain resets")
            )
        }
        return await loadNext(request)
    }

    /// How many resets are waiting for the running one; for tests.
    var waitingResetCount: Int { state.withLock { $0.waiters.count } }

    public override func beginReset(_ mode: ResetMode) {
        state.withLock { $0.resetsInProgress += 1 }
    }

    public override func endReset() {
        state.withLock { $0.resetsInProgress -= 1 }
    }

    /// Resets the chain below, or — while a reset started here runs — waits for that one.
    public override func reset() async {
        if isTakingPartInReset { return }
        let startsReset = state.withLock { state -> Bool in
            if state.isResetting { return false }
            state.isResetting = true
            return true
        }
        guard startsReset else {
            await withCheckedContinuation { continuation in
                let finishedMeanwhile = state.withLock { state -> Bool in
                    guard state.isResetting else { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if finishedMeanwhile { continuation.resume() }
            }
            return
        }
        await super.reset()
        let waiters = state.withLock { state in
            state.isResetting = false
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

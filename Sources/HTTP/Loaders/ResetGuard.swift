/// A loader that refuses requests while the chain below it resets, and lets one reset through at a time.
///
/// While a reset runs, every load fails at once with ``HTTPError/Code/resetInProgress``. A second
/// ``reset()`` that arrives meanwhile does not start another: it waits for the running one and returns
/// with it. Put one at the head of a chain, and composite loaders put one in front of their shared next
/// loader so it is reset once, not once per branch.
///
/// ```swift
/// let chain = ResetGuard() --> Auth(...) --> URLSessionLoader()
/// await chain.reset()   // log out; requests meanwhile fail with .resetInProgress
/// ```
// Safety: configuration is immutable (`let`); mutable state, if any, is behind one lock (`Locked`).
public final class ResetGuard: HTTPLoader, @unchecked Sendable {
    private struct State {
        var isResetting = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    public override init() {}

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        if state.withLock({ $0.isResetting }) {
            return .failure(
                HTTPError(.resetInProgress, request: request, message: "refused by ResetGuard while the chain resets")
            )
        }
        return await loadNext(request)
    }

    /// How many resets are waiting for the running one; for tests.
    var waitingResetCount: Int { state.withLock { $0.waiters.count } }

    public override func reset() async {
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

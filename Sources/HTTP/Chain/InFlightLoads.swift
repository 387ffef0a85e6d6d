/// Counts the loads a terminal loader is running so that its reset can wait until they have all finished.
///
/// `reset` contracts say "returns once the chain has quiesced"; a terminal uses this to keep that promise:
///
/// ```swift
/// inFlight.begin(); defer { inFlight.end() }   // around each load
/// await inFlight.waitUntilIdle()               // in reset()
/// ```
final class InFlightLoads: Sendable {
    private struct State {
        var count = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    func begin() {
        state.withLock { $0.count += 1 }
    }

    func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count -= 1
            guard state.count == 0, !state.idleWaiters.isEmpty else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no load is running (at once, if none is).
    func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let isIdle = state.withLock { state -> Bool in
                if state.count == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
    }
}

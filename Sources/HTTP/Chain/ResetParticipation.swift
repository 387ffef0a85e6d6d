import Synchronization

/// A loader's part in the reset protocol, kept by ``HTTPLoader`` for every loader: how many resets are under way at
/// it, the loads passed to it that have not returned, and the resets called on it.
@usableFromInline
package final class ResetParticipation: Sendable {
    /// Resets under way at the loader (they may overlap). Sequentially consistent, with ``inFlight``'s count: see
    /// `HTTPLoader.loadNext(_:)`.
    private let resets = Atomic<Int>(0)
    /// The loads passed to the loader (by the loader above, through `HTTPLoader.send(_:to:)`) that have not returned;
    /// a loader counts here, by hand, work of its own a reset must wait for.
    @usableFromInline package let inFlight = InFlightLoads()
    private let entered = Locked(Entered())

    /// The resets called on this loader.
    private struct Entered {
        /// The mode of the reset running, if one does.
        var running: ResetMode?
        /// Resets called while it runs, waiting for it to end.
        var joined: [CheckedContinuation<Void, Never>] = []
    }

    /// What a reset called on the loader does.
    package enum Entry {
        /// Runs the protocol.
        case run
        /// Waits for the one running; `escalate` when it asks to cancel what that one drains.
        case join(escalate: Bool)
    }

    package init() {}

    @usableFromInline package var isResetting: Bool { resets.load(ordering: .sequentiallyConsistent) > 0 }

    /// Phase 1 has reached the loader.
    package func begin() { resets.add(1, ordering: .sequentiallyConsistent) }

    /// Phase 4 has reached the loader.
    package func end() { resets.subtract(1, ordering: .sequentiallyConsistent) }

    /// A reset in `mode` was called on the loader.
    package func enter(_ mode: ResetMode) -> Entry {
        entered.withLock { entered in
            guard let running = entered.running else {
                entered.running = mode
                return .run
            }
            if mode == .cancel, running == .drain {
                entered.running = .cancel
                return .join(escalate: true)
            }
            return .join(escalate: false)
        }
    }

    /// Returns once the reset running on the loader has ended.
    package func waitForRunningReset() async {
        await withCheckedContinuation { continuation in
            let hasEnded = entered.withLock { entered -> Bool in
                guard entered.running != nil else { return true }
                entered.joined.append(continuation)
                return false
            }
            if hasEnded { continuation.resume() }
        }
    }

    /// The reset called on the loader has ended: the ones waiting for it return.
    package func leave() {
        let joined = entered.withLock { entered in
            entered.running = nil
            defer { entered.joined = [] }
            return entered.joined
        }
        for continuation in joined { continuation.resume() }
    }

    /// How many resets wait for the one running on the loader (for tests).
    package var joinedCount: Int { entered.withLock { $0.joined.count } }
}

public import Synchronization

/// Counts the loads a terminal loader is running so that its reset can wait until they have all finished.
///
/// `reset` contracts say "returns once the chain has quiesced"; a terminal uses this to keep that promise:
///
/// ```swift
/// inFlight.begin(); defer { inFlight.end() }   // around each load
/// await inFlight.waitUntilIdle()               // in reset()
/// ```
@usableFromInline
package final class InFlightLoads: Sendable {
    /// The loads running. Atomic: `begin` and `end` run on every load, and take no lock.
    @usableFromInline let count = Atomic<Int>(0)
    /// Whether someone waits for idleness; `end` takes the lock only then.
    @usableFromInline let hasWaiters = Atomic<Bool>(false)
    private let idleWaiters = Locked<[CheckedContinuation<Void, Never>]>([])

    package init() {}

    /// The loads running now.
    package var runningCount: Int { count.load(ordering: .sequentiallyConsistent) }

    /// Counts a load that starts. Inlined into every hop, where a call would also retain this object around it.
    @inlinable package func begin() {
        count.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// Counts a load that ended, and resumes the waiters once none runs.
    @inlinable package func end() {
        let remaining = count.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue
        // Sequentially consistent on both sides: either this sees the waiter's flag, or the waiter (which sets
        // the flag before reading the count) sees the count at zero.
        if remaining == 0, hasWaiters.load(ordering: .sequentiallyConsistent) { resumeWaitersIfIdle() }
    }

    package func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            idleWaiters.withLock { waiters in
                waiters.append(continuation)
                hasWaiters.store(true, ordering: .sequentiallyConsistent)
            }
            resumeWaitersIfIdle()
        }
    }

    @usableFromInline func resumeWaitersIfIdle() {
        let waiters = idleWaiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            guard !waiters.isEmpty, count.load(ordering: .sequentiallyConsistent) == 0 else { return [] }
            hasWaiters.store(false, ordering: .sequentiallyConsistent)
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// Mutable state behind a mutual-exclusion lock: every object in this package keeps its mutable state in
/// one of these, reached only through ``withLock(_:)``.
///
/// It plays the role of the standard library's `Synchronization.Mutex`, with one difference that matters
/// here: it is built on `pthread_mutex_t`, which ThreadSanitizer understands. `Mutex` on Linux (Swift
/// 6.3.1) locks with futexes that ThreadSanitizer cannot see, so every contended `Mutex` is reported as a
/// data race — and the test suite runs under ThreadSanitizer with `halt_on_error=1`. SwiftNIO's `NIOLock`
/// makes the same choice.
///
/// The rules are the same as for `Mutex`: keep the closure short and synchronous, decide inside it, and
/// act — resume continuations, call other loaders — after it returns. A value for a task that a continuation
/// wakes stays in the state, for the task to take under the lock (see ``Waiters``).
// Safety: `state` is read and written only inside `withLock`, between pthread_mutex_lock and
// pthread_mutex_unlock on `mutex`, which is allocated once and never moves.
package final class Locked<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The mutex already makes every access exclusive, so the runtime's own exclusivity check (a
    /// thread-local lookup per access) is switched off.
    @exclusivity(unchecked) private var state: State

    package init(_ initialState: State) {
        state = initialState
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    @inline(__always) @discardableResult
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

extension Locked where State: Sendable {
    /// A copy of the state.
    package var value: State { withLock { $0 } }
}
extension Dictionary where Key == UInt64 {
    /// The values in the order of their keys. Loaders number their waiters as they arrive, so this releases
    /// or fails them first come, first served — fair, and cheap for whoever awaits them in that order (a task
    /// group removes children finishing in arrival order in constant time, in any other order in linear time).
    package func valuesInKeyOrder() -> [Value] {
        sorted { $0.key < $1.key }.map(\.value)
    }
}

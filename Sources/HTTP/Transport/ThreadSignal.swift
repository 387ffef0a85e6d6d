import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A lock, and a condition a thread of the transport's own sleeps on — for a while, or until another thread wakes it.
///
/// On Linux the wait is measured by the monotonic clock, so that a change of the wall clock moves no deadline; where
/// the C library has no such condition variable (Apple platforms, which never time a transfer out themselves), by
/// `NSCondition`.
final class ThreadSignal: @unchecked Sendable {
    // Safety: the pthread objects are used only through their functions; `woken` only with the mutex held.
    #if canImport(Glibc) || canImport(Musl)
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    #else
    private let condition = NSCondition()
    #endif
    /// Set by ``wake()``, so that a wake-up that comes before the wait is not lost.
    private var woken = false

    init() {
        #if canImport(Glibc) || canImport(Musl)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        #endif
    }

    deinit {
        #if canImport(Glibc) || canImport(Musl)
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
        #endif
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Wakes a ``wait(for:)`` under way, or the next one.
    func wake() {
        lock()
        woken = true
        #if canImport(Glibc) || canImport(Musl)
        pthread_cond_signal(condition)
        #else
        condition.signal()
        #endif
        unlock()
    }

    /// Sleeps until woken or until `duration` (`nil`: no limit) has passed.
    func wait(for duration: Duration?) {
        lock()
        defer { unlock() }
        guard !woken else {
            woken = false
            return
        }
        #if canImport(Glibc) || canImport(Musl)
        if let duration {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let (seconds, attoseconds) = max(duration, .zero).components
            let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
            var until = timespec()
            until.tv_sec = now.tv_sec + Int(clamping: min(seconds, 1 << 32)) + nanoseconds / 1_000_000_000
            until.tv_nsec = nanoseconds % 1_000_000_000
            pthread_cond_timedwait(condition, mutex, &until)
        } else {
            pthread_cond_wait(condition, mutex)
        }
        #else
        if let duration {
            condition.wait(until: Date(timeIntervalSinceNow: max(duration, .zero).seconds))
        } else {
            condition.wait()
        }
        #endif
        woken = false
    }

    private func lock() {
        #if canImport(Glibc) || canImport(Musl)
        pthread_mutex_lock(mutex)
        #else
        condition.lock()
        #endif
    }

    private func unlock() {
        #if canImport(Glibc) || canImport(Musl)
        pthread_mutex_unlock(mutex)
        #else
        condition.unlock()
        #endif
    }
}

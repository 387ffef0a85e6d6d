import Foundation

/// Runs the calls into URLSession that wait for its work queue — making a task, resuming it, cancelling it,
/// answering a challenge from outside its callback — one at a time and in order, on a thread of its own.
///
/// On Linux, swift-corelibs-foundation runs every session of the process on one serial work queue (libcurl's I/O,
/// every delegate callback, every completion handler), and `dataTask(with:)`, `resume()` and `cancel()` wait for
/// it synchronously. Made on the loads' threads, those waits took Swift concurrency's threads (on Linux, Dispatch's
/// global queues) while the work queue was busy: with hundreds of transfers under way every thread of the pool
/// waited, and nothing else in the process ran — not a deadline, not a cancellation, not the load that was
/// already complete. On this thread they wait alone; a load hands its calls over and suspends, and its deadline
/// and its cancellation end it while its task is still being made.
///
/// One thread, in order: a task's cancellation always comes after its start, which swift-corelibs-foundation needs
/// (a task cancelled before or while it is resumed can trap), and since the work queue does one thing at a time,
/// a second thread would only wait beside the first.
final class URLSessionCalls: @unchecked Sendable {
    // Safety: `pending` is read and written only with `signal`'s lock held.

    /// The one instance (made, and its thread started, with the first call).
    static let shared = URLSessionCalls()

    /// Whether calls into URLSession go through ``shared`` (Linux, and wherever swift-corelibs-foundation is the
    /// implementation), or are made where they are asked for (Apple platforms, whose URLSession does not make its
    /// callers wait for a busy queue).
    static var isolatesCalls: Bool {
        #if canImport(FoundationNetworking)
        true
        #else
        false
        #endif
    }

    private let signal = ThreadSignal()
    private var pending: [@Sendable () -> Void] = []

    /// A thread of its own, apart from ``shared`` (for tests that hold it).
    init() {
        let thread = Thread { [self] in loop() }
        thread.name = "HTTP URLSession calls"
        thread.start()
    }

    /// Runs `call` on the thread, after every call handed over before it. Returns at once.
    func run(_ call: @escaping @Sendable () -> Void) {
        let wasIdle = signal.withLock { () -> Bool in
            pending.append(call)
            return pending.count == 1
        }
        if wasIdle { signal.wake() }
    }

    private func loop() {
        while true {
            let calls = signal.withLock { () -> [@Sendable () -> Void] in
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
            guard !calls.isEmpty else {
                signal.wait(for: nil)
                continue
            }
            for call in calls { call() }
        }
    }
}

import Foundation

/// Holds one thread inside synchronous code under test — a policy closure, a retry strategy — until the test
/// releases it, so that a test can act while the code is at a known point between two awaits.
///
/// The held thread waits at most `seconds` (then goes on, and ``timedOut`` says so): a test that forgot to release
/// it, or failed before, cannot hang. Run the code it holds on a ``DedicatedThreadExecutor``, not on the cooperative pool.
public final class ThreadLatch: @unchecked Sendable {  // Sendable: all state behind `condition`
    private let condition = NSCondition()
    private var arrivals = 0
    private var isReleased = false
    private var didTimeOut = false
    private let seconds: Double

    public init(seconds: Double = standardDeadline) {
        self.seconds = seconds
    }

    /// Called by the code under test: counts the arrival, and waits until ``release()`` (at once after it).
    public func arriveAndWait() {
        condition.lock()
        defer { condition.unlock() }
        arrivals += 1
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !isReleased {
            if !condition.wait(until: deadline) {
                didTimeOut = true
                return
            }
        }
    }

    /// How many times the code under test has arrived.
    public var arrivalCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return arrivals
    }

    /// Whether a held thread gave up waiting for ``release()``.
    public var timedOut: Bool {
        condition.lock()
        defer { condition.unlock() }
        return didTimeOut
    }

    /// Lets the held thread go on, and every later arrival through at once.
    public func release() {
        condition.lock()
        defer { condition.unlock() }
        isReleased = true
        condition.broadcast()
    }
}

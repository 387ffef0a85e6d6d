import Foundation

/// A value behind a lock, for the tests' bookkeeping. `NSLock`, not `Mutex`: ThreadSanitizer on Linux cannot see
/// `Mutex`'s locking and would report every contended access as a race.
public final class Locked<Value>: @unchecked Sendable {
    // Safety: `value` is only reached through `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    public var current: Value { withLock { $0 } }
}

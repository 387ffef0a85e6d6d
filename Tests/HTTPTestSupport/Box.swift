import HTTP

/// A value behind the package's lock, for the tests' own bookkeeping. The lock is the one ThreadSanitizer
/// can see (unlike `Synchronization.Mutex` on Linux); this wrapper makes it usable from every test target.
public final class Box<Value>: Sendable {
    private let lock: Locked<Value>

    public init(_ value: Value) {
        lock = Locked(value)
    }

    @discardableResult
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock(body)
    }
}

extension Box where Value: Sendable {
    /// A copy of the value.
    public var value: Value { withLock { $0 } }
}

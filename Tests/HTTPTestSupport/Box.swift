import HTTP
public import Testing

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

/// Polls `condition` without sleeping, yielding to other tasks, for at most `seconds`; records an issue if
/// it never holds.
public func eventually(
    seconds: Double = 10,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @Sendable () -> Bool
) async {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition not met within \(seconds) s", sourceLocation: sourceLocation)
            return
        }
        await Task.yield()
    }
}

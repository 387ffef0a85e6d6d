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

/// Polls `condition` until it holds, for at most `seconds`; records an issue if it never does.
///
/// The first polls only yield, so a condition that is about to hold costs no timer. After that each poll
/// sleeps a millisecond: on a loaded machine (two cores, the suite under ThreadSanitizer, tests running in
/// parallel) polls that only yield keep the cooperative threads busy and starve the very tasks they wait
/// for — conditions that hold within milliseconds on an idle machine then took over 10 s.
public func eventually(
    seconds: Double = 60,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @Sendable () -> Bool
) async {
    let deadline = ContinuousClock.now + .seconds(seconds)
    var polls = 0
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition not met within \(seconds) s", sourceLocation: sourceLocation)
            return
        }
        polls += 1
        if polls <= 100 {
            await Task.yield()
        } else {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// Runs `body`, failing the test if it has not finished within `seconds`; returns its value, or nil on timeout.
///
/// On timeout `body` is cancelled and left behind: this returns at once even when `body` ignores cancellation
/// (a hang is what the deadline is for), where a task group would wait for it.
public func withDeadline<T: Sendable>(
    seconds: Double,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () async -> T
) async -> T? {
    let work = Task { await body() }
    let waiter = Box<CheckedContinuation<T?, Never>?>(nil)
    let finish: @Sendable (T?) -> Void = { value in
        waiter.withLock { waiter in
            defer { waiter = nil }
            return waiter
        }?.resume(returning: value)
    }
    let value = await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        waiter.withLock { $0 = continuation }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            if !Task.isCancelled { finish(nil) }
        }
        Task {
            let value = await work.value
            timer.cancel()
            finish(value)
        }
    }
    if value == nil {
        work.cancel()
        Issue.record("did not finish within \(seconds) s", sourceLocation: sourceLocation)
    }
    return value
}

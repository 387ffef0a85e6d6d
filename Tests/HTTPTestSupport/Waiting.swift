public import Testing

// Every wait in the suites has a deadline, and a wait that gives up says what it found and stops the test: a test
// that ran on after a failed wait would assert on, index into or await a state that never came — and hang or trap.

/// How long a test waits for something that takes microseconds when the machine is idle. Generous: under
/// ThreadSanitizer, with the whole suite running beside two CPU-bound processes on two cores, a task can wait
/// seconds for a thread.
public let standardDeadline: Double = 60

/// Waits until `condition` holds, for at most `seconds`.
///
/// On timeout it records an issue with `state` — what the code under test reports about itself at that moment
/// (a loader's debug description, its counters) — and throws, so the test stops at the wait.
///
/// The first polls only yield, so a condition about to hold costs no timer; then the polls back off from 1 to
/// 16 ms. Hundreds of tests wait at once on two cooperative threads: polls that only yielded, or slept a fixed
/// millisecond, kept the threads' queue so long that the tasks they waited for took tens of seconds to run.
public func eventually(
    seconds: Double = standardDeadline,
    _ state: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @Sendable () -> Bool
) async throws {
    let start = ContinuousClock.now
    let deadline = start + .seconds(seconds)
    var polls = 0
    var pause = Duration.milliseconds(1)
    while !condition() {
        if ContinuousClock.now > deadline {
            let found = state()
            try timedOut(
                "condition not met within \(seconds) s (\(polls) polls)" + (found.isEmpty ? "" : "; found: \(found)"),
                sourceLocation: sourceLocation)
        }
        polls += 1
        if polls <= 10 {
            await Task.yield()
        } else {
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(16))
        }
    }
}

/// Runs `body`, failing the test if it has not finished within `seconds`; returns its value, or nil on timeout.
///
/// On timeout `body` is cancelled and left behind: this returns at once even when `body` ignores cancellation
/// (a hang is what the deadline is for), where a task group would wait for it.
public func withDeadline<T: Sendable>(
    seconds: Double,
    _ state: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () async -> T
) async -> T? {
    let work = Task { await body() }
    let value = await awaitValue(of: work, seconds: seconds)
    if value == nil {
        let found = state()
        Issue.record(
            Comment(rawValue: "did not finish within \(seconds) s" + (found.isEmpty ? "" : "; found: \(found)")),
            sourceLocation: sourceLocation)
    }
    return value?.value
}

extension Task where Failure == Never {
    /// The task's value, awaited for at most `seconds` (60 by default).
    ///
    /// On timeout the task is cancelled and left behind, the test records an issue with `state`, and this throws,
    /// so the test stops here: `for load in loads { #expect(try await load.finished().response?.status == .ok) }`.
    public func finished(
        within seconds: Double = standardDeadline,
        _ state: @autoclosure () -> String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Success {
        guard let value = await awaitValue(of: self, seconds: seconds) else {
            let found = state()
            try timedOut(
                "the task did not finish within \(seconds) s" + (found.isEmpty ? "" : "; found: \(found)"),
                sourceLocation: sourceLocation)
        }
        return value.value
    }
}

extension Task where Failure == any Error {
    /// The task's value or error, awaited for at most `seconds` (60 by default); see the non-throwing task's
    /// `finished(within:_:sourceLocation:)`.
    public func finished(
        within seconds: Double = standardDeadline,
        _ state: @autoclosure () -> String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Success {
        let outcome = Task<Result<Success, any Error>, Never> { await self.result }
        let result: Result<Success, any Error>
        do {
            result = try await outcome.finished(within: seconds, state(), sourceLocation: sourceLocation)
        } catch {
            cancel()
            throw error
        }
        return try result.get()
    }
}

/// A value of `T` that can be nil inside an optional: what ``awaitValue(of:seconds:)`` returns.
struct Finished<T: Sendable>: Sendable {
    let value: T
}

/// `work`'s value, or nil if it has not finished within `seconds` (it is then cancelled and left behind).
private func awaitValue<T: Sendable>(of work: Task<T, Never>, seconds: Double) async -> Finished<T>? {
    let waiter = Box<CheckedContinuation<Finished<T>?, Never>?>(nil)
    let finish: @Sendable (Finished<T>?) -> Void = { value in
        waiter.withLock { waiter in
            defer { waiter = nil }
            return waiter
        }?.resume(returning: value)
    }
    let value = await withCheckedContinuation { (continuation: CheckedContinuation<Finished<T>?, Never>) in
        waiter.withLock { $0 = continuation }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            if !Task.isCancelled { finish(nil) }
        }
        Task {
            let value = await work.value
            timer.cancel()
            finish(Finished(value: value))
        }
    }
    if value == nil { work.cancel() }
    return value
}

/// Fails the test at `sourceLocation` with `message`, throwing the error `#require` throws, which the test runner
/// does not record a second time.
private func timedOut(_ message: String, sourceLocation: SourceLocation) throws -> Never {
    let waitEndedInTime = false
    try #require(waitEndedInTime, Comment(rawValue: message), sourceLocation: sourceLocation)
    preconditionFailure("#require(false) returned")
}

extension Trait where Self == TimeLimitTrait {
    /// Every suite's time limit, so that no test can hang the run: a test case still running after three minutes
    /// fails, and its task is cancelled — which ends every load in it, since loaders honour cancellation. A test
    /// takes milliseconds to seconds; the limit is for a test that waits on something that will never come.
    public static var noHang: Self { .timeLimit(.minutes(3)) }
}

public import Testing

// Every wait in these suites has a deadline, and a wait that gives up says what it found and stops the test: a test
// that ran on after a failed wait would assert on a state that never came, or hang. (The product's suites have the
// same helpers in Tests/HTTPTestSupport, which another package cannot import.)

/// How long a test waits for something that takes microseconds on an idle machine: generous, for ThreadSanitizer on
/// a busy machine.
public let standardDeadline: Double = 60

/// Waits until `condition` holds, for at most `seconds`; on timeout records an issue with `state` and throws.
public func eventually(
    seconds: Double = standardDeadline,
    _ state: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @Sendable () -> Bool
) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    var polls = 0
    var pause = Duration.milliseconds(1)
    while !condition() {
        if ContinuousClock.now > deadline {
            let found = state()
            let message = "condition not met within \(seconds) s" + (found.isEmpty ? "" : "; found: \(found)")
            try #require(Bool(false), Comment(rawValue: message), sourceLocation: sourceLocation)
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

extension Task where Failure == Never {
    /// The task's value, awaited for at most `seconds`; on timeout the task is cancelled and left behind, the test
    /// records an issue with `state`, and this throws, so the test stops here.
    public func finished(
        within seconds: Double = standardDeadline,
        _ state: @autoclosure () -> String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Success {
        let outcome = Locked<Success?>(nil)
        let work = self
        let waiter = Task<Void, Never> {
            let value = await work.value
            outcome.withLock { $0 = value }
        }
        do {
            try await eventually(seconds: seconds, state(), sourceLocation: sourceLocation) {
                outcome.withLock { $0 != nil }
            }
        } catch {
            cancel()
            waiter.cancel()
            throw error
        }
        return outcome.withLock { $0! }
    }
}

extension Trait where Self == TimeLimitTrait {
    /// Every suite's time limit, so that no test can hang the run: a test still running after three minutes fails
    /// and its task is cancelled, which ends every load in it.
    public static var noHang: Self { .timeLimit(.minutes(3)) }
}

import Testing

@testable import HTTP

/// A clock that moves only when a test says so, so that time-dependent behaviour runs instantly and
/// deterministically.
///
/// ```swift
/// let clock = ManualClock()
/// let retry = Retry(clock: clock)
/// ...
/// await clock.waitForSleepers(1)     // the retry is now waiting
/// clock.advance(by: .seconds(2))     // and now it is not
/// ```
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
        var requestedDurations: [Duration] = []
        /// While set, a sleep moves the clock forward by this step, as often as it takes to reach its deadline.
        var stepOnSleep: Duration?
    }

    private let state = Locked(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Every duration a sleeper asked for, in order.
    var requestedDurations: [Duration] { state.withLock { $0.requestedDurations } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (resumeNow, due) = state.withLock { state -> (Bool, [CheckedContinuation<Void, any Error>]) in
                    if deadline <= state.now || Task.isCancelled { return (true, []) }
                    state.requestedDurations.append(state.now.duration(to: deadline))
                    if let step = state.stepOnSleep {
                        while state.now < deadline { state.now = state.now.advanced(by: step) }
                        return (true, Self.takeDue(&state))
                    }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (false, [])
                }
                if resumeNow { continuation.resume() }
                for sleeper in due { sleeper.resume() }
            }
            try Task.checkCancellation()
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.advanced(by: duration)
            return Self.takeDue(&state)
        }
        for continuation in due { continuation.resume() }
    }

    /// Removes the sleepers whose deadline has come, to resume after the lock.
    private static func takeDue(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        let now = state.now
        let dueIDs = state.sleepers.filter { $0.value.deadline <= now }.map(\.key)
        return dueIDs.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
    }

    /// Runs `body` with time moving on its own: every sleep on this clock while it runs — and every sleep already
    /// waiting — ends at once, the clock moved forward in steps of `step` until the sleep's deadline. No task polls
    /// the clock for sleepers meanwhile (a polling loop keeps a cooperative thread busy); ``requestedDurations``
    /// still lists what each sleep asked for.
    func movingOnEverySleep<T>(by step: Duration, _ body: () async throws -> T) async rethrows -> T {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.stepOnSleep = step
            guard let latest = state.sleepers.values.map(\.deadline).max() else { return [] }
            while state.now < latest { state.now = state.now.advanced(by: step) }
            return Self.takeDue(&state)
        }
        for sleeper in waiting { sleeper.resume() }
        defer { state.withLock { $0.stepOnSleep = nil } }
        return try await body()
    }

    /// Returns once at least `count` tasks sleep on this clock (records an issue if that takes over a minute).
    func waitForSleepers(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await eventually(sourceLocation: sourceLocation) { self.sleeperCount >= count }
    }
}

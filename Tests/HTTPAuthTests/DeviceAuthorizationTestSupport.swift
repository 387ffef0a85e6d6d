import Foundation
import HTTP
import HTTPAuth
import Testing

/// A clock that moves only when a test says so — or, with `movesOnSleep`, jumps to each sleep's deadline at once —
/// so that the device grant's polling runs instantly and deterministically. (HTTPTests has a `ManualClock` of its
/// own; test targets cannot share it.)
final class DevicePollingClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: (deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var nextID: UInt64 = 0
        var requestedDurations: [Duration] = []
    }

    private let state = Box(State())
    /// Whether a sleep ends at once, the clock moved to its deadline.
    let movesOnSleep: Bool

    init(movesOnSleep: Bool) {
        self.movesOnSleep = movesOnSleep
    }

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }
    /// Every duration a sleep asked for, in order.
    var requestedDurations: [Duration] { state.withLock { $0.requestedDurations } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumesNow = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.requestedDurations.append(state.now.duration(to: deadline))
                    if deadline <= state.now { return true }
                    if movesOnSleep {
                        state.now = deadline
                        return true
                    }
                    state.sleepers[id] = (deadline, continuation)
                    return false
                }
                if resumesNow { continuation.resume() }
            }
            try Task.checkCancellation()
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.advanced(by: duration)
            let ids = state.sleepers.filter { $0.value.deadline <= state.now }.map(\.key)
            return ids.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
        }
        for continuation in due { continuation.resume() }
    }
}

/// Shows the user code by recording it; optionally approves it through `approve` (a call to the server), as the
/// user would on their phone.
final class RecordingCodeScreen: DeviceAuthorizationDelegate {
    let shown = Box<[DeviceAuthorization]>([])
    let hidden = Box<[DeviceAuthorization]>([])
    let approve: (@Sendable (DeviceAuthorization) async -> Void)?

    init(approve: (@Sendable (DeviceAuthorization) async -> Void)? = nil) {
        self.approve = approve
    }

    func showUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {
        shown.withLock { $0.append(authorization) }
        await approve?(authorization)
    }

    func hideUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {
        hidden.withLock { $0.append(authorization) }
    }
}

/// The fields of a form-encoded body.
func deviceFormFields(of request: HTTPRequest) -> [String: String] {
    let text = String(decoding: (try? request.body.encode()) ?? Data(), as: UTF8.self)
    var fields: [String: String] = [:]
    for pair in text.split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1).map {
            String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
        }
        fields[parts[0]] = parts.count > 1 ? parts[1] : ""
    }
    return fields
}

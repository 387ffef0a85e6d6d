import Foundation
import HTTP
import Testing

/// A terminal that fails randomly, answers after a random cancellable delay, and records the most loads it
/// ever ran at once.
private final class FlakyTerminal: HTTPLoader, @unchecked Sendable {
    private struct State {
        var running = 0
        var maximumRunning = 0
        var loads = 0
    }

    private let state = Locked(State())
    /// Called with each load's number as it arrives.
    let onLoad: @Sendable (Int) -> Void
    init(onLoad: @escaping @Sendable (Int) -> Void = { _ in }) { self.onLoad = onLoad }
    var maximumRunning: Int { state.value.maximumRunning }
    var running: Int { state.value.running }
    var loads: Int { state.value.loads }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        let number = state.withLock { state -> Int in
            state.running += 1
            state.loads += 1
            state.maximumRunning = max(state.maximumRunning, state.running)
            return state.loads
        }
        onLoad(number)
        defer { state.withLock { $0.running -= 1 } }
        do {
            try await Task.sleep(for: .microseconds(Int.random(in: 0...300)))
        } catch {
            return .failure(HTTPError(.cancelled, request: request))
        }
        switch Int.random(in: 0..<10) {
        case 0: return .failure(HTTPError(.cannotConnect, request: request))
        case 1: return .success(HTTPResponse(request: request, status: .serviceUnavailable))
        default: return .success(HTTPResponse(request: request, status: .ok))
        }
    }
}

@Suite(.noHang) struct FlowControlStressTests {
    @Test func tenThousandRequestsThroughRetryAndThrottleEachCompleteOnce() async throws {
        let count = 10_000
        let limit = 4
        // The reset starts from the terminal itself when a tenth of the loads have reached it: the rest are queued
        // then, however the machine schedules the test's own tasks. (A quarter took over a minute to arrive under
        // ThreadSanitizer beside two CPU-bound processes, where the terminal sees a few hundred loads a second.)
        let resetTask = Locked<Task<Void, Never>?>(nil)
        let chainHead = Locked<HTTPLoader?>(nil)
        let terminal = FlakyTerminal { number in
            guard number == count / 10, let chain = chainHead.value else { return }
            resetTask.withLock { $0 = Task { await chain.reset() } }
        }
        let throttle = Throttle(maximumNumberOfRequests: limit)
        let retry = Retry(
            strategy: Backoff.constant(delay: .microseconds(100), maximumNumberOfAttempts: 3), budget: nil)
        let chain = retry --> throttle --> terminal
        chainHead.withLock { $0 = chain }

        let codes = Locked([HTTPError.Code: Int]())
        let finished = await withDeadline(seconds: 120) {
            await withTaskGroup(of: Void.self) { group in
                var loads: [Task<Void, Never>] = []
                for index in 0..<count {
                    let load = Task {
                        var request = HTTPRequest(host: "example.com", path: "/\(index)")
                        request.throttlePriority = ThrottlePriority.allCases.randomElement()!
                        let result = await chain.load(request)
                        if let code = result.error?.code { codes.withLock { $0[code, default: 0] += 1 } }
                    }
                    loads.append(load)
                }
                // Random cancellations while the queue is full, and a reset a tenth of the way through, which
                // fails everything still queued at once.
                for load in loads.shuffled().prefix(count / 5) { load.cancel() }
                // Bounded by the deadline around the group.
                group.addTask {
                    try? await eventually(seconds: 110, "\(terminal.loads) loads reached the terminal") {
                        resetTask.value != nil
                    }
                    await resetTask.value?.value
                }
                for load in loads { group.addTask { await load.value } }
            }
            return true
        }
        try #require(finished == true, "requests were still pending after the deadline")

        // Each load returned exactly once: a continuation resumed twice traps, and one never resumed keeps the run past the
        // deadline above; counting returns after `await` could not fail, so nothing is counted.
        #expect(terminal.maximumRunning <= limit, "the throttle let \(terminal.maximumRunning) run at once")
        #expect(terminal.maximumRunning == limit, "the throttle never filled up; the test did not load it")
        #expect(throttle.waitingCount == 0 && throttle.runningCount == 0, "nothing is left parked")
        #expect(retry.waitingCount == 0)
        #expect(terminal.running == 0)
        let failures = codes.value
        #expect(Set(failures.keys).isSubset(of: [.cancelled, .resetInProgress, .cannotConnect]), "\(failures)")
        #expect((failures[.cancelled] ?? 0) > 0)
        #expect(terminal.loads >= count / 10)
        #expect((failures[.resetInProgress] ?? 0) > 0, "the reset failed nothing: it came after the last load")
    }
}

import Foundation
import HTTP
import Testing

@Suite(.noHang) struct ThrottleTests {
    private func request(_ path: String, priority: ThrottlePriority = .normal) -> HTTPRequest {
        var request = HTTPRequest(host: "example.com", path: path)
        request.throttlePriority = priority
        return request
    }

    /// Starts loads one at a time, each queued before the next starts, so their order is known.
    private func enqueue(_ requests: [HTTPRequest], into throttle: Throttle) async throws -> [Task<HTTPResult, Never>] {
        var tasks: [Task<HTTPResult, Never>] = []
        for request in requests {
            let before = throttle.waitingCount
            tasks.append(Task { await throttle.load(request) })
            try await eventually { throttle.waitingCount == before + 1 }
        }
        return tasks
    }

    @Test func runsAtMostTheLimitAndTheRestWaitInOrder() async throws {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 2) --> gate
        let first = Task { await throttle.load(request("/1")) }
        try await gate.waitForRunning(1)
        let second = Task { await throttle.load(request("/2")) }
        try await gate.waitForRunning(2)
        let waiting = try await enqueue([request("/3"), request("/4"), request("/5")], into: throttle)
        #expect(gate.running == 2)
        #expect(throttle.waitingCount == 3)

        // A slot frees only when a downstream load completes, and goes to the oldest waiter.
        gate.release(path: "/2")
        _ = try await second.finished()
        try await gate.waitForRunning(2)
        #expect(gate.arrivals.last == "/3")
        // One slot at a time, so that each admitted request reaches the gate before the next is admitted (two
        // admitted at once may arrive in either order: the throttle orders admissions, not the tasks after).
        gate.release(path: "/1")
        try await gate.waitForRunning(2)
        #expect(gate.arrivals.last == "/4")
        gate.release(path: "/3")
        try await gate.waitForRunning(2)
        #expect(gate.arrivals.last == "/5")
        gate.release(path: "/4")
        gate.release(path: "/5")
        _ = try await first.finished()
        for task in waiting { #expect(try await task.finished().response?.status == .ok) }
        #expect(throttle.runningCount == 0 && throttle.waitingCount == 0)
        #expect(gate.arrivals == ["/1", "/2", "/3", "/4", "/5"])
        #expect(gate.maximumRunning == 2)
    }

    @Test func raisingTheLimitStartsWaitingRequestsAtOnce() async throws {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let blocker = Task { await throttle.load(request("/0")) }
        try await gate.waitForRunning(1)
        let waiting = try await enqueue([request("/1"), request("/2"), request("/3")], into: throttle)
        throttle.maximumNumberOfRequests = 3
        try await gate.waitForRunning(3)
        #expect(throttle.waitingCount == 1)
        #expect(throttle.runningCount == 3)

        // Lowering the limit holds new starts until fewer than the limit run.
        throttle.maximumNumberOfRequests = 1
        gate.releaseOldest()
        gate.releaseOldest()
        try await eventually { throttle.runningCount == 1 }
        #expect(throttle.waitingCount == 1)
        try await gate.releaseOneAtATime { throttle.runningCount == 0 && throttle.waitingCount == 0 }
        _ = try await blocker.finished()
        for task in waiting { _ = try await task.finished() }
        // /1 and /2 were admitted together when the limit rose, and then raced each other to the terminal;
        // /3 was admitted only after the limit fell and they had finished.
        let arrivals = gate.arrivals
        #expect(arrivals.count == 4)
        #expect(arrivals.first == "/0")
        #expect(Set(arrivals.dropFirst().prefix(2)) == ["/1", "/2"])
        #expect(arrivals.last == "/3")
    }

    @Test func requestsThatOptOutBypassTheQueueAndTakeNoSlot() async throws {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let blocker = Task { await throttle.load(request("/blocker")) }
        try await gate.waitForRunning(1)
        var urgent = request("/refresh")
        urgent.throttle = .never
        let bypass = Task { await throttle.load(urgent) }
        try await gate.waitForRunning(2)
        #expect(throttle.runningCount == 1)
        gate.release(path: "/refresh")
        #expect(try await bypass.finished().response?.status == .ok)
        gate.releaseOldest()
        _ = try await blocker.finished()
    }

    @Test func higherLanesGoFirstAndFIFOWithinALane() async throws {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let blocker = Task { await throttle.load(request("/blocker")) }
        try await gate.waitForRunning(1)
        let waiting = try await enqueue(
            [
                request("/low-1", priority: .low), request("/normal-1"), request("/high-1", priority: .high),
                request("/normal-2"), request("/high-2", priority: .high),
            ],
            into: throttle
        )
        try await gate.releaseOneAtATime { throttle.runningCount == 0 && throttle.waitingCount == 0 }
        _ = try await blocker.finished()
        for task in waiting { _ = try await task.finished() }
        #expect(gate.arrivals == ["/blocker", "/high-1", "/high-2", "/normal-1", "/normal-2", "/low-1"])
    }

    @Test func aLowPriorityRequestIsOvertakenAtMostStarvationLimitTimes() async throws {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1, starvationLimit: 2) --> gate
        let blocker = Task { await throttle.load(request("/blocker")) }
        try await gate.waitForRunning(1)
        let waiting = try await enqueue(
            [request("/low", priority: .low)] + (1...5).map { request("/high-\($0)", priority: .high) },
            into: throttle
        )
        try await gate.releaseOneAtATime { throttle.runningCount == 0 && throttle.waitingCount == 0 }
        _ = try await blocker.finished()
        for task in waiting { _ = try await task.finished() }
        #expect(gate.arrivals == ["/blocker", "/high-1", "/high-2", "/low", "/high-3", "/high-4", "/high-5"])
    }

    @Test func aCancelledWaiterLeavesTheQueueAtOnce() async throws {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let blocker = Task { await throttle.load(request("/blocker")) }
        try await gate.waitForRunning(1)
        let waiting = try await enqueue([request("/cancel-me"), request("/next")], into: throttle)
        waiting[0].cancel()
        let cancelled = try await waiting[0].finished()
        #expect(cancelled.error?.code == .cancelled)
        #expect(throttle.waitingCount == 1)
        gate.releaseOldest()
        try await gate.waitForRunning(1)
        gate.releaseOldest()
        _ = try await blocker.finished()
        #expect(try await waiting[1].finished().response?.status == .ok)
        #expect(gate.arrivals == ["/blocker", "/next"])
    }

    @Test func resetFailsWaitersRefusesNewOnesAndWaitsForRunningRequests() async throws {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let running = Task { await throttle.load(request("/running")) }
        try await gate.waitForRunning(1)
        let waiting = try await enqueue([request("/w1"), request("/w2")], into: throttle)

        let resetDone = Locked(false)
        let reset = Task {
            await throttle.reset()
            resetDone.withLock { $0 = true }
        }
        for task in waiting { #expect(try await task.finished().error?.code == .resetInProgress) }
        #expect(await throttle.load(request("/during-reset")).error?.code == .resetInProgress)
        #expect(!resetDone.value)  // the running request still holds its slot
        #expect(gate.resets == 0)

        gate.releaseOldest()
        #expect(try await running.finished().response?.status == .ok)
        try await reset.finished()
        #expect(gate.resets == 1)
        #expect(throttle.waitingCount == 0 && throttle.runningCount == 0)
        let after = Task { await throttle.load(request("/after")) }
        try await gate.waitForRunning(1)
        gate.releaseOldest()
        #expect(try await after.finished().response?.status == .ok)
    }
}

import Foundation
import HTTP
import Testing

@Suite struct ThrottleTests {
    private func request(_ path: String, priority: ThrottlePriority = .normal) -> HTTPRequest {
        var request = HTTPRequest(host: "example.com", path: path)
        request.throttlePriority = priority
        return request
    }

    /// Starts loads one at a time, each queued before the next starts, so their order is known.
    private func enqueue(_ requests: [HTTPRequest], into throttle: Throttle) async -> [Task<HTTPResult, Never>] {
        var tasks: [Task<HTTPResult, Never>] = []
        for request in requests {
            let before = throttle.waitingCount
            tasks.append(Task { await throttle.load(request) })
            await eventually { throttle.waitingCount == before + 1 }
        }
        return tasks
    }

    @Test func runsAtMostTheLimitAndTheRestWaitInOrder() async {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 2) --> gate
        let first = Task { await throttle.load(request("/1")) }
        await gate.waitForRunning(1)
        let second = Task { await throttle.load(request("/2")) }
        await gate.waitForRunning(2)
        let waiting = await enqueue([request("/3"), request("/4"), request("/5")], into: throttle)
        #expect(gate.running == 2)
        #expect(throttle.waitingCount == 3)

        // A slot frees only when a downstream load completes, and goes to the oldest waiter.
        gate.release(path: "/2")
        _ = await second.value
        await gate.waitForRunning(2)
        #expect(gate.arrivals.last == "/3")
        // One slot at a time, so that each admitted request reaches the gate before the next is admitted (two
        // admitted at once may arrive in either order: the throttle orders admissions, not the tasks after).
        gate.release(path: "/1")
        await gate.waitForRunning(2)
        #expect(gate.arrivals.last == "/4")
        gate.release(path: "/3")
        await gate.waitForRunning(2)
        #expect(gate.arrivals.last == "/5")
        gate.release(path: "/4")
        gate.release(path: "/5")
        _ = await first.value
        for task in waiting { #expect(await task.value.response?.status == .ok) }
        #expect(throttle.runningCount == 0 && throttle.waitingCount == 0)
        #expect(gate.arrivals == ["/1", "/2", "/3", "/4", "/5"])
        #expect(gate.maximumRunning == 2)
    }

    @Test func raisingTheLimitStartsWaitingRequestsAtOnce() async {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let blocker = Task { await throttle.load(request("/0")) }
        await gate.waitForRunning(1)
        let waiting = await enqueue([request("/1"), request("/2"), request("/3")], into: throttle)
        throttle.maximumNumberOfRequests = 3
        await gate.waitForRunning(3)
        #expect(throttle.waitingCount == 1)
        #expect(throttle.runningCount == 3)

        // Lowering the limit holds new starts until fewer than the limit run.
        throttle.maximumNumberOfRequests = 1
        gate.releaseOldest()
        gate.releaseOldest()
        await eventually { throttle.runningCount == 1 }
        #expect(throttle.waitingCount == 1)
        while throttle.runningCount > 0 || throttle.waitingCount > 0 { gate.releaseOldest(); await Task.yield() }
        _ = await blocker.value
        for task in waiting { _ = await task.value }
        // /1 and /2 were admitted together when the limit rose, and then raced each other to the terminal;
        // /3 was admitted only after the limit fell and they had finished.
        let arrivals = gate.arrivals
        #expect(arrivals.count == 4)
        #expect(arrivals.first == "/0")
        #expect(Set(arrivals.dropFirst().prefix(2)) == ["/1", "/2"])
        #expect(arrivals.last == "/3")
    }

    @Test func requestsThatOptOutBypassTheQueueAndTakeNoSlot() async {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let blocker = Task { await throttle.load(request("/blocker")) }
        await gate.waitForRunning(1)
        var urgent = request("/refresh")
        urgent.throttle = .never
        let bypass = Task { await throttle.load(urgent) }
        await gate.waitForRunning(2)
        #expect(throttle.runningCount == 1)
        gate.release(path: "/refresh")
        #expect(await bypass.value.response?.status == .ok)
        gate.releaseOldest()
        _ = await blocker.value
    }

    @Test func higherLanesGoFirstAndFIFOWithinALane() async {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let blocker = Task { await throttle.load(request("/blocker")) }
        await gate.waitForRunning(1)
        let waiting = await enqueue(
            [
                request("/low-1", priority: .low), request("/normal-1"), request("/high-1", priority: .high),
                request("/normal-2"), request("/high-2", priority: .high),
            ],
            into: throttle
        )
        while throttle.runningCount > 0 || throttle.waitingCount > 0 { gate.releaseOldest(); await Task.yield() }
        _ = await blocker.value
        for task in waiting { _ = await task.value }
        #expect(gate.arrivals == ["/blocker", "/high-1", "/high-2", "/normal-1", "/normal-2", "/low-1"])
    }

    @Test func aLowPriorityRequestIsOvertakenAtMostStarvationLimitTimes() async {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1, starvationLimit: 2) --> gate
        let blocker = Task { await throttle.load(request("/blocker")) }
        await gate.waitForRunning(1)
        let waiting = await enqueue(
            [request("/low", priority: .low)] + (1...5).map { request("/high-\($0)", priority: .high) },
            into: throttle
        )
        while throttle.runningCount > 0 || throttle.waitingCount > 0 { gate.releaseOldest(); await Task.yield() }
        _ = await blocker.value
        for task in waiting { _ = await task.value }
        #expect(gate.arrivals == ["/blocker", "/high-1", "/high-2", "/low", "/high-3", "/high-4", "/high-5"])
    }

    @Test func aCancelledWaiterLeavesTheQueueAtOnce() async {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let blocker = Task { await throttle.load(request("/blocker")) }
        await gate.waitForRunning(1)
        let waiting = await enqueue([request("/cancel-me"), request("/next")], into: throttle)
        waiting[0].cancel()
        let cancelled = await waiting[0].value
        #expect(cancelled.error?.code == .cancelled)
        #expect(throttle.waitingCount == 1)
        gate.releaseOldest()
        await gate.waitForRunning(1)
        gate.releaseOldest()
        _ = await blocker.value
        #expect(await waiting[1].value.response?.status == .ok)
        #expect(gate.arrivals == ["/blocker", "/next"])
    }

    @Test func resetFailsWaitersRefusesNewOnesAndWaitsForRunningRequests() async {
        let gate = GateLoader()
        let throttle = Throttle(maximumNumberOfRequests: 1) --> gate
        let running = Task { await throttle.load(request("/running")) }
        await gate.waitForRunning(1)
        let waiting = await enqueue([request("/w1"), request("/w2")], into: throttle)

        let resetDone = Locked(false)
        let reset = Task {
            await throttle.reset()
            resetDone.withLock { $0 = true }
        }
        for task in waiting { #expect(await task.value.error?.code == .resetInProgress) }
        #expect(await throttle.load(request("/during-reset")).error?.code == .resetInProgress)
        #expect(!resetDone.value)  // the running request still holds its slot
        #expect(gate.resets == 0)

        gate.releaseOldest()
        #expect(await running.value.response?.status == .ok)
        await reset.value
        #expect(gate.resets == 1)
        #expect(throttle.waitingCount == 0 && throttle.runningCount == 0)
        let after = Task { await throttle.load(request("/after")) }
        await gate.waitForRunning(1)
        gate.releaseOldest()
        #expect(await after.value.response?.status == .ok)
    }
}

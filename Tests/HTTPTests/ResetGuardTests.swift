import Foundation
import Testing

@testable import HTTP

/// A loader whose reset blocks until released, counting how many resets reached it.
private final class SlowReset: HTTPLoader, @unchecked Sendable {
    let resets = Locked(0)
    let gate = Locked<[CheckedContinuation<Void, Never>]>([])
    let entered = Locked(false)

    override func forgetState() async {
        resets.withLock { $0 += 1 }
        await withCheckedContinuation { continuation in
            gate.withLock { $0.append(continuation) }
            entered.withLock { $0 = true }
        }
    }

    func release() {
        for waiter in gate.withLock({ gate in
            defer { gate = [] }; return gate
        }) { waiter.resume() }
    }
}

@Suite(.noHang) struct ResetGuardTests {
    @Test func passesLoadsThroughWhenNotResetting() async {
        let chain = ResetGuard() --> MockLoader().then(status: .ok)
        #expect(await chain.load(HTTPRequest(host: "example.com")).response?.status == .ok)
    }

    @Test func refusesLoadsDuringAResetAndCollapsesConcurrentResets() async throws {
        let slow = SlowReset()
        let mock = MockLoader().then(status: .ok)
        let guardLoader = ResetGuard()
        guardLoader --> slow
        slow.nextLoader = mock

        let first = Task { await guardLoader.reset() }
        try await eventually { slow.entered.value }

        // During the reset: loads are refused, and more resets join the running one.
        let refused = await guardLoader.load(HTTPRequest(host: "example.com"))
        #expect(refused.error?.code == .resetInProgress)
        let second = Task { await guardLoader.reset() }
        let third = Task { await guardLoader.reset() }
        try await eventually { guardLoader.waitingResetCount >= 2 }
        #expect(slow.resets.value == 1)

        slow.release()
        try await first.finished()
        try await second.finished()
        try await third.finished()
        #expect(slow.resets.value == 1)
        #expect(mock.receivedRequests.isEmpty)

        // After the reset: loads pass again, and a new reset goes through.
        #expect(await guardLoader.load(HTTPRequest(host: "example.com")).response?.status == .ok)
        let again = Task { await guardLoader.reset() }
        try await eventually { slow.resets.value >= 2 }
        slow.release()
        try await again.finished()
        #expect(slow.resets.value == 2)
    }
}

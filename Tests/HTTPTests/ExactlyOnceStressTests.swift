import Foundation
import Testing

@testable import HTTP

/// A terminal that answers after a random, cancellable delay, and whose reset waits for loads in flight.
/// Requests whose path starts with `/hang/` wait until they are cancelled.
private final class RandomLatencyTerminal: HTTPLoader, @unchecked Sendable {
    let inFlight = InFlightLoads()
    let maximumLatencyMicroseconds: Int

    init(maximumLatencyMicroseconds: Int) {
        self.maximumLatencyMicroseconds = maximumLatencyMicroseconds
    }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        inFlight.begin()
        defer { inFlight.end() }
        do {
            if request.path.hasPrefix("/hang/") {
                try await Task.sleep(for: .seconds(3_600))
            }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...maximumLatencyMicroseconds)))
        } catch {
            return .failure(HTTPError(.cancelled, request: request))
        }
        return .success(HTTPResponse(request: request, status: .ok))
    }

    override func waitUntilIdle() async {
        await inFlight.waitUntilIdle()
    }
}

@Suite(.noHang) struct ExactlyOnceStressTests {
    /// What happened to one load.
    private struct Record: Sendable {
        var completions: [HTTPResult] = []
        /// Set when `HTTPTask.cancel()` reported that it cancelled the load (completion API only): the load
        /// must then have completed as cancelled. A cancel that lost the race to a finished load returns
        /// `false`, and that load's success is legitimate. Swift task cancellation (the async API) is
        /// cooperative, so an async load may legitimately return a response that was ready before the cancel.
        var cancelTookEffect = false
    }

    @Test func everyLoadCompletesExactlyOnceUnderCancellationAndReset() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let loadCount = 1_000
        let terminal = RandomLatencyTerminal(maximumLatencyMicroseconds: 2_000)
        let chain =
            ModifyRequest { request in
                var copy = request
                copy.headers["X-Stress"] = "1"
                return copy
            }
            --> ApplyEnvironment(environment: ServerEnvironment(host: "stress.example"))
            --> ResetGuard()
            --> terminal

        let records = Locked([UUID: Record]())
        let completedAll = AsyncStream.makeStream(of: Void.self)
        let completedCount = Locked(0)

        // A random third of the loads are cancelled. A few of those that use the completion API hang in the
        // terminal until cancelled and are cancelled before the reset starts, so some cancellations certainly
        // take effect however the scheduler runs the rest.
        let cancelled = Array(0..<loadCount).shuffled(using: &random).prefix(loadCount / 3)
        let hanging = Set(cancelled.filter { $0.isMultiple(of: 2) }.prefix(10))
        let cancelOrder = cancelled.filter(hanging.contains) + cancelled.filter { !hanging.contains($0) }

        // Half the loads use the completion API (cancelled through HTTPTask), half the async API (cancelled
        // through Swift task cancellation).
        var handles: [(id: UUID, cancel: @Sendable () -> Bool)] = []
        for index in 0..<loadCount {
            let request = HTTPRequest(path: hanging.contains(index) ? "/hang/\(index)" : "/item/\(index)")
            records.withLock { $0[request.id] = Record() }
            let finish: @Sendable (HTTPResult) -> Void = { result in
                records.withLock { records in records[request.id]!.completions.append(result) }
                if completedCount.withLock({
                    $0 += 1; return $0
                }) == loadCount {
                    completedAll.continuation.finish()
                }
            }
            if index.isMultiple(of: 2) {
                let task = chain.load(request, completion: finish)
                handles.append((request.id, { task.cancel() }))
            } else {
                let task = Task { finish(await chain.load(request)) }
                handles.append(
                    (
                        request.id,
                        {
                            task.cancel()
                            return false  // cooperative: whether it took effect is not known here
                        }
                    ))
            }
        }

        // Cancel the hanging loads, then reset the chain while the other cancellations happen.
        var resetTask: Task<Void, Never>?
        for (offset, index) in cancelOrder.enumerated() {
            if offset == hanging.count {
                // Let some loads succeed first, so the happy path is exercised however slowly the tasks start.
                try await eventually(seconds: 30) {
                    records.withLock { $0.values.contains { $0.completions.first?.response != nil } }
                }
                resetTask = Task { await chain.reset() }
            }
            if offset.isMultiple(of: 50) { await Task.yield() }
            let handle = handles[index]
            if handle.cancel() { records.withLock { $0[handle.id]!.cancelTookEffect = true } }
        }

        let reset = resetTask
        let finished = await withDeadline(seconds: 60) {
            for await _ in completedAll.stream {}
            await reset?.value
            return true
        }
        try #require(finished == true, "seed \(seed): loads still pending after the deadline")

        let all = records.value
        #expect(all.count == loadCount)
        for (id, record) in all {
            #expect(
                record.completions.count == 1, "seed \(seed): load \(id) completed \(record.completions.count) times")
            if record.cancelTookEffect {
                #expect(
                    record.completions.first?.error?.code == .cancelled,
                    "seed \(seed): load \(id) was cancelled but completed with \(String(describing: record.completions.first))"
                )
            }
            if let error = record.completions.first?.error {
                #expect([.cancelled, .resetInProgress].contains(error.code), "seed \(seed): unexpected \(error)")
            }
        }
        for index in hanging {
            #expect(
                all[handles[index].id]?.cancelTookEffect == true,
                "seed \(seed): cancelling hanging load \(index) did not take effect")
        }
        #expect(terminal.inFlight.runningCount == 0)
        let outcomes = all.values.compactMap(\.completions.first)
        let successes = outcomes.filter { $0.response != nil }.count
        #expect(successes > 0, "seed \(seed): nothing succeeded; the stress test did not exercise the happy path")
    }
}

import Foundation
import HTTP
import Testing

/// A seeded generator so a failing run can be replayed.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A terminal that answers after a random, cancellable delay, and whose reset waits for loads in flight.
private final class RandomLatencyTerminal: HTTPLoader, @unchecked Sendable {
    let inFlight = Locked(0)
    let maximumLatencyMicroseconds: Int

    init(maximumLatencyMicroseconds: Int) {
        self.maximumLatencyMicroseconds = maximumLatencyMicroseconds
    }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        inFlight.withLock { $0 += 1 }
        defer { inFlight.withLock { $0 -= 1 } }
        do {
            try await Task.sleep(for: .microseconds(Int.random(in: 0...maximumLatencyMicroseconds)))
        } catch {
            return .failure(HTTPError(.cancelled, request: request))
        }
        return .success(HTTPResponse(request: request, status: .ok))
    }

    override func reset() async {
        while inFlight.value > 0 { try? await Task.sleep(for: .milliseconds(1)) }
    }
}

@Suite struct ExactlyOnceStressTests {
    /// What happened to one load.
    private struct Record: Sendable {
        var completions: [HTTPResult] = []
        var cancelRequestedBeforeCompletion = false
        var cancelRequested = false
        /// Loads through the completion API are cancelled with `HTTPTask.cancel()`, which completes the task
        /// synchronously; for them "cancelled before completion" is exact. Swift task cancellation is
        /// cooperative, so an async load may legitimately return a response that was ready before the cancel.
        var usesCompletionAPI = false
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

        // Half the loads use the completion API (cancelled through HTTPTask), half the async API (cancelled
        // through Swift task cancellation).
        var handles: [(id: UUID, cancel: @Sendable () -> Void)] = []
        for index in 0..<loadCount {
            let request = HTTPRequest(path: "/item/\(index)")
            records.withLock { $0[request.id] = Record(usesCompletionAPI: index.isMultiple(of: 2)) }
            let finish: @Sendable (HTTPResult) -> Void = { result in
                records.withLock { records in
                    if records[request.id]!.cancelRequested {
                        records[request.id]!.cancelRequestedBeforeCompletion = true
                    }
                    records[request.id]!.completions.append(result)
                }
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
                let task = Task(priority: .low) { finish(await chain.load(request)) }
                handles.append((request.id, { task.cancel() }))
            }
        }

        // Cancel a random third of them at random moments, and reset the chain half-way through.
        let toCancel = handles.shuffled(using: &random).prefix(loadCount / 3)
        let resetTask = Task { await chain.reset() }
        for (offset, handle) in toCancel.enumerated() {
            if offset.isMultiple(of: 50) { await Task.yield() }
            records.withLock { $0[handle.id]!.cancelRequested = true }
            handle.cancel()
        }

        let finished = await withDeadline(seconds: 60) {
            for await _ in completedAll.stream {}
            await resetTask.value
            return true
        }
        try #require(finished == true, "seed \(seed): loads still pending after the deadline")

        let all = records.value
        #expect(all.count == loadCount)
        for (id, record) in all {
            #expect(
                record.completions.count == 1, "seed \(seed): load \(id) completed \(record.completions.count) times")
            if record.usesCompletionAPI, record.cancelRequestedBeforeCompletion, let result = record.completions.first {
                #expect(result.error != nil, "seed \(seed): load \(id) reported success after it was cancelled")
            }
            if let error = record.completions.first?.error {
                #expect([.cancelled, .resetInProgress].contains(error.code), "seed \(seed): unexpected \(error)")
            }
        }
        #expect(terminal.inFlight.value == 0)
        let outcomes = all.values.compactMap(\.completions.first)
        let successes = outcomes.filter { $0.response != nil }.count
        #expect(successes > 0, "seed \(seed): nothing succeeded; the stress test did not exercise the happy path")
    }
}

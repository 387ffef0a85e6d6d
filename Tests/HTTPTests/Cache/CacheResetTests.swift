import Foundation
import Testing

@testable import HTTP

/// The cache's part in the chain's promises: every load completes exactly once, cancellation stops it, and a
/// reset refuses, waits or cancels, then forgets every stored response.
@Suite(.noHang) struct CacheResetTests {
    let clock = ManualDate()
    let mock = MockLoader()
    let store = MemoryCacheStore()

    func makeCache() -> Cache {
        let cache = Cache(store: store, now: clock.closure)
        cache.nextLoader = mock
        return cache
    }

    /// Stores a response that is stale after a second and may be served stale for 100 more, then makes it stale.
    func storeStaleWhileRevalidate(in cache: Cache) async {
        mock.then(status: .ok, headers: ["Cache-Control": "max-age=1, stale-while-revalidate=100", "ETag": "\"r\""])
        _ = await cache.load(cacheRequest())
        clock.advance(by: 5)
    }

    /// Queues a handler that answers 304 once `gate` finishes.
    func thenNotModified(after gate: AsyncStream<Void>) {
        mock.then { request in
            for await _ in gate {}
            return .success(HTTPResponse(request: request, status: .notModified))
        }
    }

    @Test func loadsAreRefusedDuringAResetHitsToo() async throws {
        let cache = makeCache()
        mock.then(status: .ok, headers: ["Cache-Control": "max-age=600"])
        _ = await cache.load(cacheRequest())
        cache.beginResetPhase(.drain)
        let refused = await cache.load(cacheRequest())
        #expect(refused.error?.code == .resetInProgress)
        #expect(refused.error?.message == "refused by Cache while the chain resets")
        cache.endResetPhase()
        #expect(try await cache.load(cacheRequest()).get().cacheStatus?.hasPrefix("Cache; hit") == true)
    }

    @Test func aResetForgetsEveryStoredResponse() async throws {
        let cache = makeCache()
        for path in ["/a", "/b"] {
            mock.then(status: .ok, headers: ["Cache-Control": "max-age=600"])
            _ = await cache.load(cacheRequest(path))
        }
        #expect(store.count == 2)
        await cache.reset()
        #expect(store.count == 0)
        mock.then(status: .noContent)
        #expect(try await cache.load(cacheRequest("/a")).get().status == .noContent)
    }

    @Test func aDrainingResetWaitsForTheBackgroundRevalidationThenForgetsItsResult() async throws {
        let cache = makeCache()
        await storeStaleWhileRevalidate(in: cache)
        let gate = AsyncStream.makeStream(of: Void.self)
        thenNotModified(after: gate.stream)
        #expect(try await cache.load(cacheRequest()).get().cacheStatus?.contains("stale-while-revalidate") == true)
        try await eventually { mock.receivedRequests.count == 2 }

        let done = Locked(false)
        let reset = Task {
            await cache.reset(mode: .drain)
            done.withLock { $0 = true }
        }
        try await eventually { cache.isResetting }
        #expect(!done.value, "the reset returned while a revalidation was in flight")
        #expect(cache.backgroundRevalidationCount == 1)
        gate.continuation.finish()
        try await reset.finished()
        #expect(cache.backgroundRevalidationCount == 0)
        #expect(store.count == 0)
    }

    @Test func aCancellingResetCancelsTheBackgroundRevalidation() async throws {
        let cache = makeCache()
        await storeStaleWhileRevalidate(in: cache)
        let gate = AsyncStream.makeStream(of: Void.self)
        thenNotModified(after: gate.stream)
        _ = await cache.load(cacheRequest())
        try await eventually { mock.receivedRequests.count == 2 }
        await cache.reset(mode: .cancel)  // returns without the gate ever opening
        #expect(cache.backgroundRevalidationCount == 0)
        #expect(store.count == 0)
        gate.continuation.finish()
    }

    @Test func noRevalidationStartsDuringAReset() async throws {
        let cache = makeCache()
        await storeStaleWhileRevalidate(in: cache)
        cache.beginResetPhase(.drain)
        var ownTraffic = cacheRequest()
        ownTraffic.isPartOfReset = true  // let through, as a loader's own reset traffic is
        #expect(try await cache.load(ownTraffic).get().cacheStatus?.contains("stale-while-revalidate") == true)
        #expect(cache.backgroundRevalidationCount == 0)
        cache.endResetPhase()
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func aLoadCancelledWhileSentCompletesOnceAsCancelledAndStoresNothing() async throws {
        let cache = makeCache()
        mock.then { request in
            try? await Task.sleep(for: .seconds(600))
            return .success(HTTPResponse(request: request, status: .ok, headers: ["Cache-Control": "max-age=600"]))
        }
        let load = Task { await cache.load(cacheRequest()) }
        try await eventually { mock.receivedRequests.count == 1 }
        load.cancel()
        #expect(try await load.finished().error?.code == .cancelled)
        #expect(store.count == 0)
    }

    /// A thousand loads over sixteen URLs whose responses carry random freshness, validators and
    /// stale-while-revalidate windows, from a terminal with random latency and failures, while time moves, tasks
    /// are cancelled and the chain is reset in both modes: every load completes exactly once, and no background
    /// revalidation is left running.
    @Test func everyLoadCompletesExactlyOnceUnderCancellationAndResets() async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let context = "seed \(seed) (replay with HTTP_TEST_SEED=\(seed))"
        let loadCount = 1_000
        let cache = makeCache()
        for _ in 0..<(loadCount * 3) {
            let latency = Int.random(in: 0...2_000, using: &random)
            let outcome = Int.random(in: 0..<12, using: &random)
            let maxAge = Int.random(in: 0...3, using: &random)
            mock.then { [clock] request in
                do {
                    try await Task.sleep(for: .microseconds(latency))
                } catch {
                    return .failure(HTTPError(.cancelled, request: request))
                }
                let headers: HTTPHeaders = [
                    "Cache-Control": "max-age=\(maxAge), stale-while-revalidate=2, stale-if-error=2",
                    "ETag": "\"\(outcome % 3)\"", "Date": clock.httpDate(),
                ]
                switch outcome {
                case 0: return .failure(HTTPError(.cannotConnect, request: request))
                case 1: return .success(HTTPResponse(request: request, status: .serviceUnavailable))
                case 2, 3: return .success(HTTPResponse(request: request, status: .notModified, headers: headers))
                default: return .success(HTTPResponse(request: request, status: .ok, headers: headers))
                }
            }
        }
        let unexpected = Locked([String]())
        let tally = Locked([String: Int]())
        let cancelled = Set((0..<loadCount).shuffled(using: &random).prefix(loadCount / 5))
        let resetModes = (0..<3).map { _ in Bool.random(using: &random) ? ResetMode.drain : .cancel }
        // Each reset starts while the loads are being started, after a random share of them.
        let resetAfter = (0..<3).map { _ in Int.random(in: (loadCount / 10)..<(loadCount * 9 / 10), using: &random) }
        let paths = (0..<loadCount).map { _ in "/item/\(Int.random(in: 0..<16, using: &random))" }
        let methods = (0..<loadCount).map { _ in Int.random(in: 0..<10, using: &random) == 0 ? HTTPMethod.post : .get }

        let finished = await withDeadline(seconds: 120) { [clock] in
            await withTaskGroup(of: Void.self) { group in
                var tasks: [Task<Void, Never>] = []
                for index in 0..<loadCount {
                    let task = Task {
                        let result = await cache.load(cacheRequest(paths[index], method: methods[index]))
                        let status = result.response?.cacheStatus?.split(separator: ";").dropFirst().first
                        let outcome =
                            status.map { $0.trimmingCharacters(in: .whitespaces) } ?? result.error?.code.rawValue ?? "-"
                        tally.withLock { $0[outcome, default: 0] += 1 }
                        if let error = result.error,
                            ![.cancelled, .resetInProgress, .cannotConnect].contains(error.code)
                        {
                            unexpected.withLock { $0.append("\(index): \(error)") }
                        }
                    }
                    tasks.append(task)
                    group.addTask { await task.value }  // bounded by the deadline around the group
                    if let reset = resetAfter.firstIndex(of: index) {
                        group.addTask { await cache.reset(mode: resetModes[reset]) }
                    }
                    if index.isMultiple(of: 20) {
                        clock.advance(by: 1)
                        await Task.yield()
                    }
                }
                for index in cancelled { tasks[index].cancel() }
            }
            return true
        }
        try #require(finished == true, "\(context): loads or resets still pending after the deadline")
        // Each load returned exactly once: a continuation resumed twice traps, and one never resumed keeps the run past the
        // deadline above; counting returns after `await` could not fail, so nothing is counted.
        #expect(unexpected.value.isEmpty, "\(context): \(unexpected.value.prefix(3))")
        let outcomes = tally.value
        print("CacheResetTests: \(context): \(outcomes.sorted { $0.key < $1.key })")
        #expect((outcomes["hit"] ?? 0) > 0 && (outcomes["resetInProgress"] ?? 0) > 0, "\(context): \(outcomes)")
        try await eventually { cache.backgroundRevalidationCount == 0 }
    }
}

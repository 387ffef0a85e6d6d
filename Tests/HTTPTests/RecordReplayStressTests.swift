import Foundation
import Testing

@testable import HTTP

/// Recording and replaying under concurrency: a thousand loads through a `Recorder` above a random-latency
/// `MockLoader`, with cancellations and resets in both modes; the cassette then holds exactly the loads whose
/// results came from the server side, each once and as its caller saw it, and a `ReplayLoader` gives every one of
/// them back to concurrent callers. Runs under ThreadSanitizer in the test command.
@Suite(.noHang) struct RecordReplayStressTests {
    @Test(arguments: 0..<2)
    func everyLoadIsRecordedOnceAsItsCallerSawItAndReplayedOnce(run: Int) async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let loadCount = 1_000
        let mock = MockLoader()
        for _ in 0..<loadCount {
            let latency = Int.random(in: 0...3_000, using: &random)
            let outcome = Int.random(in: 0..<10, using: &random)
            mock.then { request in
                do {
                    try await Task.sleep(for: .microseconds(latency))
                } catch {
                    return .failure(HTTPError(.cancelled, request: request))
                }
                switch outcome {
                case 0: return .failure(HTTPError(.cannotConnect, request: request, message: "refused"))
                case 1: return .success(HTTPResponse(request: request, status: .serviceUnavailable))
                default: return .success(HTTPResponse(request: request, status: .ok, body: Data(request.path.utf8)))
                }
            }
        }
        let recorder = Recorder()
        let chain = ResetGuard() --> recorder --> mock
        let cancelled = Set((0..<loadCount).shuffled(using: &random).prefix(loadCount / 5))
        let resetModes = (0..<2).map { _ in Bool.random(using: &random) ? ResetMode.drain : .cancel }
        let resetAfter = (0..<2).map { _ in Int.random(in: (loadCount / 10)..<(loadCount * 8 / 10), using: &random) }
        let results = Locked([HTTPResult?](repeating: nil, count: loadCount))
        let completions = Locked([Int](repeating: 0, count: loadCount))

        let finished = await withDeadline(seconds: 120) {
            await withTaskGroup(of: Void.self) { group in
                var tasks: [Task<Void, Never>] = []
                for index in 0..<loadCount {
                    let task = Task {
                        let result = await chain.load(HTTPRequest(host: "api.example.com", path: "/item/\(index)"))
                        results.withLock { $0[index] = result }
                        completions.withLock { $0[index] += 1 }
                    }
                    tasks.append(task)
                    group.addTask { await task.value }  // bounded by the deadline around the group
                    if index.isMultiple(of: 50) { await Task.yield() }
                }
                for (mode, threshold) in zip(resetModes, resetAfter) {
                    group.addTask {
                        try? await eventually { completions.withLock { $0.reduce(0, +) } >= threshold }
                        await chain.reset(mode: mode)
                    }
                }
                for index in cancelled { tasks[index].cancel() }
            }
            return true
        }
        let context = "seed \(seed), resets \(resetModes) after \(resetAfter)"
        try #require(finished == true, "\(context): loads still pending")
        // Each load returned exactly once: a continuation resumed twice traps, and one never resumed keeps the run past the
        // deadline above; counting returns after `await` could not fail, so the count above only times the resets.

        // The cassette holds each load whose result came from below the recorder, once, as its caller saw it.
        let entries = recorder.cassette.entries
        var entryByPath: [String: Cassette.Entry] = [:]
        for entry in entries {
            let path = URL(string: entry.request.url)!.path
            #expect(entryByPath.updateValue(entry, forKey: path) == nil, "\(context): \(path) recorded twice")
        }
        var recordable = 0
        for (index, result) in results.value.enumerated() {
            let entry = entryByPath["/item/\(index)"]
            switch result {
            case .success(let response)?:
                recordable += 1
                #expect(entry?.response?.status == response.status, "\(context): /item/\(index)")
            case .failure(let error)? where error.code == .cannotConnect:
                recordable += 1
                #expect(entry?.failure?.code == .cannotConnect, "\(context): /item/\(index)")
            case .failure(let error)?:
                #expect(entry == nil, "\(context): /item/\(index) ended with \(error.code) but was recorded")
            case nil:
                Issue.record("\(context): /item/\(index) has no result")
            }
        }
        #expect(entries.count == recordable, "\(context)")
        #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted(), "\(context)")
        let codes = results.value.compactMap { $0?.error?.code.rawValue }
        print(
            "RecordReplayStressTests: \(context): \(recordable) of \(loadCount) loads recorded; failures: "
                + "\(Dictionary(grouping: codes, by: { $0 }).mapValues(\.count).sorted { $0.key < $1.key })")

        // Replayed concurrently in a random order, each recorded load gets its own answer back.
        let replay = ReplayLoader(cassette: recorder.cassette)
        let paths = entries.map { URL(string: $0.request.url)!.path }.shuffled(using: &random)
        let recorded = entryByPath
        let mismatches = await withTaskGroup(of: String?.self) { group in
            for path in paths {
                group.addTask {
                    let replayed = await replay.load(HTTPRequest(host: "api.example.com", path: path))
                    let expected = recorded[path]!
                    switch replayed {
                    case .success(let response) where response.status == expected.response?.status:
                        return expected.response?.status == .ok && response.body != Data(path.utf8) ? path : nil
                    case .failure(let error) where error.code == expected.failure?.code: return nil
                    default: return "\(path): \(replayed)"
                    }
                }
            }
            var mismatches: [String] = []
            for await mismatch in group { if let mismatch { mismatches.append(mismatch) } }
            return mismatches
        }
        #expect(mismatches.isEmpty, "\(context): \(mismatches.prefix(3))")
        #expect(replay.unusedEntries.isEmpty, "\(context)")
    }
}

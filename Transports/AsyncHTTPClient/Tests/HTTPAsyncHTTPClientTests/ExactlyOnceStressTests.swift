import Foundation
import HTTP
import Testing

@testable import HTTPAsyncHTTPClient

/// Every load completes exactly once — with a response, a cancellation or a reset's refusal — when loads, streams
/// and downloads run together over loopback while tasks are cancelled at random moments and the chain is reset
/// in both modes; afterwards no transfer is left under way.
@Suite(
    .timeLimit(.minutes(3)), .enabled(if: TestServers.haveHTTP, "needs the local servers: run through scripts/test.sh"))
struct ExactlyOnceStressTests {
    let nginx = TestServers.nginx!
    let downloads = TestServers.downloads!

    @Test func loadsStreamsAndDownloadsUnderCancelsAndResets() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        print("ExactlyOnceStressTests seed: \(seed)")
        var random = SplitMix(seed: seed)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoader { loader async throws in
            let person = nginx.appending(path: "person.json")
            let large = downloads.appending(path: "file/200000")
            let outcomes = Box<[String: Int]>([:])
            let count = 300
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    let kind = random.next() % 10
                    let cancelAfter = random.next() % 4 == 0 ? Int(random.next() % 3_000) : nil
                    let task = Task {
                        let result: HTTPResult
                        switch kind {
                        case 0:
                            result = await loader.download(
                                HTTPRequest(url: large), to: folder.appending(path: "\(index).bin"))
                        case 1:
                            switch await loader.stream(HTTPRequest(url: large)) {
                            case .success(let streamed):
                                do {
                                    _ = try await streamed.body.collect()
                                    result = .success(streamed.head)
                                } catch {
                                    result = .failure(
                                        error as? HTTPError ?? HTTPError(.unknown, request: streamed.head.request))
                                }
                            case .failure(let error):
                                result = .failure(error)
                            }
                        default:
                            result = await loader.load(HTTPRequest(url: person))
                        }
                        let label = result.response.map { "\($0.status.rawValue)" } ?? result.error!.code.rawValue
                        outcomes.withLock { $0[label, default: 0] += 1 }
                    }
                    group.addTask {
                        if let cancelAfter {
                            try? await Task.sleep(for: .microseconds(cancelAfter))
                            task.cancel()
                        }
                        try await task.finished()
                    }
                    if index % 100 == 50 {
                        // A drain, a cancel, a drain, once a quarter, a half, three quarters of the loads have
                        // completed: loads are in flight then.
                        let mode: ResetMode = index == 150 ? .cancel : .drain
                        let threshold = (index / 100 + 1) * count / 4
                        group.addTask {
                            try await eventually { outcomes.value.values.reduce(0, +) >= threshold }
                            await loader.reset(mode: mode)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let seen = outcomes.value
            print("ExactlyOnceStressTests outcomes: \(seen.sorted { $0.key < $1.key })")
            #expect(seen.values.reduce(0, +) == count, "every load completed exactly once: \(seen)")
            #expect(Set(seen.keys).isSubset(of: ["200", "cancelled", "resetInProgress"]), "\(seen)")
            try await eventually(seconds: 20) { loader.transfersUnderWay == 0 }
        }
    }
}

/// SplitMix64: a small seeded generator, so that a failing run can be repeated from its seed.
struct SplitMix {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import Foundation
import HTTP
import HTTPOpenAPI
import OpenAPIRuntime
import Testing

/// Many generated-client calls at once through a throttled chain, some cancelled at random and a reset in the middle:
/// every call ends exactly once, with its response or with the chain's cancellation or reset error. Run under
/// ThreadSanitizer by the test command.
@Suite(.timeLimit(.minutes(2)))
struct LoaderTransportStressTests {
    @Test func everyCallEndsOnceWhateverIsCancelledOrReset() async throws {
        let calls = 1000
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let mock = MockLoader()
        for _ in 0..<calls {
            let pause = Int(random.next() % 500)
            mock.then { request in
                try? await Task.sleep(for: .microseconds(pause))
                return .success(
                    HTTPResponse(request: request, status: .ok, headers: jsonHeaders, body: echo(url: "/get")))
            }
        }
        let counter = CountingLoader()
        let chain = counter --> Throttle(maximumNumberOfRequests: 8) --> mock
        let client = Client(
            serverURL: URL(string: "https://api.example.com")!, transport: LoaderTransport(loader: chain))
        let cancelled = (0..<calls).map { _ in random.next() % 4 == 0 }
        // The reset starts once this many loads have succeeded, so that some calls end before it and some during it.
        let resetAfter = calls / 8 + Int(random.next() % UInt64(calls / 2))

        let outcomes = try await withDeadline(seconds: 90) {
            await withTaskGroup(of: String.self) { group -> [String] in
                group.addTask {
                    while counter.successCount < resetAfter { try? await Task.sleep(for: .milliseconds(1)) }
                    await chain.reset(mode: .cancel)
                    return "reset"
                }
                for index in 0..<calls {
                    let call = Task { () -> String in
                        do {
                            let output = try await client.getAnything()
                            return try output.ok.body.json.url == "/get" ? "ok" : "wrong body"
                        } catch {
                            return chainError(error)?.code.rawValue ?? "other error: \(error)"
                        }
                    }
                    if cancelled[index] { call.cancel() }
                    group.addTask { await call.value }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }

        let results = outcomes.filter { $0 != "reset" }
        #expect(outcomes.count == calls + 1, "seed \(seed)")
        #expect(results.count == calls, "seed \(seed)")
        let unexpected = results.filter { !["ok", "cancelled", "resetInProgress"].contains($0) }
        #expect(unexpected.isEmpty, "seed \(seed): \(Set(unexpected))")
        #expect(results.filter { $0 == "ok" }.count >= resetAfter, "seed \(seed)")
        // Each load through the chain came back once.
        #expect(counter.loadCount == calls && counter.resultCount == calls, "seed \(seed)")
    }
}

/// A small seeded generator, so that a failing run can be repeated with its seed.
struct SplitMix64: RandomNumberGenerator {
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

import Foundation
import HTTP
import Testing

/// Adds a header and forwards — the minimal custom loader from the documentation.
private final class UserAgent: HTTPLoader, @unchecked Sendable {
    let value: String
    init(_ value: String) { self.value = value }
    override func load(_ request: HTTPRequest) async -> HTTPResult {
        var copy = request
        if copy.headers["User-Agent"] == nil { copy.headers["User-Agent"] = value }
        return await super.load(copy)
    }
}

@Suite(.noHang) struct HTTPLoaderTests {
    @Test func aLoaderWithNoNextLoaderFailsWithCannotConnect() async {
        let result = await HTTPLoader().load(HTTPRequest(host: "example.com"))
        #expect(result.error?.code == .cannotConnect)
        #expect(result.error?.message.contains("end of the chain") == true)
    }

    @Test func theDefaultLoadForwardsToTheNextLoader() async {
        let mock = MockLoader().then(status: .ok)
        let chain = UserAgent("test/1") --> HTTPLoader() --> mock
        let result = await chain.load(HTTPRequest(host: "example.com"))
        #expect(result.response?.status == .ok)
        #expect(mock.receivedRequests.first?.headers["User-Agent"] == "test/1")
    }

    @Test func chainingIsRightAssociativeAndReturnsTheTypedHead() {
        let a = UserAgent("a")
        let b = ModifyRequest { $0 }
        let c = MockLoader()
        let chain = a --> b --> c
        #expect(chain === a)
        #expect(chain.value == "a")  // the head keeps its type: no cast, no `!`
        #expect(a.nextLoader === b)
        #expect(b.nextLoader === c)
        #expect(c.nextLoader == nil)
    }

    @Test(arguments: [false])
    func optionalLinksCanBeSkipped(verbose: Bool) {
        let logger: PrintLoader? = verbose ? PrintLoader() : nil
        let terminal = MockLoader()
        let head = logger --> terminal
        #expect(head === terminal)
        let noTerminal: HTTPLoader? = nil
        let lone = ResetGuard()
        let linked: ResetGuard = lone --> noTerminal
        #expect(linked === lone)
        #expect(lone.nextLoader == nil)

        // An optional link in the middle: the chain keeps its typed head and skips the missing link.
        let mock = MockLoader()
        let chain: ResetGuard = ResetGuard() --> logger --> mock
        #expect(chain.nextLoader === mock)
        let withLogger = ResetGuard() --> PrintLoader?.some(PrintLoader()) --> MockLoader()
        #expect(withLogger.nextLoader is PrintLoader)
    }

    @Test func settingTheSameNextLoaderAgainIsAllowed() {
        let a = ResetGuard()
        let b = MockLoader()
        a.nextLoader = b
        a.nextLoader = b
        #expect(a.nextLoader === b)
    }

    @Test func resetPropagatesDownTheChain() async {
        let counter = CountingLoader()
        let chain = ModifyRequest { $0 } --> ApplyEnvironment(environment: .init(host: "x")) --> counter
        await chain.reset()
        #expect(counter.resets.value == 1)
    }

    @Test func completionResetRunsAfterTheChainReset() async {
        let counter = CountingLoader()
        let chain = ModifyRequest { $0 } --> counter
        await withCheckedContinuation { continuation in
            chain.reset { continuation.resume() }
        }
        #expect(counter.resets.value == 1)
    }
}

@Suite(.noHang) struct HTTPTaskTests {
    @Test func completionRunsOnceWithTheResult() async throws {
        let results = Locked<[HTTPResult]>([])
        let mock = MockLoader().then(status: .created)
        var started: HTTPTask?
        await withCheckedContinuation { continuation in
            started = mock.load(HTTPRequest(host: "example.com")) { result in
                results.withLock { $0.append(result) }
                continuation.resume()  // a second call would trap: the completion must run once
            }
        }
        let task = try #require(started)
        #expect(results.value.count == 1)
        #expect(results.value.first?.response?.status == .created)
        #expect(task.isFinished)
        task.cancel()  // after completion: nothing happens
        #expect(results.value.count == 1)
    }

    @Test func cancelCompletesAtOnceWithCancelledAndStopsTheLoad() async throws {
        let handlerWasCancelled = Locked(false)
        let mock = MockLoader().then { request in
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                handlerWasCancelled.withLock { $0 = true }
            }
            return .success(HTTPResponse(request: request))
        }
        let results = Locked<[HTTPResult]>([])
        let task = mock.load(HTTPRequest(host: "example.com")) { result in results.withLock { $0.append(result) } }
        #expect(task.id == task.request.id)
        try await eventually { !mock.receivedRequests.isEmpty }
        task.cancel()
        #expect(results.value.count == 1)  // synchronously, before the handler even notices
        #expect(results.value.first?.error?.code == .cancelled)
        task.cancel()
        try await eventually { handlerWasCancelled.value }
        await mock.reset()  // waits for the handler to return
        #expect(results.value.count == 1)
    }

    @Test func aTaskCancelledBeforeItsWorkRegistersStillCancelsTheWork() async {
        let ran = Locked(false)
        let task = HTTPTask(request: HTTPRequest()) { _ in }
        task.cancel()
        task.onCancel { ran.withLock { $0 = true } }
        #expect(ran.value)
        #expect(!task.complete(with: .success(HTTPResponse(request: HTTPRequest()))))
    }
}

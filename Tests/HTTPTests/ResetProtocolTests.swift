import Foundation
import Testing

@testable import HTTP

/// A pass-through loader that records the reset protocol's calls on it.
private final class PhaseRecorder: HTTPLoader, @unchecked Sendable {
    let name: String
    let log: Locked<[String]>
    init(_ name: String, log: Locked<[String]>) {
        self.name = name
        self.log = log
    }
    override func failHeldLoads(_ mode: ResetMode) { log.withLock { $0.append("begin \(name) \(mode)") } }
    override func waitUntilIdle() async { log.withLock { $0.append("idle \(name)") } }
    override func forgetState() async {
        log.withLock { $0.append("reset \(name)") }
    }
    override func resetDidEnd() { log.withLock { $0.append("end \(name)") } }
}

/// A loader with state to forget and nothing held: it overrides only `forgetState()`.
private final class LegacyCounter: HTTPLoader, @unchecked Sendable {
    let resets = Locked(0)
    override func forgetState() async {
        resets.withLock { $0 += 1 }
    }
}

/// A loader that holds nothing and overrides nothing.
private final class PlainLoader: HTTPLoader, @unchecked Sendable {}

@Suite(.noHang) struct ResetProtocolTests {
    @Test func phasesRunOnEveryLoaderTopToBottomAndEndBottomToTop() async {
        let log = Locked<[String]>([])
        let chain = PhaseRecorder("a", log: log) --> PhaseRecorder("b", log: log) --> PhaseRecorder("c", log: log)
        await chain.reset(mode: .cancel)
        #expect(
            log.value == [
                "begin a cancel", "begin b cancel", "begin c cancel", "idle a", "idle b", "idle c", "reset a",
                "reset b", "reset c", "end c", "end b", "end a",
            ])
        log.withLock { $0 = [] }
        await chain.reset(mode: .drain)
        #expect(log.value.first == "begin a drain")
        #expect(log.value.filter { $0.hasPrefix("reset") } == ["reset a", "reset b", "reset c"])
    }

    @Test func everyLoaderForgetsItsStateOnceWhereverItIs() async {
        let top = LegacyCounter()
        let middle = LegacyCounter()
        let bottom = LegacyCounter()
        let chain = top --> ApplyEnvironment(environment: ServerEnvironment(host: "h")) --> middle --> bottom
        await chain.reset()
        // `reset()` is the entry point only, never a phase: the head forgets once, like every other loader.
        #expect(top.resets.value == 1)
        #expect(middle.resets.value == 1)
        #expect(bottom.resets.value == 1)
    }

    /// A loader that holds nothing and overrides nothing keeps the promise: once a reset has begun, it passes
    /// nothing on, and the reset waits for what it had passed on.
    @Test func aLoaderThatOverridesNothingRefusesDuringAResetAndIsWaitedFor() async throws {
        let (release, open) = AsyncStream.makeStream(of: Void.self)
        let mock = MockLoader()
            .then { request in
                for await _ in release {}
                return .success(HTTPResponse(request: request, status: .ok))
            }
            .then(status: .ok)
        let plain = PlainLoader()
        let chain = ResetSignal() --> plain --> mock
        let inFlight = Task { await chain.load(HTTPRequest(host: "h", path: "/in-flight")) }
        try await eventually { mock.receivedRequests.count == 1 }
        let resetReturned = Locked(false)
        let reset = Task {
            await chain.reset()
            resetReturned.withLock { $0 = true }
        }
        try await eventually { plain.isResetting }
        // Called on the plain loader directly, as a loader above it in another chain would.
        let refused = await plain.load(HTTPRequest(host: "h", path: "/during"))
        #expect(refused.error?.code == .resetInProgress)
        #expect(refused.error?.message == "refused by PlainLoader while the chain resets")
        #expect(!resetReturned.value, "the reset returned while a load it had passed on was in flight")
        open.finish()
        #expect(try await inFlight.finished().response?.status == .ok)
        try await reset.finished()
        #expect(mock.receivedRequests.map(\.path) == ["/in-flight"])
        #expect(await chain.load(HTTPRequest(host: "h", path: "/after")).response?.status == .ok)
    }

    /// A reset called while another one called on the same loader runs waits for it; one that asks to cancel
    /// cancels what the running one drains.
    @Test func aSecondResetJoinsTheRunningOneAndACancellingOneCancelsWhatItDrains() async throws {
        let mock = MockLoader().then { request in
            try? await Task.sleep(for: .seconds(3_600))
            return .success(HTTPResponse(request: request, status: .ok))
        }
        let guardLoader = ResetGuard()
        let chain = guardLoader --> mock
        let load = Task { await chain.load(HTTPRequest(host: "h")) }
        try await eventually { mock.receivedRequests.count == 1 }
        let first = Task { await chain.reset(mode: .drain) }
        try await eventually { guardLoader.isResetting }
        let second = Task { await chain.reset(mode: .cancel) }
        // The cancelling reset ends the load the draining one waited for; both return.
        #expect(try await load.finished().error?.code == .cancelled)
        try await first.finished()
        try await second.finished()
        #expect(!guardLoader.isResetting)
    }

    @Test func aDrainingResetWaitsForLoadsInFlightAndLetsThemFinish() async throws {
        let gate = Locked<CheckedContinuation<Void, Never>?>(nil)
        let mock = MockLoader().then { request in
            await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
            return .success(HTTPResponse(request: request, status: .ok))
        }
        let log = Locked<[String]>([])
        let chain = PhaseRecorder("head", log: log) --> mock
        let load = Task { await chain.load(HTTPRequest(host: "h")) }
        try await eventually { gate.value != nil }
        let done = Locked(false)
        let reset = Task {
            await chain.reset(mode: .drain)
            done.withLock { $0 = true }
        }
        // Meanwhile new loads are refused.
        try await eventually { log.value.contains("idle head") }
        #expect(await chain.load(HTTPRequest(host: "h", path: "/new")).error?.code == .resetInProgress)
        #expect(!done.value)
        gate.value?.resume()
        #expect(try await load.finished().response?.status == .ok)
        try await reset.finished()
        #expect(mock.receivedRequests.map(\.path) == ["/"])
    }

    @Test func aCancellingResetEndsLoadsInFlightAtOnce() async throws {
        let mock = MockLoader().then { request in
            try? await Task.sleep(for: .seconds(3_600))
            return .success(HTTPResponse(request: request, status: .ok))
        }
        let chain = Retry() --> Throttle(maximumNumberOfRequests: 1) --> mock
        let load = Task { await chain.load(HTTPRequest(host: "h")) }
        try await eventually { mock.receivedRequests.count == 1 }
        let queued = Task { await chain.load(HTTPRequest(host: "h", path: "/queued")) }
        try await eventually { (chain.nextLoader as? Throttle)?.waitingCount == 1 }
        await chain.reset(mode: .cancel)
        #expect(try await load.finished().error?.code == .cancelled)
        #expect(try await queued.finished().error?.code == .resetInProgress)
        #expect(mock.receivedRequests.count == 1)
    }

    /// The example: `Retry --> Throttle(1)` with one load running and 19 queued. The reset fails the 19
    /// at once — none of them is sent — and returns as soon as the one in flight has finished.
    @Test func queuedRequestsAreNotSentDuringAReset() async throws {
        let released = Locked(false)
        let mock = MockLoader()
        for _ in 0..<20 {
            mock.then { request in
                try? await eventually { released.value }
                return .success(HTTPResponse(request: request, status: .ok))
            }
        }
        let throttle = Throttle(maximumNumberOfRequests: 1)
        let chain = Retry() --> throttle --> mock
        let loads = (0..<20).map { index in Task { await chain.load(HTTPRequest(host: "h", path: "/\(index)")) } }
        try await eventually { mock.receivedRequests.count == 1 && throttle.waitingCount == 19 }
        let reset = Task { await chain.reset() }
        // The queue empties at once; the one in flight is still held.
        try await eventually { throttle.waitingCount == 0 }
        released.withLock { $0 = true }
        try await reset.finished()
        var refused = 0
        for load in loads {
            if case .failure(let error) = try await load.finished(), error.code == .resetInProgress { refused += 1 }
        }
        #expect(refused == 19)
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func theCompletionHandlerResetHonoursTheMode() async throws {
        let mock = MockLoader().then { request in
            try? await Task.sleep(for: .seconds(3_600))
            return .success(HTTPResponse(request: request, status: .ok))
        }
        let load = Task { await mock.load(HTTPRequest(host: "h")) }
        try await eventually { mock.receivedRequests.count == 1 }
        await withCheckedContinuation { continuation in
            mock.reset(mode: .cancel) { continuation.resume() }
        }
        #expect(try await load.finished().error?.code == .cancelled)
    }
}

/// A load whose task is already cancelled stops at the first loader that sees it.
@Suite(.noHang) struct CancelledLoadTests {
    private static func heads() -> [(String, HTTPLoader)] {
        [
            ("ApplyEnvironment", ApplyEnvironment(environment: ServerEnvironment(host: "h"))),
            ("ModifyRequest", ModifyRequest { $0 }),
            ("PrintLoader", PrintLoader(sink: { _ in })),
            ("ResetGuard", ResetGuard()),
            ("Retry", Retry()),
            ("Throttle", Throttle(maximumNumberOfRequests: 2)),
        ]
    }

    @Test func noLoaderCarriesACancelledLoadToTheTerminal() async throws {
        for (name, head) in Self.heads() {
            let terminal = CountingLoader()
            let chain = head --> PrintLoader(sink: { _ in }) --> terminal
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await chain.load(HTTPRequest(host: "h"))
            }
            let result = try await task.finished()
            #expect(result.error?.code == .cancelled, "\(name)")
            #expect(terminal.loads.value.isEmpty, "\(name) sent a cancelled load on")
        }
    }
}

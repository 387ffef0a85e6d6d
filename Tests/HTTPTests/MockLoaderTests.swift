import Foundation
import HTTP
import Testing

@Suite(.noHang) struct MockLoaderTests {
    @Test func answersFromTheQueueInOrderAndRecordsRequests() async {
        let mock = MockLoader()
            .then { request in .success(HTTPResponse(request: request, status: .ok, body: Data("one".utf8))) }
            .then(status: .notFound, headers: ["X-Reason": "gone"])
            .then(failWith: .timedOut)
        let first = await mock.load(HTTPRequest(host: "example.com", path: "/1"))
        let second = await mock.load(HTTPRequest(host: "example.com", path: "/2"))
        let third = await mock.load(HTTPRequest(host: "example.com", path: "/3"))
        #expect(first.response.map { String(decoding: $0.body, as: UTF8.self) } == "one")
        #expect(second.response?.status == .notFound)  // a 404 is a response, not an error
        #expect(second.response?[header: "x-reason"] == "gone")
        #expect(third.error?.code == .timedOut)
        #expect(mock.receivedRequests.map(\.path) == ["/1", "/2", "/3"])
        #expect(mock.pendingHandlerCount == 0)
    }

    @Test func failsWithCannotConnectWhenNoHandlerIsLeft() async {
        let mock = MockLoader()
        let result = await mock.load(HTTPRequest(host: "example.com"))
        #expect(result.error?.code == .cannotConnect)
        #expect(result.error?.message.contains("no handler left") == true)
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func asyncHandlersAndCancellation() async throws {
        let mock = MockLoader().then { request in
            try? await Task.sleep(for: .seconds(30))
            return .success(HTTPResponse(request: request))
        }
        let load = Task { await mock.load(HTTPRequest(host: "example.com")) }
        try await eventually { !mock.receivedRequests.isEmpty }
        load.cancel()
        let result = try await load.finished(within: 5)
        #expect(result.error?.code == .cancelled)  // never the handler's success
    }

    @Test func anAlreadyCancelledLoadUsesNoHandler() async throws {
        let mock = MockLoader().then(status: .ok)
        let load = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await mock.load(HTTPRequest(host: "example.com"))
        }
        #expect(try await load.finished().error?.code == .cancelled)
        #expect(mock.receivedRequests.isEmpty)
        #expect(mock.pendingHandlerCount == 1)
    }

    @Test func resetWaitsForRunningHandlers() async throws {
        // The handler runs until the test lets it return, after the reset has begun: a reset that did not wait
        // for it would return while `finished` is still false.
        let (release, open) = AsyncStream.makeStream(of: Void.self)
        let finished = Locked(false)
        let mock = MockLoader().then { request in
            for await _ in release {}
            finished.withLock { $0 = true }
            return .success(HTTPResponse(request: request))
        }
        let signal = ResetSignal()
        let chain = signal --> mock
        let load = Task { await chain.load(HTTPRequest(host: "example.com")) }
        try await eventually { !mock.receivedRequests.isEmpty }
        let resetReturned = Locked(false)
        let reset = Task {
            await chain.reset()
            resetReturned.withLock { $0 = true }
        }
        try await eventually { signal.isResetting }
        #expect(!resetReturned.value, "the reset returned while the handler ran")
        open.finish()
        try await reset.finished()
        #expect(finished.value)
        #expect(try await load.finished().response?.status == .ok)
    }
}

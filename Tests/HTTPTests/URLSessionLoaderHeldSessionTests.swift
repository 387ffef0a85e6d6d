#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
@testable import HTTP
import HTTPTestSupport
import Testing

/// A session that keeps the thread asking it for a task until the test lets go — as swift-corelibs-foundation does
/// while its work queue, shared by every session of the process, is busy.
private final class HeldUpSession: URLSession, @unchecked Sendable {
    let latch: ThreadLatch

    init(latch: ThreadLatch, delegate: any URLSessionDataDelegate) {
        self.latch = latch
        super.init(configuration: URLSessionLoader.defaultConfiguration, delegate: delegate, delegateQueue: nil)
    }

    override func dataTask(with request: URLRequest) -> URLSessionDataTask {
        latch.arriveAndWait()
        return super.dataTask(with: request)
    }

    override func dataTask(
        with request: URLRequest, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        latch.arriveAndWait()
        return super.dataTask(with: request, completionHandler: completionHandler)
    }
}

/// While URLSession keeps the call that makes a load's task waiting, the load still ends at its deadline, when it is
/// cancelled and when a cancelling reset begins — and its task, made later, is never left running.
///
/// Linux only: there the loader makes its tasks on a thread of its own (Apple's URLSession does not make its callers
/// wait for a shared queue). The loader makes its tasks on a thread apart from the one every other loader of the
/// process uses, so that holding it holds no other test.
@Suite(.serialized, .noHang, .enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct URLSessionLoaderHeldSessionTests {
    let latch = ThreadLatch()
    let loader: URLSessionLoader
    /// httpbin answers after three seconds: only a deadline, a cancel or a reset ends a load sooner.
    let slow: HTTPRequest

    init() throws {
        let latch = latch
        loader = URLSessionLoader(calls: URLSessionCalls(), makeSession: { HeldUpSession(latch: latch, delegate: $0) })
        slow = HTTPRequest(url: try #require(URL(string: TestServers.httpbin!.absoluteString + "/delay/3")))
    }

    /// Lets the session go once the test is over, and checks that every task made afterwards ended.
    private func letGoAndExpectNothingLeft() async throws {
        latch.release()
        try await eventually("transfers under way: \(loader.transfersUnderWay)") { [loader] in
            loader.transfersUnderWay == 0
        }
        #expect(!latch.timedOut, "the session was held until the latch gave up")
    }

    @Test func aLoadEndsAtItsDeadlineWhileItsTaskIsBeingMade() async throws {
        var timed = slow
        timed.timeout = .milliseconds(300)
        let load = Task { [loader] in await loader.load(timed) }
        let result = try await load.finished(within: 10, "arrivals: \(latch.arrivalCount)")
        #expect(result.error?.code == .timedOut, "\(result)")
        try await letGoAndExpectNothingLeft()
    }

    @Test func aCancelledLoadEndsAtOnceWhileItsTaskIsBeingMade() async throws {
        let load = Task { [loader, slow] in await loader.load(slow) }
        try await eventually("arrivals: \(latch.arrivalCount)") { latch.arrivalCount == 1 }
        load.cancel()
        let result = try await load.finished(within: 10)
        #expect(result.error?.code == .cancelled, "\(result)")
        try await letGoAndExpectNothingLeft()
    }

    @Test func aCancellingResetEndsTheLoadAtOnceAndWaitsForTheTaskBeingMade() async throws {
        let load = Task { [loader, slow] in await loader.load(slow) }
        try await eventually("arrivals: \(latch.arrivalCount)") { latch.arrivalCount == 1 }
        let resetEnded = Locked(false)
        let reset = Task { [loader] in
            await loader.reset(mode: .cancel)
            resetEnded.withLock { $0 = true }
        }
        let result = try await load.finished(within: 10)
        #expect(result.error?.code == .cancelled, "\(result)")
        // The reset returns only once the task being made has been made and stopped: none starts after it.
        #expect(!resetEnded.value, "the reset ended while a task of its loader was still being made")
        #expect(loader.transfersUnderWay == 1)
        latch.release()
        try await reset.finished(within: 10)
        try await letGoAndExpectNothingLeft()
    }
}
#endif

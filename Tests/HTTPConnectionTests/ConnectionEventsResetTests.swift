import Foundation
import HTTP
import HTTPConnection
import HTTPTestSupport
import Testing

/// Server-Sent Events through `Connection` end with a reset of the connection: mid-body, in either mode, and while
/// waiting to reconnect — once, with `resetInProgress`, the transfer stopped and nothing resumed.
@Suite(.noHang) struct ConnectionEventsResetTests {
    static let eventStream: HTTPHeaders = ["Content-Type": "text/event-stream"]
    static let request = Request<ServerSentEvent>(underlyingRequest: HTTPRequest(host: "h", path: "/notifications"))

    /// A clock whose sleeps last until the test releases them.
    struct HeldClock: Clock {
        typealias Instant = ContinuousClock.Instant
        let sleepers = Box<[CheckedContinuation<Void, Never>]>([])

        var now: Instant { ContinuousClock.now }
        var minimumResolution: Duration { .zero }
        var sleeperCount: Int { sleepers.value.count }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            await withCheckedContinuation { continuation in sleepers.withLock { $0.append(continuation) } }
            try Task.checkCancellation()
        }

        func releaseAll() {
            for sleeper in sleepers.withLock({ all in
                defer { all = [] }; return all
            }) { sleeper.resume() }
        }
    }

    /// Reads `iterator` until it ends, counting events; returns the errors it threw (each `next()` after one too).
    static func drain<Element: Sendable>(
        _ iterator: inout EventStream<Element>.AsyncIterator, received: Box<Int>, extraCalls: Int = 2
    ) async -> [any Error] {
        var failures: [any Error] = []
        while true {
            do {
                guard try await iterator.next() != nil else { break }
                received.withLock { $0 += 1 }
            } catch {
                failures.append(error)
            }
        }
        for _ in 0..<extraCalls {
            do {
                if try await iterator.next() != nil { failures.append(CancellationError()) }
            } catch {
                failures.append(error)
            }
        }
        return failures
    }

    @Test(arguments: [ResetMode.drain, .cancel])
    func aResetMidBodyEndsTheStreamOnceAndStopsTheTransfer(mode: ResetMode) async throws {
        let mock = StreamingMock().then(headers: Self.eventStream, endless: true, [Data("id: 1\ndata: tick\n\n".utf8)])
        let connection = Connection(loader: ResetGuard() --> mock.loader)
        let received = Box(0)
        let reading = Task {
            var iterator = connection.events(for: Self.request, reconnectionDelay: .zero).makeAsyncIterator()
            return await Self.drain(&iterator, received: received)
        }
        try await eventually("\(received.value) events") { received.value >= 5 }
        try await Task { await connection.reset(mode: mode) }.finished()
        let failures = try await reading.finished()
        #expect(failures.count == 1, "\(failures)")
        #expect((failures.first as? HTTPError)?.code == .resetInProgress, "\(failures)")
        let producer = try #require(mock.all.first)
        try await eventually("\(producer.cancels) cancels") { producer.isFinished }
        #expect(producer.cancels == 1)
        #expect(mock.loader.receivedRequests.count == 1, "the stream was not resumed after the reset")
    }

    @Test func aResetMidBodyEndsTypedEventsToo() async throws {
        struct Tick: Decodable, Sendable { var n: Int }
        let mock = StreamingMock().then(headers: Self.eventStream, endless: true, [Data("data: {\"n\":1}\n\n".utf8)])
        let connection = Connection(loader: mock.loader)  // no ResetGuard: the connection alone ends the stream
        let received = Box(0)
        let reading = Task { () -> (any Error)? in
            do {
                for try await _ in connection.events(
                    for: Self.request.withResponse(Tick.self), reconnectionDelay: .zero)
                {
                    received.withLock { $0 += 1 }
                }
                return nil
            } catch {
                return error
            }
        }
        try await eventually("\(received.value) events") { received.value >= 3 }
        await connection.reset()
        let failure = try await reading.finished()
        #expect((failure as? HTTPError)?.code == .resetInProgress, "\(String(describing: failure))")
        let producer = try #require(mock.all.first)
        try await eventually { producer.isFinished }
        #expect(mock.loader.receivedRequests.count == 1)
    }

    @Test func aResetWhileWaitingToReconnectEndsTheStreamWithoutReconnecting() async throws {
        let clock = HeldClock()
        let mock = MockLoader()
            .then(status: .ok, headers: Self.eventStream, body: Data("id: 7\ndata: one\n\n".utf8))
            .then(status: .ok, headers: Self.eventStream, body: Data("data: never read\n\n".utf8))
        let connection = Connection(loader: mock)
        let received = Box(0)
        let reading = Task {
            var iterator = connection.events(for: Self.request, clock: clock).makeAsyncIterator()
            return await Self.drain(&iterator, received: received)
        }
        // The body ended after one event: the stream waits on the clock to reconnect.
        try await eventually("\(received.value) events, \(clock.sleeperCount) sleeping") {
            received.value == 1 && clock.sleeperCount == 1
        }
        await connection.reset()
        clock.releaseAll()
        let failures = try await reading.finished()
        #expect(failures.count == 1, "\(failures)")
        #expect((failures.first as? HTTPError)?.code == .resetInProgress, "\(failures)")
        #expect(mock.receivedRequests.count == 1, "no reconnection after the reset")
    }

    @Test func theRequestsErrorBodyEndsTheStreamBeforeAnyEventWithoutReconnecting() async throws {
        struct Problem: Decodable, Sendable { var detail: String }
        struct Tick: Decodable, Sendable { var n: Int }
        let mock = StreamingMock()
            .then(
                status: .unauthorized, endless: true,
                [Data(#"{"detail":"token expired"}"#.utf8), Data(repeating: 0x20, count: 500)])  // then spaces, endless
        let connection = Connection(loader: mock.loader)
        let ticks = Self.request.withResponse(Tick.self).decodingErrors(as: Problem.self)
        var iterator = connection.events(for: ticks, reconnectionDelay: .zero).makeAsyncIterator()
        let failures = await Self.drain(&iterator, received: Box(0))
        #expect(failures.count == 1, "\(failures)")
        let problem = try #require(failures.first as? ServerError<Problem>, "\(failures)")
        #expect(problem.body.detail == "token expired" && problem.response.status == .unauthorized)
        let producer = try #require(mock.all.first)
        try await eventually("\(producer.cancels) cancels") { producer.isFinished }
        #expect(producer.cancels == 1, "the endless error body was stopped after its excerpt")
        #expect(mock.loader.receivedRequests.count == 1, "a status the request refuses is not resumed")
    }

    @Test func anEventWhoseDataDoesNotDecodeEndsTheStreamWithAResponseError() async throws {
        struct Tick: Decodable, Sendable { var n: Int }
        let mock = MockLoader().then(
            status: .ok, headers: Self.eventStream, body: Data("data: {\"n\":1}\n\ndata: {\"m\":2}\n\n".utf8))
        var iterator = Connection(loader: mock).events(for: Self.request.withResponse(Tick.self))
            .makeAsyncIterator()
        #expect(try await iterator.next()?.n == 1)
        let error = await #expect(throws: ResponseError.self) { _ = try await iterator.next() }
        #expect(error?.kind == .undecodable && error?.response.body == Data(#"{"m":2}"#.utf8))
        #expect(error?.description.contains("is not a Tick") == true, "\(error.map(String.init(describing:)) ?? "")")
        #expect(try await iterator.next() == nil)
    }

    @Test func aStreamOpenedAfterAResetWorksAsUsual() async throws {
        let mock = MockLoader()
            .then(status: .ok, headers: Self.eventStream, body: Data("data: fresh\n\n".utf8))
            .then(status: .noContent)
        let connection = Connection(loader: mock)
        await connection.reset()
        var data: [String] = []
        for try await event in connection.events(for: Self.request, reconnectionDelay: .zero) {
            data.append(event.data)
        }
        #expect(data == ["fresh"])
    }

    @Test func cancellingTheReadingTaskStillEndsWithCancelled() async throws {
        let mock = StreamingMock().then(headers: Self.eventStream, endless: true, [Data("data: tick\n\n".utf8)])
        let connection = Connection(loader: mock.loader)
        let received = Box(0)
        let reading = Task {
            var iterator = connection.events(for: Self.request, reconnectionDelay: .zero).makeAsyncIterator()
            return await Self.drain(&iterator, received: received)
        }
        try await eventually("\(received.value) events") { received.value >= 3 }
        reading.cancel()
        let failures = try await Task { await reading.value }.finished()
        #expect(failures.count == 1, "\(failures)")
        #expect((failures.first as? HTTPError)?.code == .cancelled, "\(failures)")
        let producer = try #require(mock.all.first)
        try await eventually { producer.isFinished }
        #expect(producer.cancels == 1)
    }
}

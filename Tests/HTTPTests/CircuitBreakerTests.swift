import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct CircuitBreakerTests {
    private let clock = ManualClock()

    /// Opens when half of at least four requests in 10 s fail; open for 5 s at first, 20 s at most.
    private func breaker(_ configuration: CircuitBreaker.Configuration? = nil) -> CircuitBreaker {
        CircuitBreaker(
            configuration: configuration
                ?? .init(
                    failureRateThreshold: 0.5, minimumNumberOfRequests: 4, window: .seconds(10),
                    openDuration: .seconds(5), maximumOpenDuration: .seconds(20)),
            clock: clock)
    }

    private static func request(_ host: String = "api.example.com", path: String = "/status") -> HTTPRequest {
        HTTPRequest(host: host, path: path)
    }

    /// Collects what `breaker.transitions()` reports.
    private final class TransitionLog: Sendable {
        private let log = Locked<[CircuitTransition]>([])
        private let reader: Task<Void, Never>

        init(_ breaker: CircuitBreaker) {
            let stream = breaker.transitions()
            reader = Task { [log] in
                for await transition in stream { log.withLock { $0.append(transition) } }
            }
        }

        var all: [CircuitTransition] { log.value }

        func waitFor(_ count: Int) async throws {
            try await eventually { self.all.count >= count }
        }

        deinit { reader.cancel() }
    }

    /// Sends `statuses` through the chain, one after another, and returns the results.
    @discardableResult
    private static func send(
        _ statuses: [HTTPStatus], to chain: HTTPLoader, mock: MockLoader, host: String = "api.example.com"
    ) async -> [HTTPResult] {
        var results: [HTTPResult] = []
        for status in statuses {
            mock.then(status: status)
            results.append(await chain.load(request(host)))
        }
        return results
    }

    @Test func opensWhenTheFailureRateIsReachedAndThenFailsFastWithTheLastFailure() async throws {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        let log = TransitionLog(breaker)
        let origin: Origin = "api.example.com"

        await Self.send([.ok, .serviceUnavailable, .ok], to: chain, mock: mock)
        #expect(breaker.state(for: origin) == .closed)
        mock.then { request in
            .success(HTTPResponse(request: request, status: .badGateway, headers: ["X-Failure": "last"]))
        }
        #expect(await chain.load(Self.request()).response?.status == .badGateway)
        #expect(breaker.state(for: origin) == .open)
        try await log.waitFor(1)
        #expect(log.all == [CircuitTransition(origin: origin, from: .closed, to: .open)])

        clock.advance(by: .seconds(2))
        let refused = await chain.load(Self.request(path: "/refused"))
        let error = try #require(refused.error)
        #expect(error.code == .circuitOpen)
        #expect(error.request.path == "/refused")
        #expect(error.response?.status == .badGateway)
        #expect(error.response?.headers["X-Failure"] == "last")
        let open = try #require(error.openCircuit)
        #expect(open.origin == origin && open.state == .open)
        #expect(open.retryAfter == .seconds(3))
        #expect(open.lastFailure.response?.status == .badGateway)
        #expect(mock.receivedRequests.count == 4, "a refused request was sent")
        #expect(error.message.contains("2 of the last 4 requests failed"), "\(error.message)")
        #expect("\(error)".contains("next trial in 3.0 s"), "\(error)")
    }

    @Test func failuresUnderTheMinimumOrTheRateKeepItClosed() async {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        await Self.send([.serviceUnavailable, .serviceUnavailable, .serviceUnavailable], to: chain, mock: mock)
        #expect(breaker.state(for: "api.example.com") == .closed)  // three failures, under the minimum of four
        let other = CircuitBreaker(configuration: .init(failureRateThreshold: 0.8, minimumNumberOfRequests: 4))
        let otherChain = other --> mock
        await Self.send(
            [.ok, .serviceUnavailable, .serviceUnavailable, .serviceUnavailable], to: otherChain, mock: mock)
        #expect(other.state(for: "api.example.com") == .closed)  // 75% is under 80%
    }

    @Test func transportErrorsCountAndErrorsThatSayNothingAboutTheServerDoNot() async {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        for code: HTTPError.Code in [.invalidRequest, .cannotAuthenticate, .insecureConnection, .circuitOpen] {
            mock.then(failWith: code)
            #expect(await chain.load(Self.request()).error?.code == code)
        }
        await Self.send([.notFound, .tooManyRequests, .notImplemented], to: chain, mock: mock)
        #expect(breaker.state(for: "api.example.com") == .closed)
        for code: HTTPError.Code in [.cannotConnect, .timedOut] {
            mock.then(failWith: code)
            _ = await chain.load(Self.request())
        }
        // 404, 429 and 501 were successes; the two transport errors make two of five.
        #expect(breaker.state(for: "api.example.com") == .closed)
        mock.then(failWith: .invalidResponse)
        _ = await chain.load(Self.request())
        #expect(breaker.state(for: "api.example.com") == .open)  // three of six
    }

    @Test func aCancelledRequestIsNotCounted() async throws {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        for _ in 0..<6 {
            mock.then { request in
                try? await Task.sleep(for: .seconds(3_600))
                return .success(HTTPResponse(request: request, status: .serviceUnavailable))
            }
            let load = Task { await chain.load(Self.request()) }
            try await eventually { mock.pendingHandlerCount == 0 }
            load.cancel()
            #expect(try await load.finished().error?.code == .cancelled)
        }
        #expect(breaker.state(for: "api.example.com") == .closed)
    }

    @Test func theTrialHoldsTheOthersBackUntilItIsAnswered() async throws {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        let log = TransitionLog(breaker)
        await Self.send(Array(repeating: .serviceUnavailable, count: 4), to: chain, mock: mock)
        clock.advance(by: .seconds(5))

        let answer = Locked<CheckedContinuation<Void, Never>?>(nil)
        mock.then { request in
            await withCheckedContinuation { continuation in answer.withLock { $0 = continuation } }
            return .success(HTTPResponse(request: request, status: .ok))
        }
        let trial = Task { await chain.load(Self.request(path: "/trial")) }
        try await eventually { answer.value != nil }
        #expect(breaker.state(for: "api.example.com") == .halfOpen)

        let heldBack = try #require(await chain.load(Self.request()).error)
        #expect(heldBack.code == .circuitOpen)
        #expect(heldBack.openCircuit?.state == .halfOpen)
        #expect(heldBack.openCircuit?.retryAfter == .zero)
        #expect(mock.receivedRequests.count == 5)

        answer.value?.resume()
        #expect(try await trial.finished().response?.status == .ok)
        #expect(breaker.state(for: "api.example.com") == .closed)
        try await log.waitFor(3)
        #expect(log.all.map(\.to) == [.open, .halfOpen, .closed])
        await Self.send([.ok], to: chain, mock: mock)  // closed: requests go through again
        #expect(mock.receivedRequests.count == 6)
    }

    @Test func aFailedTrialOpensTheCircuitAgainForTwiceAsLong() async throws {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        await Self.send(Array(repeating: .serviceUnavailable, count: 4), to: chain, mock: mock)
        var waits: [Duration] = []
        for _ in 0..<3 {
            let refusal = try #require(await chain.load(Self.request()).error?.openCircuit)
            waits.append(refusal.retryAfter)
            clock.advance(by: refusal.retryAfter)
            mock.then(failWith: .cannotConnect)
            #expect(await chain.load(Self.request()).error?.code == .cannotConnect)  // the trial
        }
        let last = try #require(await chain.load(Self.request()).error)
        #expect(waits == [.seconds(5), .seconds(10), .seconds(20)])
        #expect(last.openCircuit?.retryAfter == .seconds(20))
        #expect(last.openCircuit?.lastFailure.error?.code == .cannotConnect)
        #expect(last.response == nil)
        #expect(last.message.contains("the trial request failed"), "\(last.message)")
    }

    @Test func aCancelledTrialLetsTheNextRequestBeTheTrial() async throws {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        await Self.send(Array(repeating: .serviceUnavailable, count: 4), to: chain, mock: mock)
        clock.advance(by: .seconds(5))
        mock.then { request in
            try? await Task.sleep(for: .seconds(3_600))
            return .success(HTTPResponse(request: request, status: .serviceUnavailable))
        }
        let trial = Task { await chain.load(Self.request()) }
        try await eventually { mock.receivedRequests.count == 5 }
        trial.cancel()
        #expect(try await trial.finished().error?.code == .cancelled)
        #expect(breaker.state(for: "api.example.com") == .halfOpen)
        await Self.send([.ok], to: chain, mock: mock)
        #expect(breaker.state(for: "api.example.com") == .closed)
    }

    @Test func eachOriginHasItsOwnCircuit() async {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        await Self.send(Array(repeating: .serviceUnavailable, count: 4), to: chain, mock: mock, host: "API.example.com")
        #expect(breaker.state(for: "api.example.com") == .open)
        #expect(breaker.state(for: "https://api.example.com:443") == .open)
        #expect(breaker.state(for: "http://api.example.com") == .closed)
        #expect(breaker.state(for: "https://api.example.com:8443") == .closed)
        #expect(await chain.load(Self.request()).error?.code == .circuitOpen)
        #expect(await Self.send([.ok], to: chain, mock: mock, host: "files.example.com").first?.response?.status == .ok)
        var plain = Self.request()
        plain.scheme = "http"
        mock.then(status: .ok)
        #expect(await chain.load(plain).response?.status == .ok)
    }

    @Test func requestsWithoutAHostPassUncounted() async {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        for _ in 0..<6 {
            mock.then(status: .serviceUnavailable)
            #expect(await chain.load(HTTPRequest(path: "/relative")).response?.status == .serviceUnavailable)
        }
        #expect(mock.receivedRequests.count == 6)
    }

    @Test func oldFailuresLeaveTheWindow() async {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        await Self.send([.serviceUnavailable, .serviceUnavailable, .serviceUnavailable], to: chain, mock: mock)
        clock.advance(by: .seconds(11))
        await Self.send([.ok, .ok, .ok, .serviceUnavailable], to: chain, mock: mock)
        #expect(breaker.state(for: "api.example.com") == .closed)
    }

    @Test func aResetRefusesRequestsThenClosesEveryCircuit() async throws {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        let log = TransitionLog(breaker)
        await Self.send(Array(repeating: .serviceUnavailable, count: 4), to: chain, mock: mock)

        breaker.beginResetPhase(.drain)
        #expect(await chain.load(Self.request()).error?.code == .resetInProgress)
        #expect(await chain.load(HTTPRequest(path: "/relative")).error?.code == .resetInProgress)
        breaker.endResetPhase()

        await chain.reset()
        #expect(breaker.state(for: "api.example.com") == .closed)
        try await log.waitFor(2)
        #expect(log.all.map(\.to) == [.open, .closed])
        await Self.send([.ok], to: chain, mock: mock)
        #expect(mock.receivedRequests.count == 5)
    }

    @Test func aResetWaitsForTheRequestsInFlight() async throws {
        let gate = GateLoader()
        let breaker = breaker()
        let signal = ResetSignal()
        let chain = signal --> breaker --> gate
        let load = Task { await chain.load(Self.request()) }
        try await gate.waitForRunning(1)
        let done = Locked(false)
        let reset = Task {
            await chain.reset(mode: .drain)
            done.withLock { $0 = true }
        }
        try await eventually { signal.isResetting }
        #expect(await chain.load(Self.request()).error?.code == .resetInProgress)
        #expect(!done.value)
        gate.releaseOldest()
        #expect(try await load.finished().response?.status == .ok)
        try await reset.finished()
    }

    @Test func everyObserverGetsEveryChangeAndAFinishedStreamIsDropped() async throws {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        let first = TransitionLog(breaker)
        let second = TransitionLog(breaker)
        do {
            let abandoned = breaker.transitions()
            _ = abandoned  // dropped unread: its buffer goes with it
        }
        try await eventually { breaker.observerCount == 2 }
        await Self.send(Array(repeating: .serviceUnavailable, count: 4), to: chain, mock: mock)
        try await first.waitFor(1)
        try await second.waitFor(1)
        #expect(first.all == second.all)
        #expect(first.all.first?.description == "https://api.example.com: closed → open")
    }

    @Test func manyOriginsDoNotPileUp() async {
        let mock = MockLoader()
        let breaker = breaker()
        let chain = breaker --> mock
        for index in 0..<600 {
            mock.then(status: .ok)
            _ = await chain.load(Self.request("host\(index).example.com"))
            if index == 300 { clock.advance(by: .seconds(11)) }  // the first 301 circuits are idle now
        }
        #expect(breaker.circuitCount < 600)
    }

    @Test func retryAboveAnOpenBreakerStopsAtOnceWithoutDrainingItsBudget() async throws {
        let mock = MockLoader()
        let breaker = breaker()
        let budget = RetryBudget(maximumTokens: 10)
        let retry = Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 5), budget: budget, clock: clock)
        let chain = retry --> breaker --> mock
        for _ in 0..<4 { mock.then(status: .serviceUnavailable) }
        // The first request's attempts open the circuit; the fifth attempt is refused, and not retried.
        let first = try await clock.load(Self.request(), through: chain)
        #expect(first.error?.code == .circuitOpen)
        #expect(first.error?.request.attemptNumber == 5)
        #expect(mock.receivedRequests.count == 4)
        let tokens = budget.availableTokens
        let refused = try await clock.load(Self.request(), through: chain)
        #expect(refused.error?.code == .circuitOpen)
        #expect(refused.error?.request.attemptNumber == 1)
        #expect(budget.availableTokens == tokens)
        #expect(mock.receivedRequests.count == 4)
    }
}

import Foundation
import HTTP
import Testing

/// An observer that keeps every event it receives.
final class EventRecorder: HTTPEventObserver {
    private let events = Locked<[HTTPEvent]>([])
    var all: [HTTPEvent] { events.value }

    func handle(_ event: HTTPEvent) {
        events.withLock { $0.append(event) }
    }

    /// The kinds received, in order.
    var kinds: [HTTPEvent.Kind] { all.map(\.kind) }

    /// The events of one load, in order.
    func events(of load: LoadID) -> [HTTPEvent] { all.filter { $0.loadID == load } }
}

/// An observer interested only in `kinds`, which keeps what it is handed.
struct KindFilter: HTTPEventObserver {
    let kinds: Set<HTTPEvent.Kind>
    let recorder = EventRecorder()

    func isInterested(in kind: HTTPEvent.Kind) -> Bool { kinds.contains(kind) }

    func handle(_ event: HTTPEvent) {
        #expect(kinds.contains(event.kind), "handed \(event.kind), which it is not interested in")
        recorder.handle(event)
    }
}

@Suite(.noHang) struct ObserveTests {
    @Test func aLoadIsReportedFromStartToFinishWithTheTerminalsAttempt() async throws {
        let recorder = EventRecorder()
        let mock = MockLoader().then(status: .ok, body: Data(count: 213))
        let chain = Observe(recorder) --> mock
        let request = HTTPRequest(host: "example.com", path: "/people/42")

        let result = await chain.load(request)

        #expect(recorder.kinds == [.loadStarted, .attemptStarted, .attemptFinished, .loadFinished])
        let events = recorder.all
        let load = try #require(events.first?.loadID)
        #expect(events.allSatisfy { $0.loadID == load && $0.request.id == request.id })
        #expect(mock.receivedRequests.first?.loadID == load)
        #expect(result.response?.request.loadID == load)
        #expect(request.loadID == nil)  // the caller's value is not changed
        // Instants are in order, and the finish carries the result, its metrics and the whole duration.
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.instant <= $1.instant })
        let finished = try #require(events.last)
        #expect(finished.result?.response?.status == .ok)
        #expect(finished.metrics?.responseBodyBytesReceived == 213)
        #expect(finished.duration == events[3].instant - events[0].instant)
        #expect(events[2].metrics?.attemptNumber == 1)
        #expect(events[1].result == nil && events[0].duration == nil)
    }

    @Test func retriesAreAttemptsOfOneLoad() async throws {
        let clock = ManualClock()
        let recorder = EventRecorder()
        let mock = MockLoader().then(status: .serviceUnavailable).then(failWith: .cannotConnect).then(status: .ok)
        let strategy = Backoff.constant(delay: .milliseconds(250), maximumNumberOfAttempts: 3)
        let chain = Observe(recorder) --> Retry(strategy: strategy, budget: nil, clock: clock) --> mock

        let load = Task { await chain.load(HTTPRequest(host: "example.com")) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(250))
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(250))
        let result = try await load.finished()

        #expect(
            recorder.kinds == [
                .loadStarted,
                .attemptStarted, .attemptFinished, .retryScheduled,
                .attemptStarted, .attemptFinished, .retryScheduled,
                .attemptStarted, .attemptFinished,
                .loadFinished,
            ])
        let events = recorder.all
        #expect(Set(events.map(\.loadID)).count == 1)
        let attempts = events.filter { $0.kind == .attemptFinished }
        #expect(attempts.map(\.request.attemptNumber) == [1, 2, 3])
        #expect(attempts.map { $0.metrics?.attemptNumber } == [1, 2, 3])
        #expect(attempts[1].result?.error?.code == .cannotConnect)
        #expect(attempts[1].metrics != nil)  // a failed attempt is measured too
        let retries = events.filter { $0.kind == .retryScheduled }
        #expect(retries.map(\.delay) == [.milliseconds(250), .milliseconds(250)])
        #expect(retries.first?.result?.response?.status == .serviceUnavailable)
        #expect(retries.map(\.request.attemptNumber) == [1, 2])
        #expect(events.last?.result?.response?.request.attemptNumber == 3)
        #expect(result.response?.metrics?.attemptNumber == 3)
    }

    @Test func aLoadThatNeverReachesTheTerminalStillStartsAndFinishes() async {
        let recorder = EventRecorder()
        let gate = ResetGuard()
        let chain = Observe(recorder) --> gate --> MockLoader()
        gate.beginResetPhase(.drain)
        let result = await chain.load(HTTPRequest(host: "example.com"))
        gate.endResetPhase()
        #expect(result.error?.code == .resetInProgress)
        #expect(recorder.kinds == [.loadStarted, .loadFinished])
        #expect(recorder.all.last?.result?.error?.code == .resetInProgress)
        #expect(recorder.all.last?.metrics == nil)
    }

    @Test func fourConcurrentLoadsOfOneRequestValueAreFourLoads() async throws {
        let recorder = EventRecorder()
        let mock = MockLoader()
        for _ in 0..<4 { mock.then(status: .ok) }
        let chain = Observe(recorder) --> mock
        let request = HTTPRequest(host: "example.com", path: "/userinfo")

        let results = await withTaskGroup(of: HTTPResult.self) { group in
            for _ in 0..<4 { group.addTask { await chain.load(request) } }
            return await group.reduce(into: []) { $0.append($1) }
        }

        let loads = Set(recorder.all.map(\.loadID))
        #expect(loads.count == 4)
        #expect(Set(results.compactMap { $0.response?.request.loadID }) == loads)
        #expect(Set(mock.receivedRequests.compactMap(\.loadID)) == loads)
        #expect(Set(recorder.all.map(\.request.id)) == [request.id])  // one request value all along
        for load in loads {
            #expect(
                recorder.events(of: load).map(\.kind) == [
                    .loadStarted, .attemptStarted, .attemptFinished, .loadFinished,
                ])
        }
    }

    @Test func nestedObserversShareTheLoadAndEachGetsItsOwnStartAndFinish() async {
        let outer = EventRecorder()
        let inner = EventRecorder()
        let chain = Observe(outer) --> ModifyRequest { $0 } --> Observe(inner) --> MockLoader().then(status: .ok)
        _ = await chain.load(HTTPRequest(host: "example.com"))
        #expect(outer.kinds == [.loadStarted, .attemptStarted, .attemptFinished, .loadFinished])
        #expect(inner.kinds == [.loadStarted, .attemptStarted, .attemptFinished, .loadFinished])
        #expect(Set(outer.all.map(\.loadID) + inner.all.map(\.loadID)).count == 1)
    }

    @Test func oneObserveHandsEachEventToEveryObserverInTheirOrder() async throws {
        /// Notes each event it is handed, under its name, in one log shared with the others.
        struct Named: HTTPEventObserver {
            let name: String
            let log: Locked<[String]>
            func handle(_ event: HTTPEvent) { log.withLock { $0.append("\(name) \(event.kind)") } }
        }
        let log = Locked<[String]>([])
        let first = Named(name: "first", log: log)
        let second = Named(name: "second", log: log)
        let recorder = EventRecorder()
        let chain = Observe(first, second, recorder) --> MockLoader().then(status: .ok)

        let result = await chain.load(HTTPRequest(host: "example.com"))

        let kinds: [HTTPEvent.Kind] = [.loadStarted, .attemptStarted, .attemptFinished, .loadFinished]
        #expect(log.value == kinds.flatMap { ["first \($0)", "second \($0)"] })
        #expect(recorder.kinds == kinds)
        #expect(Set(recorder.all.map(\.loadID)) == [try #require(result.response?.request.loadID)])
    }

    @Test func anObserverIsHandedOnlyTheKindsItIsInterestedIn() async {
        let finishes = KindFilter(kinds: [.loadFinished, .retryScheduled])
        let everything = EventRecorder()
        let chain =
            Observe([finishes, everything])
            --> Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 2), budget: nil)
            --> MockLoader().then(status: .serviceUnavailable).then(status: .ok)

        _ = await chain.load(HTTPRequest(host: "example.com"))

        #expect(finishes.recorder.kinds == [.retryScheduled, .loadFinished])
        #expect(
            everything.kinds == [
                .loadStarted, .attemptStarted, .attemptFinished, .retryScheduled, .attemptStarted, .attemptFinished,
                .loadFinished,
            ])
    }

    @Test func anEventNoObserverIsInterestedInIsNeverMade() async {
        let evaluated = Locked(0)
        /// A loader that reports an event of its own, counting each time its result is built.
        final class Reporting: HTTPLoader, @unchecked Sendable {
            let evaluated: Locked<Int>
            init(evaluated: Locked<Int>) { self.evaluated = evaluated }
            override func load(_ request: HTTPRequest) async -> HTTPResult {
                #expect(request.isObserved)
                request.emit(
                    .attemptStarted,
                    result: {
                        evaluated.withLock { $0 += 1 }
                        return nil
                    }())
                return await super.load(request)
            }
        }
        let none = KindFilter(kinds: [])
        let finishes = KindFilter(kinds: [.loadFinished])
        let chain = Observe(none, finishes) --> Reporting(evaluated: evaluated) --> MockLoader().then(status: .ok)

        let result = await chain.load(HTTPRequest(host: "example.com"))

        #expect(evaluated.value == 0)
        #expect(none.recorder.all.isEmpty)
        #expect(finishes.recorder.kinds == [.loadFinished])
        #expect(finishes.recorder.all.first?.duration != nil)
        #expect(result.response?.request.loadID == finishes.recorder.all.first?.loadID)
    }

    @Test func theLastEventIsMadeOnlyForAnObserverInterestedInTheLoadsOutcome() async {
        /// Interested in the finish of a failed load only, as a logger that writes failures and filters successes.
        struct FailuresOnly: HTTPEventObserver {
            let recorder = EventRecorder()
            let asked = Locked<[Bool]>([])
            func isInterested(in kind: HTTPEvent.Kind) -> Bool { kind == .loadFinished }
            func isInterested(in kind: HTTPEvent.Kind, result: HTTPResult) -> Bool {
                asked.withLock { $0.append(result.error != nil) }
                return kind == .loadFinished && result.error != nil
            }
            func handle(_ event: HTTPEvent) {
                #expect(event.result?.error != nil, "handed the finish of a load that succeeded")
                recorder.handle(event)
            }
        }
        let failures = FailuresOnly()
        let kindsOnly = KindFilter(kinds: [.loadFinished])  // the default: asked by kind alone
        let chain = Observe(failures, kindsOnly) --> MockLoader().then(status: .ok).then(failWith: .cannotConnect)

        _ = await chain.load(HTTPRequest(host: "example.com"))
        let failed = await chain.load(HTTPRequest(host: "example.com"))

        #expect(failures.asked.value == [false, true])
        #expect(failures.recorder.all.map(\.loadID) == [failed.error?.request.loadID])
        #expect(kindsOnly.recorder.kinds == [.loadFinished, .loadFinished])
    }

    @Test func kindsCompareByNameWhereverTheyWereMade() {
        let builtIn: [HTTPEvent.Kind] = [
            .loadStarted, .attemptStarted, .responseHeadReceived, .attemptFinished, .retryScheduled, .redirectFollowed,
            .loadFinished, .credentialObtained, .credentialRefreshed, .credentialFailed,
        ]
        #expect(Set(builtIn).count == builtIn.count)
        for kind in builtIn {
            let named = HTTPEvent.Kind(rawValue: kind.rawValue)
            #expect(named == kind && kind == named)
            #expect(named.hashValue == kind.hashValue)
            #expect(Set([named, kind]).count == 1)
            #expect(builtIn.filter { $0 == named }.count == 1)
        }
        let custom = HTTPEvent.Kind(rawValue: "queued")
        #expect(custom == HTTPEvent.Kind(rawValue: "queued"))
        #expect(custom != HTTPEvent.Kind(rawValue: "Queued"))
        #expect(!builtIn.contains(custom))
        #expect(HTTPEvent.Kind(rawValue: "loadstarted") != .loadStarted)
        switch HTTPEvent.Kind(rawValue: "loadFinished") {
        case .loadFinished: break
        default: Issue.record("a kind made from a built-in name does not match it in a switch")
        }
    }

    @Test func anObserveWithoutObserversStampsTheLoadAndReportsNothing() async throws {
        let mock = MockLoader().then(status: .ok)
        let result = await (Observe([]) --> mock).load(HTTPRequest(host: "example.com"))
        let sent = try #require(mock.receivedRequests.first)
        #expect(sent.loadID != nil && !sent.isObserved)
        #expect(result.response?.status == .ok)
    }

    @Test func aClosureCanObserve() async {
        let kinds = Locked<[HTTPEvent.Kind]>([])
        let chain = Observe { event in kinds.withLock { $0.append(event.kind) } } --> MockLoader().then(status: .ok)
        _ = await chain.load(HTTPRequest(host: "example.com"))
        #expect(kinds.value == [.loadStarted, .attemptStarted, .attemptFinished, .loadFinished])
    }

    @Test func withoutAnObserverEmittingBuildsNothing() {
        let request = HTTPRequest(host: "example.com")
        #expect(!request.isObserved)
        #expect(request.loadID == nil)
        let evaluated = Locked(false)
        request.emit(
            .attemptStarted,
            result: {
                evaluated.withLock { $0 = true }; return nil
            }())
        #expect(!evaluated.value)
    }

    @Test func aLoaderBelowEmitsToTheObserversAbove() async {
        /// A loader of an app's that reports something of its own.
        final class CacheLookup: HTTPLoader, @unchecked Sendable {
            override func load(_ request: HTTPRequest) async -> HTTPResult {
                #expect(request.isObserved)
                request.emit(HTTPEvent.Kind(rawValue: "cacheMiss"))
                return await super.load(request)
            }
        }
        let recorder = EventRecorder()
        let chain = Observe(recorder) --> CacheLookup() --> MockLoader().then(status: .ok)
        _ = await chain.load(HTTPRequest(host: "example.com"))
        #expect(
            recorder.kinds.map(\.rawValue) == [
                "loadStarted", "cacheMiss", "attemptStarted", "attemptFinished", "loadFinished",
            ])
        #expect(recorder.all[1].description.hasSuffix(" cacheMiss GET https://example.com/"))
    }

    /// Every load is started and finished exactly once, whatever cancellations and resets do to it; every attempt the
    /// terminal starts finishes once, between the two.
    @Test func everyLoadStartsAndFinishesExactlyOnceUnderCancellationAndReset() async throws {
        let seed = SplitMix64.seed()
        print("ObserveTests stress seed: \(seed) (HTTP_TEST_SEED=\(seed) replays it)")
        var random = SplitMix64(seed: seed)
        let recorder = EventRecorder()
        let mock = MockLoader()
        let loadCount = 1_000
        for _ in 0..<loadCount * 3 {
            let status: HTTPStatus = Bool.random(using: &random) ? .ok : .serviceUnavailable
            mock.then { request in
                try? await Task.sleep(for: .microseconds(Int.random(in: 0...500)))
                return .success(HTTPResponse(request: request, status: status))
            }
        }
        let chain =
            Observe(recorder) --> ResetGuard()
            --> Retry(strategy: Backoff.constant(delay: .microseconds(100), maximumNumberOfAttempts: 3), budget: nil)
            --> Throttle(maximumNumberOfRequests: 8) --> mock
        let cancelled = Set(Array(0..<loadCount).shuffled(using: &random).prefix(loadCount / 3))
        let resetWave = Int.random(in: 0..<4, using: &random)

        // Four waves of loads; a cancelling reset runs during one of them.
        var results: [HTTPResult] = []
        for wave in 0..<4 {
            results += await withTaskGroup(of: HTTPResult?.self) { group in
                for index in wave * loadCount / 4..<(wave + 1) * loadCount / 4 {
                    let task = Task { await chain.load(HTTPRequest(host: "example.com", path: "/\(index)")) }
                    group.addTask { try? await task.finished() }  // nil after the deadline: counted missing
                    if cancelled.contains(index) { task.cancel() }
                    if wave == resetWave && index == wave * loadCount / 4 + 50 {
                        group.addTask {
                            await chain.reset(mode: .cancel)
                            return nil
                        }
                    }
                }
                return await group.reduce(into: []) { if let result = $1 { $0.append(result) } }
            }
        }

        #expect(results.count == loadCount)
        let codes = results.map { $0.error?.code.rawValue ?? "ok" }
        print("ObserveTests stress outcomes: \(Dictionary(grouping: codes, by: { $0 }).mapValues(\.count))")
        // The run exercised what it is about: retries, and loads finished and cut short.
        let retried = recorder.kinds.contains(.retryScheduled)
        #expect(retried)
        #expect(codes.contains("ok") && codes.contains("cancelled"))
        let byLoad = Dictionary(grouping: recorder.all, by: \.loadID)
        #expect(byLoad.count == loadCount)
        for (load, events) in byLoad {
            let kinds = events.map(\.kind)
            #expect(kinds.first == .loadStarted && kinds.last == .loadFinished, "\(load): \(kinds)")
            #expect(kinds.filter { $0 == .loadStarted }.count == 1 && kinds.filter { $0 == .loadFinished }.count == 1)
            // Attempts nest: each started attempt finishes before the next starts.
            var open = false
            for kind in kinds where kind == .attemptStarted || kind == .attemptFinished {
                #expect(open == (kind == .attemptFinished), "\(load): \(kinds)")
                open.toggle()
            }
            #expect(!open, "\(load): \(kinds)")
        }
    }
}

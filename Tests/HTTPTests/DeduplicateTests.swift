import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct DeduplicateTests {
    private static func request(
        _ path: String = "/people/42", method: HTTPMethod = .get, headers: HTTPHeaders = [:]
    ) -> HTTPRequest {
        HTTPRequest(method: method, host: "api.example.com", path: path, headers: headers)
    }

    /// Starts a load of each request through `chain`, one after another, each once `deduplicate` counts it waiting.
    private static func start(
        _ requests: [HTTPRequest], through chain: HTTPLoader, counting deduplicate: Deduplicate
    ) async throws -> [Task<HTTPResult, Never>] {
        var tasks: [Task<HTTPResult, Never>] = []
        for request in requests {
            let before = deduplicate.waitingCount
            tasks.append(Task { await chain.load(request) })
            try await eventually { deduplicate.waitingCount == before + 1 }
        }
        return tasks
    }

    @Test func identicalRequestsInFlightShareOneLoadAndEachGetsItsOwnRequestBack() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate()
        let chain = deduplicate --> gate
        let requests = (0..<3).map { _ in Self.request(headers: ["Accept": "application/json"]) }
        let loads = try await Self.start(requests, through: chain, counting: deduplicate)
        try await gate.waitForRunning(1)
        #expect(deduplicate.inFlightCount == 1)

        gate.releaseOldest()
        for (request, load) in zip(requests, loads) {
            let response = try await load.finished().response
            #expect(response?.status == .ok)
            #expect(response?.request.id == request.id)
            #expect(response?.request.headers["Accept"] == "application/json")
        }
        #expect(gate.arrivals == ["/people/42"])
        #expect(deduplicate.inFlightCount == 0 && deduplicate.waitingCount == 0)
    }

    @Test func aThousandConcurrentIdenticalRequestsMakeOneLoad() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate()
        let chain = deduplicate --> gate
        let request = Self.request()
        let statuses = try await withThrowingTaskGroup(of: HTTPStatus?.self) { group in
            for _ in 0..<1_000 { group.addTask { await chain.load(request).response?.status } }
            try await eventually { deduplicate.waitingCount == 1_000 }
            gate.releaseOldest()
            var statuses: [HTTPStatus?] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
        #expect(statuses.count == 1_000 && statuses.allSatisfy { $0 == .ok })
        #expect(gate.arrivals.count == 1)
    }

    @Test(arguments: [
        ("another path", request("/people/43")),
        (
            "another query",
            HTTPRequest(host: "api.example.com", path: "/people/42", query: [.init(name: "v", value: "2")])
        ),
        ("another host", HTTPRequest(host: "www.example.com", path: "/people/42")),
        ("another scheme", HTTPRequest(scheme: "http", host: "api.example.com", path: "/people/42")),
        ("another port", HTTPRequest(host: "api.example.com", port: 8443, path: "/people/42")),
        ("HEAD", request(method: .head)),
        ("other credentials", request(headers: ["Authorization": "Bearer other"])),
        ("a header more", request(headers: ["Authorization": "Bearer token", "Accept": "text/plain"])),
    ])
    func requestsThatDifferShareNothing(difference: String, other: HTTPRequest) async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate()
        let chain = deduplicate --> gate
        let first = Self.request(headers: ["Authorization": "Bearer token"])
        let loads = try await Self.start([first, other], through: chain, counting: deduplicate)
        try await gate.waitForRunning(2)
        #expect(deduplicate.inFlightCount == 2, "\(difference)")
        gate.releaseOldest()
        gate.releaseOldest()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
    }

    @Test func requestsWithDifferentOptionsShareNothing() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate()
        let chain = deduplicate --> gate
        var slow = Self.request()
        slow.timeout = .seconds(60)
        var quick = Self.request()
        quick.timeout = .seconds(1)
        var quickToo = Self.request()
        quickToo.timeout = .seconds(1)
        let loads = try await Self.start([slow, quick, quickToo], through: chain, counting: deduplicate)
        try await gate.waitForRunning(2)
        #expect(deduplicate.inFlightCount == 2)  // equal options share
        gate.releaseOldest()
        gate.releaseOldest()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(gate.arrivals.count == 2)
    }

    @Test func unsafeMethodsBodiesAndOptedOutRequestsGoAlone() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate(methods: [.get, .post])  // POST is not safe: left out
        #expect(deduplicate.methods == [.get])
        let chain = deduplicate --> gate
        var optedOut = Self.request()
        optedOut.deduplication = .never
        let requests = [
            Self.request(method: .post), Self.request(method: .post), Self.request(method: .put),
            Self.request(method: .delete), Self.request(method: .options), optedOut, optedOut,
        ]
        let loads = requests.map { request in Task { await chain.load(request) } }
        try await gate.waitForRunning(requests.count)
        #expect(deduplicate.inFlightCount == 0 && deduplicate.waitingCount == 0)
        for _ in requests { gate.releaseOldest() }
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
    }

    @Test func ignoredHeaderFieldsDoNotMakeRequestsDifferentAndEachCallerKeepsItsOwn() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate(ignoringHeaderFields: ["x-request-id"])
        let chain = deduplicate --> gate
        var requests = (1...3).map { Self.request(headers: ["Accept": "*/*", "X-Request-ID": "trace-\($0)"]) }
        requests[2].fragment = "section"
        let loads = try await Self.start(requests, through: chain, counting: deduplicate)
        try await gate.waitForRunning(1)
        gate.releaseOldest()
        for (index, load) in loads.enumerated() {
            let sent = try await load.finished().response?.request
            #expect(sent?.id == requests[index].id)
            #expect(sent?.headers.values(for: "X-Request-ID") == ["trace-\(index + 1)"])
            #expect(sent?.headers["Accept"] == "*/*")
            #expect(sent?.fragment == requests[index].fragment)
        }
        #expect(gate.arrivals.count == 1)
    }

    @Test func headerNamesAreComparedWithoutCase() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate()
        let chain = deduplicate --> gate
        let loads = try await Self.start(
            [Self.request(headers: ["Accept": "text/plain"]), Self.request(headers: ["accept": "text/plain"])],
            through: chain, counting: deduplicate)
        try await gate.waitForRunning(1)
        gate.releaseOldest()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(gate.arrivals.count == 1)
    }

    @Test func everyCallerGetsTheErrorWithItsOwnRequest() async throws {
        // The shared load fails only once both callers wait for it, however slowly the machine runs them.
        let (release, open) = AsyncStream.makeStream(of: Void.self)
        let mock = MockLoader().then { request in
            for await _ in release {}
            return .failure(HTTPError(.cannotConnect, request: request))
        }
        let deduplicate = Deduplicate()
        let chain = deduplicate --> mock
        let requests = [Self.request(), Self.request()]
        let loads = try await Self.start(requests, through: chain, counting: deduplicate)
        open.finish()
        for (request, load) in zip(requests, loads) {
            let error = try await load.finished().error
            #expect(error?.code == .cannotConnect)
            #expect(error?.request.id == request.id)
        }
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func aRequestAfterTheSharedLoadCompletedStartsANewOne() async {
        let mock = MockLoader().then(status: .ok).then(status: .notModified)
        let chain = Deduplicate() --> mock
        #expect(await chain.load(Self.request()).response?.status == .ok)
        #expect(await chain.load(Self.request()).response?.status == .notModified)
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func aCancelledCallerLeavesAtOnceWhileTheOthersGoOn() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate()
        let chain = deduplicate --> gate
        let loads = try await Self.start(
            [Self.request(), Self.request(), Self.request()], through: chain, counting: deduplicate)
        try await gate.waitForRunning(1)

        loads[1].cancel()
        let cancelled = try await loads[1].finished()
        #expect(cancelled.error?.code == .cancelled)
        #expect(gate.running == 1, "the shared load must go on for the others")
        #expect(deduplicate.waitingCount == 2)

        gate.releaseOldest()
        #expect(try await loads[0].finished().response?.status == .ok)
        #expect(try await loads[2].finished().response?.status == .ok)
    }

    @Test func theSharedLoadIsCancelledWhenItsLastCallerLeaves() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate()
        let chain = deduplicate --> gate
        let loads = try await Self.start([Self.request(), Self.request()], through: chain, counting: deduplicate)
        try await gate.waitForRunning(1)

        loads[0].cancel()
        #expect(try await loads[0].finished().error?.code == .cancelled)
        #expect(gate.running == 1)
        loads[1].cancel()
        #expect(try await loads[1].finished().error?.code == .cancelled)
        try await eventually { gate.running == 0 }  // the gate's load was cancelled
        try await eventually { deduplicate.inFlightCount == 0 }

        // A request arriving now starts a new load rather than joining the abandoned one.
        let next = Task { await chain.load(Self.request()) }
        try await eventually { gate.arrivals.count == 2 }
        gate.releaseOldest()
        #expect(try await next.finished().response?.status == .ok)
    }

    @Test func aCallerCancelledBeforeItArrivesIsNotSent() async throws {
        let mock = MockLoader().then(status: .ok)
        let chain = Deduplicate() --> mock
        let load = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await chain.load(Self.request())
        }
        #expect(try await load.finished().error?.code == .cancelled)
        #expect(mock.receivedRequests.isEmpty)
    }

    @Test func aDrainingResetLetsJoinedCallersFinishAndRefusesNewOnes() async throws {
        let gate = GateLoader()
        let deduplicate = Deduplicate()
        let signal = ResetSignal()
        let chain = signal --> deduplicate --> gate
        let loads = try await Self.start([Self.request(), Self.request()], through: chain, counting: deduplicate)
        try await gate.waitForRunning(1)

        let done = Locked(false)
        let reset = Task {
            await chain.reset(mode: .drain)
            done.withLock { $0 = true }
        }
        try await eventually { signal.isResetting }
        #expect(await chain.load(Self.request()).error?.code == .resetInProgress)
        var unsafe = Self.request(method: .post)
        unsafe.deduplication = .never
        #expect(await chain.load(unsafe).error?.code == .resetInProgress)
        #expect(!done.value, "the reset returned while a shared load was in flight")

        gate.releaseOldest()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        try await reset.finished()
        #expect(gate.arrivals.count == 1)
        let after = Task { await chain.load(Self.request()) }
        try await gate.waitForRunning(1)
        gate.releaseOldest()
        #expect(try await after.finished().response?.status == .ok)
    }

    @Test func aCancellingResetCancelsTheSharedLoadForEveryCaller() async throws {
        let mock = MockLoader().then { request in
            try? await Task.sleep(for: .seconds(3_600))
            return .success(HTTPResponse(request: request))
        }
        let deduplicate = Deduplicate()
        let chain = deduplicate --> mock
        let loads = try await Self.start([Self.request(), Self.request()], through: chain, counting: deduplicate)
        try await eventually { mock.receivedRequests.count == 1 }
        await chain.reset(mode: .cancel)
        for load in loads { #expect(try await load.finished().error?.code == .cancelled) }
        #expect(deduplicate.inFlightCount == 0 && deduplicate.waitingCount == 0)
    }

    @Test func requestsSentAsPartOfAResetGoThrough() async {
        let mock = MockLoader().then(status: .ok)
        let deduplicate = Deduplicate()
        let chain = deduplicate --> mock
        deduplicate.beginResetPhase(.drain)
        var revocation = Self.request("/revoke")
        revocation.isPartOfReset = true
        #expect(await chain.load(revocation).response?.status == .ok)
        deduplicate.endResetPhase()
    }

    @Test(arguments: 0..<2)
    func everyLoadCompletesExactlyOnceUnderRandomCancellation(run: Int) async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let loadCount = 1_000
        let mock = MockLoader()
        for _ in 0..<loadCount {
            let latency = Int.random(in: 0...2_000, using: &random)
            mock.then { request in
                do {
                    try await Task.sleep(for: .microseconds(latency))
                } catch {
                    return .failure(HTTPError(.cancelled, request: request))
                }
                return .success(HTTPResponse(request: request))
            }
        }
        let deduplicate = Deduplicate()
        let chain = deduplicate --> mock
        let paths = (0..<loadCount).map { _ in "/item/\(Int.random(in: 0..<20, using: &random))" }
        let cancelled = Set((0..<loadCount).shuffled(using: &random).prefix(loadCount / 3))
        let wrongRequest = Locked(0)

        let finished = await withDeadline(seconds: 120) {
            await withTaskGroup(of: Void.self) { group in
                var tasks: [Task<Void, Never>] = []
                for index in 0..<loadCount {
                    let request = Self.request(paths[index])
                    let task = Task {
                        let result = await chain.load(request)
                        let answered = result.response?.request ?? result.error?.request
                        if answered?.id != request.id { wrongRequest.withLock { $0 += 1 } }
                    }
                    tasks.append(task)
                    group.addTask { await task.value }  // bounded by the deadline around the group
                    if index.isMultiple(of: 50) { await Task.yield() }
                }
                for index in cancelled { tasks[index].cancel() }
            }
            return true
        }
        try #require(finished == true, "seed \(seed): loads still pending")
        // Each load returned exactly once: a continuation resumed twice traps, and one never resumed keeps the run past the
        // deadline above; counting returns after `await` could not fail, so nothing is counted.
        #expect(wrongRequest.value == 0, "seed \(seed)")
        #expect(deduplicate.inFlightCount == 0 && deduplicate.waitingCount == 0, "seed \(seed)")
        let sent = mock.receivedRequests.count
        print("DeduplicateTests: seed \(seed): \(loadCount) loads, \(sent) sent")
        #expect(sent < loadCount, "seed \(seed): nothing was shared")
    }
}

@Suite(.noHang) struct DeduplicationKeyTests {
    private static let base = HTTPRequest(host: "api.example.com", path: "/a", headers: ["Accept": "*/*"])

    private static func key(_ request: HTTPRequest, ignoring fields: [String] = []) -> DeduplicationKey {
        DeduplicationKey(request, ignoringHeaderFields: fields)
    }

    @Test func optionsAreComparedInAnyOrderHashableOnesByValue() {
        var first = Self.base
        first.timeout = .seconds(5)
        first.redirectPolicy = .doNotFollow
        var second = Self.base
        second.redirectPolicy = .doNotFollow
        second.timeout = .seconds(5)
        #expect(Self.key(first) == Self.key(second))
        #expect(Self.key(first).hashValue == Self.key(second).hashValue)
        second.timeout = .seconds(6)
        #expect(Self.key(first) != Self.key(second))
    }

    @Test func otherOptionsAreComparedByIdentity() {
        var first = Self.base
        first.retryStrategy = Backoff.never
        let copy = first
        var second = Self.base
        second.retryStrategy = Backoff.never
        #expect(Self.key(first) == Self.key(copy))
        #expect(Self.key(first) != Self.key(second))
    }

    @Test func anOptionSetToItsDefaultStillMakesADifference() {
        var explicit = Self.base
        explicit.throttle = .always
        #expect(Self.key(explicit) != Self.key(Self.base))
    }

    @Test func headerOrderValuesAndCaseOfValuesMatter() {
        let ab = HTTPRequest(host: "a.example", headers: ["A": "1", "B": "2"])
        let ba = HTTPRequest(host: "a.example", headers: ["B": "2", "A": "1"])
        let upper = HTTPRequest(host: "a.example", headers: ["A": "X", "B": "2"])
        let lower = HTTPRequest(host: "a.example", headers: ["a": "x", "b": "2"])
        #expect(Self.key(ab) != Self.key(ba))
        #expect(Self.key(upper) != Self.key(lower))
        #expect(Self.key(HTTPRequest(host: "a.example", headers: ["a": "1", "b": "2"])) == Self.key(ab))
    }

    @Test func ignoredFieldsAndTheFragmentAreLeftOut() {
        var traced = Self.base
        traced.headers["Traceparent"] = "00-abc-01"
        traced.fragment = "top"
        #expect(Self.key(traced, ignoring: ["traceparent"]) == Self.key(Self.base, ignoring: ["traceparent"]))
        #expect(Self.key(traced) != Self.key(Self.base))
    }
}

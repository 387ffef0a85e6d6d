import Foundation
import HTTP
import Synchronization

// The new loaders' budgets (DESIGN.md, "New loaders"): 1,000 concurrent identical requests through `Deduplicate`
// make one upstream load; an open `CircuitBreaker` fails a request in ≤ 1 µs.

/// A pass-through loader that counts the loads that go through it.
final class LoadCounter: HTTPLoader, @unchecked Sendable {  // Sendable: one atomic
    private let counter = Atomic<Int>(0)

    var count: Int { counter.load(ordering: .relaxed) }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        counter.add(1, ordering: .relaxed)
        return await super.load(request)
    }
}

/// A terminal that fails every request at once with `cannotConnect`, as a server that is down.
final class Unreachable: HTTPLoader, @unchecked Sendable {  // Sendable: no state
    override func load(_ request: HTTPRequest) async -> HTTPResult {
        .failure(HTTPError(.cannotConnect, request: request, message: "the benchmark's server is down"))
    }
}

/// A terminal that answers with a canned `200` after `latency`, as a server does.
final class SlowResponse: HTTPLoader, @unchecked Sendable {  // Sendable: only `let` properties
    private let latency: Duration
    private let canned = CannedResponse()

    init(latency: Duration) { self.latency = latency }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        try? await Task.sleep(for: latency)
        return await canned.load(request)
    }
}

extension InProcessSubject {
    /// A `CircuitBreaker` whose circuit for the request's origin is open (for an hour), over a server that is down:
    /// every request is refused without being sent.
    public static func openCircuitBreaker() async -> InProcessSubject {
        let configuration = CircuitBreaker.Configuration(minimumNumberOfRequests: 1, openDuration: .seconds(3_600))
        let breaker = CircuitBreaker(configuration: configuration)
        let chain = breaker --> Unreachable()
        let request = makeAbsoluteRequest()
        _ = await chain.load(request)  // the failure that opens the circuit
        precondition(breaker.state(for: request.origin!) == .open, "the benchmark's circuit did not open")
        return .refusals(chain, request: request)
    }

    /// A `CircuitBreaker` with its circuit closed, over ``CannedResponse``: what counting costs a request.
    public static func closedCircuitBreaker() -> InProcessSubject {
        .loaders(CircuitBreaker() --> CannedResponse(), request: makeAbsoluteRequest())
    }

    /// `Deduplicate` over ``CannedResponse``, one request at a time: what a request that shares nothing pays (its
    /// load runs in a task of its own).
    public static func deduplicateAlone() -> InProcessSubject {
        .loaders(Deduplicate() --> CannedResponse(), request: makeAbsoluteRequest())
    }
}

extension ParkingCase {
    /// `Deduplicate` in front of a terminal that holds the one shared load until released: every request waits
    /// for it.
    public static let deduplicate = ParkingCase(name: "Deduplicate, one shared load") {
        let gate = GateTerminal()
        let deduplicate = Deduplicate()
        return ParkingSetup(
            chain: deduplicate --> gate,
            request: makeAbsoluteRequest(),
            parkedCount: { deduplicate.waitingCount },
            release: { gate.open() }
        )
    }
}

/// What one run of ``measureDeduplication(count:latency:)`` measured.
public struct DeduplicationMeasurement: Sendable {
    public let requests: Int
    /// The loads that went downstream.
    public let upstreamLoads: Int
    public let succeeded: Int
    /// From the first request sent until the last completed.
    public let totalTime: Duration
}

/// Sends `count` identical requests at once, each from its own child task, through `Deduplicate`, and counts the
/// loads that go downstream.
///
/// - Parameter latency: `nil`: the terminal holds the shared load until all `count` requests wait for it (so any
///   second load is a defect); else the terminal answers after `latency`, and requests that arrive after the answer
///   start a load of their own.
public func measureDeduplication(count: Int, latency: Duration?) async -> DeduplicationMeasurement {
    let deduplicate = Deduplicate()
    let counter = LoadCounter()
    let gate = GateTerminal()
    let chain = deduplicate --> counter --> (latency.map { SlowResponse(latency: $0) } ?? gate)
    let request = makeAbsoluteRequest()
    let clock = ContinuousClock()
    let start = clock.now
    let succeeded = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<count {
            group.addTask { await chain.load(request).response?.status == .ok }
        }
        if latency == nil {
            while deduplicate.waitingCount < count { await Task.yield() }
            gate.open()
        }
        var succeeded = 0
        for await ok in group where ok { succeeded += 1 }
        return succeeded
    }
    return DeduplicationMeasurement(
        requests: count, upstreamLoads: counter.count, succeeded: succeeded, totalTime: clock.now - start)
}

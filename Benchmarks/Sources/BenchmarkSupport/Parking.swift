import CMallocStats
import Foundation
public import HTTP
import HTTPAuth
import Synchronization

/// A place where requests wait, set up so that every request but the first waits there until released.
///
/// Each case is one way a request can be parked: behind ``Throttle`` with one slot, held by the first
/// request, behind a pending OAuth token refresh, and waiting for a load `Deduplicate` shares.
public struct ParkingCase: Sendable {
    /// A short name for tables.
    public let name: String
    /// Builds a fresh setup.
    public let makeSetup: @Sendable () -> ParkingSetup

    public init(name: String, makeSetup: @escaping @Sendable () -> ParkingSetup) {
        self.name = name
        self.makeSetup = makeSetup
    }

    /// Every case the benchmarks run.
    public static let all: [ParkingCase] = [.throttle, .tokenRefresh, .deduplicate]

    /// The floor under every case: the terminal alone holds every request, each parked on one continuation in
    /// an array. What a case costs beyond this is the cost of its parking place.
    public static let floor = ParkingCase(name: "floor (terminal holds all)") {
        let gate = GateTerminal()
        return ParkingSetup(
            chain: gate,
            request: makeAbsoluteRequest(),
            parkedCount: { gate.heldCount },
            release: { gate.open() }
        )
    }

    /// `Throttle(maximumNumberOfRequests: 1)` in front of a terminal that holds the first request until
    /// released; every later request waits in the throttle's queue.
    public static let throttle = ParkingCase(name: "Throttle(max 1)") {
        let gate = GateTerminal()
        let throttle = Throttle(maximumNumberOfRequests: 1)
        let chain = throttle --> gate
        return ParkingSetup(
            chain: chain,
            request: makeAbsoluteRequest(),
            parkedCount: { throttle.waitingCount + gate.heldCount },
            release: { gate.open() }
        )
    }
}

extension ParkingCase {
    /// An `OAuth` loader whose token has expired, in front of a terminal that holds the token endpoint's
    /// answer until released: the first request starts the refresh, and every request waits for it.
    public static let tokenRefresh = ParkingCase(name: "OAuth, pending refresh") {
        let server = TokenServer(holdsTokenRequests: true)
        let oauth = OAuth(
            configuration: benchmarkOAuthConfiguration(environment: .inProcess),
            credentials: expiredBenchmarkCredentials()
        )
        let chain = oauth --> server
        var request = makeAbsoluteRequest()
        request.authenticationMethod = .oauth
        return ParkingSetup(
            chain: chain,
            request: request,
            parkedCount: { oauth.waitingCount },
            release: { server.open() }
        )
    }
}

/// Credentials that expired a minute ago, with a refresh token.
func expiredBenchmarkCredentials() -> OAuthCredentials {
    OAuthCredentials(
        accessToken: "expired-benchmark-token",
        refreshToken: "benchmark-refresh-token",
        expirationDate: Date().addingTimeInterval(-60),
        issuedAt: Date().addingTimeInterval(-3_660)
    )
}

/// A terminal playing both servers of the OAuth benchmarks: the token endpoint (counting its calls, and
/// holding them until ``open()`` when asked to) and the resource server (a canned `200`).
public final class TokenServer: HTTPLoader, @unchecked Sendable {  // Sendable: state behind a Mutex
    private struct State {
        var isOpen: Bool
        var held: [CheckedContinuation<Void, Never>] = []
        var tokenRequests = 0
    }

    private let state: Mutex<State>
    private let canned = CannedResponse()
    private let tokenResponse = Data(
        #"{"access_token":"refreshed-benchmark-token","token_type":"Bearer","expires_in":3600}"#.utf8)

    public init(holdsTokenRequests: Bool) {
        state = Mutex(State(isOpen: !holdsTokenRequests))
    }

    /// How many requests reached the token endpoint.
    public var tokenRequestCount: Int { state.withLock { $0.tokenRequests } }

    public func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        guard request.path == "/token" else { return await canned.load(request) }
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                state.tokenRequests += 1
                if !state.isOpen { state.held.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
        return .success(
            HTTPResponse(
                request: request, status: .ok, headers: ["Content-Type": "application/json"], body: tokenResponse)
        )
    }
}

/// What a refresh storm measured.
public struct RefreshStormMeasurement: Sendable {
    public let requests: Int
    public let tokenRequests: Int
    public let succeeded: Int
    public let totalTime: Duration
}

/// Sends `count` concurrent requests through an `OAuth` loader whose token has expired, and counts the calls
/// that reach the token endpoint (one is right) and the time until every request has completed.
public func measureRefreshStorm(count: Int) async -> RefreshStormMeasurement {
    let server = TokenServer(holdsTokenRequests: false)
    let oauth = OAuth(
        configuration: benchmarkOAuthConfiguration(environment: .inProcess),
        credentials: expiredBenchmarkCredentials()
    )
    let chain = makeDefaultChain(terminal: server, auth: oauth)
    let request = makeDefaultChainRequest()
    let start = ContinuousClock.now
    let succeeded = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<count {
            group.addTask { await chain.load(request).response?.status == .ok }
        }
        var succeeded = 0
        for await ok in group where ok { succeeded += 1 }
        return succeeded
    }
    return RefreshStormMeasurement(
        requests: count,
        tokenRequests: server.tokenRequestCount,
        succeeded: succeeded,
        totalTime: ContinuousClock.now - start
    )
}

/// One setup of a ``ParkingCase``: the chain to send requests to, how many of them are parked, and how to let
/// them all go.
public struct ParkingSetup: Sendable {
    public let chain: HTTPLoader
    public let request: HTTPRequest
    /// The number of requests waiting (including the one holding the way, once it is there).
    public let parkedCount: @Sendable () -> Int
    /// Lets every request through, now and from then on.
    public let release: @Sendable () -> Void

    public init(
        chain: HTTPLoader,
        request: HTTPRequest,
        parkedCount: @escaping @Sendable () -> Int,
        release: @escaping @Sendable () -> Void
    ) {
        self.chain = chain
        self.request = request
        self.parkedCount = parkedCount
        self.release = release
    }
}

/// A terminal that holds the requests it receives until ``open()``, then answers them and every later one
/// with a canned `200`.
final class GateTerminal: HTTPLoader, @unchecked Sendable {  // Sendable: state behind a Mutex
    private struct State {
        var isOpen = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let canned = CannedResponse()

    var heldCount: Int { state.withLock { $0.held.count } }

    func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.held.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
        return await canned.load(request)
    }
}

/// What one parking run measured.
public struct ParkingMeasurement: Sendable {
    /// The number of requests sent.
    public let count: Int
    /// From the first request sent until the last one completed.
    public let totalTime: Duration
    /// From the first request sent until all were parked.
    public let parkTime: Duration
    /// Heap bytes in use with every request parked, minus before the first was sent.
    public let heapBytes: Int
    /// Resident memory with every request parked, minus before the first was sent.
    public let residentBytes: Int

    /// Heap bytes per parked request.
    public var heapBytesPerRequest: Double { Double(heapBytes) / Double(count) }
    /// Total time per request.
    public var timePerRequest: Duration { totalTime / count }
}

/// Sends `count` requests to a fresh setup of `parkingCase`, each from its own child task; waits until every
/// one is parked; records the memory then in use; releases them; and waits for all to complete.
///
/// The memory is everything the requests hold while they wait — each one's task and its suspended async
/// frames as well as the throttle's (or other parking place's) own bookkeeping — as the C heap counts it
/// (see ``heapBytesInUse()``). The task group's own storage for its children is in it too.
public func measureParking(_ parkingCase: ParkingCase, count: Int) async -> ParkingMeasurement {
    let setup = parkingCase.makeSetup()
    let chain = setup.chain
    let request = setup.request
    let clock = ContinuousClock()
    let heapBefore = heapBytesInUse()
    let residentBefore = residentBytes()
    let start = clock.now
    var parkTime = Duration.zero
    var heapBytes = 0
    var resident = 0
    await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<count {
            group.addTask {
                if case .success = await chain.load(request) { return true }
                return false
            }
        }
        while setup.parkedCount() < count {
            try? await Task.sleep(for: .microseconds(200))
        }
        parkTime = clock.now - start
        heapBytes = heapBytesInUse() - heapBefore
        resident = residentBytes() - residentBefore
        setup.release()
        var failed = 0
        for await succeeded in group where !succeeded { failed += 1 }
        precondition(failed == 0, "\(failed) of \(count) parked requests failed")
    }
    return ParkingMeasurement(
        count: count,
        totalTime: clock.now - start,
        parkTime: parkTime,
        heapBytes: heapBytes,
        residentBytes: resident
    )
}

/// The bytes the C heap has handed out and not had back (glibc's `mallinfo2()`: `uordblks + hblkhd`, over
/// every arena).
///
/// Every Swift object, task and async frame slab comes from `malloc`, so the difference between two readings
/// is what was allocated and is still alive, to the byte (plus malloc's 8-byte chunk headers), unaffected by
/// pages that were touched once and by memory freed but not returned to the system. Resident memory (see
/// ``residentBytes()``) is reported next to it as a cross-check.
public func heapBytesInUse() -> Int {
    Int(c_malloc_bytes_in_use())
}

/// The process's resident memory, from `/proc/self/statm` (0 where there is none).
public func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

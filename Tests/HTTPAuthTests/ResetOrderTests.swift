import Foundation
import Testing

@testable import HTTP
@testable import HTTPAuth

/// The head of every chain under test: its ``HTTPLoader/isResetting`` tells the terminal when the reset's first phase
/// has begun and its last has ended.
private final class ResetProbe: HTTPLoader, @unchecked Sendable {}

/// A terminal that holds every request at a gate until it is released, cancelled (its task, or a cancelling
/// reset), and records what arrived while the chain was resetting. `/503` is answered at once with a 503, `/moved`
/// with a 307 to `/moved-here` (held like the rest), a token revocation with 200; token requests are held too.
private final class GatedTerminal: HTTPLoader, @unchecked Sendable {
    struct Arrival: Sendable {
        var request: HTTPRequest
        var duringReset: Bool
    }

    private struct State {
        var held = Waiters<HTTPResult>()
        var heldRequests: [UInt64: HTTPRequest] = [:]
        var arrivals: [Arrival] = []
    }

    private let state = Locked(State())
    let probe: ResetProbe

    init(probe: ResetProbe) { self.probe = probe }

    var arrivals: [Arrival] { state.withLock { $0.arrivals } }
    /// The app's requests held at the gate (not the OAuth loader's token requests).
    var heldAppRequests: Int { state.withLock { $0.heldRequests.values.filter { $0.path != "/token" }.count } }
    /// The OAuth loader's token requests held at the gate.
    var heldTokenRequests: Int { state.withLock { $0.heldRequests.values.filter { $0.path == "/token" }.count } }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        state.withLock { $0.arrivals.append(Arrival(request: request, duringReset: probe.isResetting)) }
        switch request.path {
        case "/503": return .success(HTTPResponse(request: request, status: .serviceUnavailable))
        case "/moved":
            return .success(
                HTTPResponse(request: request, status: .temporaryRedirect, headers: ["Location": "/moved-here"]))
        case "/revoke", "/keys/revoke", "/after": return .success(HTTPResponse(request: request, status: .ok))
        default: break
        }
        let id = state.withLock { $0.held.nextID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled {
                        state.held.answerUnparked(id, with: .failure(HTTPError(.cancelled, request: request)))
                        return true
                    }
                    state.held.park(id, continuation)
                    state.heldRequests[id] = request
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            finish(id, with: .failure(HTTPError(.cancelled, request: request)))
        }
        return state.withLock { $0.held.takeAnswer(id)! }
    }

    private func finish(_ id: UInt64, with result: HTTPResult) {
        let waiter = state.withLock { state in
            state.heldRequests[id] = nil
            return state.held.answer(id, with: result)
        }
        waiter?.resume()
    }

    /// Lets every held request through with 200.
    func releaseAll() {
        for (id, request) in state.withLock({ $0.heldRequests }) {
            finish(id, with: .success(HTTPResponse(request: request, status: .ok)))
        }
    }

    override func failHeldLoads(_ mode: ResetMode) {
        guard mode == .cancel else { return }
        for (id, request) in state.withLock({ $0.heldRequests }) {
            finish(id, with: .failure(HTTPError(.cancelled, request: request, message: "cancelled by the reset")))
        }
    }
}

/// Every order of the loaders that hold requests, in both reset modes: once a reset has begun, no request leaves
/// the chain that had not left it already; every load completes exactly once; the reset drains or cancels
/// what is in flight as asked, and the chain works again afterwards.
@Suite(.noHang) struct ResetOrderTests {
    enum Link: String, CaseIterable, Sendable {
        case resetGuard, auth, retry, throttle, recorder, deduplicate, circuitBreaker, cache, followRedirects
        /// WritingALoader.md's `Gate`, closed: a loader written from the article alone, holding what reaches it.
        case articleGate
        /// WritingALoader.md's `RetryOnceWhenUnavailable`: written from the article alone, it sends again after a 503.
        case articleRetry
    }

    /// The links the first chains had, whose every order is tested.
    static let core: [Link] = [.resetGuard, .auth, .retry, .throttle]

    /// Every order of the core links; each newer link at every position of each of those; and random orders of
    /// all the links (seeded: the seed is printed, and `HTTP_TEST_SEED` replays it). Every order of seven links
    /// would be 5,040 chains per mode.
    static let orders: [[Link]] = {
        var orders = permutations(core)
        for link in Link.allCases where !core.contains(link) {
            for order in permutations(core) {
                for position in 0...order.count {
                    var withLink = order
                    withLink.insert(link, at: position)
                    orders.append(withLink)
                }
            }
        }
        let seed = SplitMix64.seed()
        print("ResetOrderTests: random orders from seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        for _ in 0..<40 { orders.append(Link.allCases.shuffled(using: &random)) }
        return orders
    }()

    static func permutations(_ links: [Link]) -> [[Link]] {
        guard links.count > 1 else { return [links] }
        return links.indices.flatMap { index in
            var rest = links
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    private struct Chain {
        let head: ResetProbe
        let terminal: GatedTerminal
        let throttle: Throttle
        let retry: Retry
        let oauth: OAuth
        let basic: BasicAuth
        /// CustomCredentialSchemes.md's API-key loader: a scheme written from the article, whose reset revokes its key.
        let apiKey: CredentialLoader<APIKeyScheme>
        let delegate: ScriptedDelegate
        let deduplicate = Deduplicate()
        let gate = Gate()

        /// Whether the article's Gate is in this chain.
        let hasGate: Bool

        init(order: [Link]) {
            hasGate = order.contains(.articleGate)
            head = ResetProbe()
            terminal = GatedTerminal(probe: head)
            throttle = Throttle(maximumNumberOfRequests: 1)
            retry = Retry(strategy: .constant(delay: .seconds(3_600), maximumNumberOfAttempts: 2), budget: nil)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            var configuration = OAuthConfiguration(
                endpoints: .known(
                    OAuthEndpoints(
                        authorization: URL(string: "https://id.example.com/authorize")!,
                        token: URL(string: "https://id.example.com/token")!,
                        revocation: URL(string: "https://id.example.com/revoke")!
                    )),
                clientID: "reset-order",
                redirectURI: URL(string: "com.example.app:/callback")!,
                scopes: [],
                resourceOrigins: ["api.example.com"]
            )
            configuration.refreshLimit = .init(maximumRefreshes: 100, window: .seconds(60))
            // Expired an hour ago, with a refresh token: the first OAuth request starts a refresh.
            let expired = OAuthCredentials(
                accessToken: "old", refreshToken: "refresh", expirationDate: now.addingTimeInterval(-3_600))
            oauth = OAuth(configuration: configuration, credentials: expired, now: { now })
            delegate = ScriptedDelegate(answers: [ann], holdsAnswers: true)
            basic = BasicAuth(origins: ["api.example.com"], delegate: delegate)
            apiKey = CredentialLoader(
                scheme: APIKeyScheme(
                    keyEndpoint: URL(string: "https://api.example.com/keys")!, clientID: "reset-order"),
                method: .apiKey, origins: ["api.example.com"],
                credential: APIKey(value: "key-0", expires: now.addingTimeInterval(3_600)), now: { now })
            var loaders: [HTTPLoader] = [head]
            for link in order {
                switch link {
                case .resetGuard: loaders.append(ResetGuard())
                case .auth: loaders.append(Auth(loaders: [.oauth: oauth, .basic: basic, .apiKey: apiKey]))
                case .retry: loaders.append(retry)
                case .throttle: loaders.append(throttle)
                case .recorder: loaders.append(Recorder())  // a pass-through link: holds nothing
                case .deduplicate: loaders.append(deduplicate)
                case .circuitBreaker: loaders.append(CircuitBreaker())
                case .cache: loaders.append(Cache())
                case .followRedirects: loaders.append(FollowRedirects())  // holds nothing: its next hop is in flight
                case .articleGate:
                    gate.close()
                    loaders.append(gate)
                case .articleRetry: loaders.append(RetryOnceWhenUnavailable())
                }
            }
            loaders.append(terminal)
            for (upper, lower) in zip(loaders, loaders.dropFirst()) { upper.nextLoader = lower }
        }

        /// Where the chain's requests are, for a wait that gave up.
        var debugState: String {
            "at the gate \(terminal.heldAppRequests) (token requests \(terminal.heldTokenRequests)), "
                + "Throttle \(throttle.waitingCount) waiting / \(throttle.runningCount) running, "
                + "Retry \(retry.waitingCount), BasicAuth \(basic.waitingCount), API key \(apiKey.debugState), "
                + "Gate \(gate.heldCount), "
                + "OAuth: \(oauth.debugState)"
        }

        /// The app's loads that have not completed are all parked somewhere known, or held at the gate — and
        /// so is the token request of a refresh they wait for: one still on its way down would pass the loaders'
        /// checks before the reset and reach the terminal after it began.
        func isSettled(pending: Int) -> Bool {
            let parked =
                terminal.heldAppRequests + throttle.waitingCount + retry.waitingCount + oauth.waitingCount
                + basic.waitingCount + apiKey.waitingCount + gate.heldCount
            if oauth.waitingCount == 0 || terminal.heldTokenRequests == 1 { return parked == pending }
            // Otherwise the refresh's token request is held by a closed Gate above the terminal, which counts it too.
            return hasGate && parked == pending + 1
        }
    }

    private static func request(_ path: String, _ method: AuthenticationMethod? = nil) -> HTTPRequest {
        var request = HTTPRequest(host: "api.example.com", path: path)
        request.authenticationMethod = method
        return request
    }

    @Test(arguments: orders, [ResetMode.drain, .cancel])
    func noRequestLeavesTheChainOnceAResetHasBegun(order: [Link], mode: ResetMode) async throws {
        let chain = Chain(order: order)
        // /moved is redirected by the terminal: in flight once its next hop, /moved-here, is held (or parked above).
        let requests =
            [
                Self.request("/first"), Self.request("/second"), Self.request("/me", .oauth),
                Self.request("/reports", .basic), Self.request("/data", .apiKey), Self.request("/503"),
            ] + (order.contains(.followRedirects) ? [Self.request("/moved")] : [])
        let results = Box<[String: [HTTPResult]]>([:])
        let loads = requests.map { request in
            Task {
                let result = await chain.head.load(request)
                results.withLock { $0[request.path, default: []].append(result) }
            }
        }
        try await eventually("\(order) \(mode): \(results.value.count) completed; \(chain.debugState)") {
            chain.isSettled(pending: requests.count - results.value.count)
        }
        let completedBefore = results.value.count
        let arrivedBefore = chain.terminal.arrivals.count

        let resetDone = Box(false)
        let reset = Task {
            await chain.head.reset(mode: mode)
            resetDone.withLock { $0 = true }
        }
        // Everything parked fails at once; what is held at the gate is in flight.
        try await eventually("\(order) \(mode): \(results.value.count) completed; \(chain.debugState)") {
            results.value.values.map(\.count).reduce(0, +) >= requests.count - chain.terminal.heldAppRequests
        }
        if mode == .drain {
            // A closed Gate above the terminal holds every app request: then none is in flight.
            if chain.terminal.heldAppRequests > 0 {
                #expect(!resetDone.value, "a draining reset returned while a load was in flight")
            }
            chain.terminal.releaseAll()
        }
        try await reset.finished()
        for load in loads { try await load.finished() }

        // Exactly once, and each with what its place in the chain promises.
        let all = results.value
        #expect(all.values.allSatisfy { $0.count == 1 }, "\(order) \(mode): \(all.mapValues(\.count))")
        #expect(all.count == requests.count)
        for (path, outcomes) in all {
            guard let result = outcomes.first else { continue }
            let sentPath = path == "/moved" ? "/moved-here" : path
            let wasInFlight =
                chain.terminal.arrivals.prefix(arrivedBefore).contains { $0.request.path == sentPath }
                && path != "/503"
            switch (wasInFlight, mode) {
            case (true, .drain): #expect(result.response?.status == .ok, "\(order) \(mode) \(path): \(result)")
            case (true, .cancel): #expect(result.error?.code == .cancelled, "\(order) \(mode) \(path): \(result)")
            case (false, _):
                #expect(result.error?.code == .resetInProgress, "\(order) \(mode) \(path): \(result)")
            }
        }
        #expect(completedBefore == 0)

        // Nothing but the logout's own revocations (OAuth's tokens, the API key) reached the terminal during the reset.
        let during = chain.terminal.arrivals.filter(\.duringReset)
        #expect(
            during.allSatisfy { ["/revoke", "/keys/revoke"].contains($0.request.path) && $0.request.isPartOfReset },
            "\(order) \(mode): \(during.map(\.request.description))")
        #expect(
            during.contains { $0.request.path == "/revoke" }, "\(order) \(mode): the logout's revocation was refused")
        #expect(
            during.contains { $0.request.path == "/keys/revoke" && $0.request.headers["X-API-Key"] == "key-0" },
            "\(order) \(mode): the API key's revocation was refused")

        // The chain works again, and nothing is left parked.
        #expect(chain.gate.heldCount == 0, "\(order) \(mode): the article's Gate still holds requests")
        chain.gate.open()
        #expect(await chain.head.load(Self.request("/after")).response?.status == .ok, "\(order) \(mode)")
        #expect(chain.throttle.waitingCount == 0 && chain.retry.waitingCount == 0)
        #expect(chain.oauth.waitingCount == 0 && chain.basic.waitingCount == 0)
        #expect(chain.deduplicate.waitingCount == 0 && chain.deduplicate.inFlightCount == 0)
        #expect(chain.oauth.credentials == nil && chain.apiKey.credential == nil)
        chain.delegate.release()
    }
}

import Foundation
import HTTP
import HTTPAuth
import Testing

/// The exactly-once contract over whole chains in random orders: a thousand loads through ResetGuard, Auth
/// (OAuth and BasicAuth), Retry, Throttle, ApplyEnvironment, Recorder, Deduplicate, CircuitBreaker, Cache and
/// FollowRedirects — and WritingALoader.md's `Gate`, a loader written from the article alone, opened and closed at
/// random, and its `RetryOnceWhenUnavailable` — above a MockLoader that answers after a random delay, and fails and redirects at random, while
/// tasks are cancelled and the chain is reset several times, in both modes, at random moments. Runs under ThreadSanitizer in the test command. After a reset the loaders have no credentials
/// and no delegate: authenticated requests then fail with `.cannotAuthenticate`.
@Suite(.noHang) struct ChainStressTests {
    enum Link: CaseIterable {
        case resetGuard, auth, retry, throttle, environment, recorder, deduplicate, circuitBreaker, cache
        case followRedirects, articleGate, articleRetry
    }

    @Test(arguments: 0..<4)
    func everyLoadCompletesExactlyOnceInRandomOrdersUnderCancellationAndResets(run: Int) async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let order = Link.allCases.shuffled(using: &random)
        let context = "seed \(seed), order \(order)"
        let loadCount = 1_000

        let terminal = MockLoader()
        for _ in 0..<(loadCount * 4) {
            let latency = Int.random(in: 0...1_500, using: &random)
            let outcome = Int.random(in: 0..<10, using: &random)
            terminal.then { request in
                do {
                    try await Task.sleep(for: .microseconds(latency))
                } catch {
                    return .failure(HTTPError(.cancelled, request: request))
                }
                switch outcome {
                case 0: return .failure(HTTPError(.cannotConnect, request: request))
                case 1: return .success(HTTPResponse(request: request, status: .serviceUnavailable))
                case 2...3 where !request.path.hasPrefix("/moved"):
                    // A redirect within the origin: FollowRedirects sends the next hop down the chain.
                    let location = "/moved\(request.path)"
                    return .success(HTTPResponse(request: request, status: .found, headers: ["Location": location]))
                default:
                    // Fresh for a moment, then served stale while a Cache revalidates it in the background.
                    let headers: HTTPHeaders = [
                        "Cache-Control": "max-age=0, stale-while-revalidate=1", "ETag": "\"e\"",
                    ]
                    return .success(HTTPResponse(request: request, status: .ok, headers: headers))
                }
            }
        }
        let throttle = Throttle(maximumNumberOfRequests: 4)
        let retry = Retry(strategy: .constant(delay: .microseconds(200), maximumNumberOfAttempts: 3), budget: nil)
        let token = OAuthCredentials(accessToken: "stress-token")
        let oauth = OAuth(
            configuration: OAuthConfiguration(
                endpoints: .known(
                    OAuthEndpoints(
                        authorization: URL(string: "https://id.example.com/authorize")!,
                        token: URL(string: "https://id.example.com/token")!)),
                clientID: "stress", redirectURI: URL(string: "com.example:/cb")!, scopes: [],
                resourceOrigins: ["stress.example"]),
            credentials: token)
        let basic = BasicAuth(origins: ["stress.example"], credentials: BasicCredentials(username: "u", password: "p"))
        let recorder = Recorder()
        let deduplicate = Deduplicate()
        let cache = Cache(authorizationPolicy: .privateCacheRules)
        let gate = Gate()
        var loaders: [HTTPLoader] = order.map { link in
            switch link {
            case .resetGuard: ResetGuard()
            case .auth: Auth(loaders: [.oauth: oauth, .basic: basic])
            case .retry: retry
            case .throttle: throttle
            case .environment: ApplyEnvironment(environment: ServerEnvironment(host: "stress.example"))
            case .recorder: recorder
            case .deduplicate: deduplicate
            case .circuitBreaker: CircuitBreaker()
            case .cache: cache
            case .followRedirects: FollowRedirects()
            case .articleGate: gate
            case .articleRetry: RetryOnceWhenUnavailable()
            }
        }
        loaders.append(terminal)
        for (upper, lower) in zip(loaders, loaders.dropFirst()) { upper.nextLoader = lower }
        let chain = loaders[0]

        let completions = Locked([Int](repeating: 0, count: loadCount))
        let unexpected = Locked([String]())
        let tally = Locked([String: Int]())
        let methods: [AuthenticationMethod?] = [nil, .oauth, .basic]
        let plans = (0..<loadCount).map { _ in
            (method: methods.randomElement(using: &random)!, completionAPI: Bool.random(using: &random))
        }
        let cancelled = Set((0..<loadCount).shuffled(using: &random).prefix(loadCount / 4))
        let resetModes = (0..<3).map { _ in Bool.random(using: &random) ? ResetMode.drain : .cancel }
        // Each reset starts once a random share of the loads has completed.
        let resetAfter = (0..<3).map { _ in Int.random(in: (loadCount / 10)..<(loadCount * 9 / 10), using: &random) }

        // When the article's Gate closes (it opens again once it holds a load).
        let gateRounds = (0..<20).map { _ in Int.random(in: 0..<loadCount, using: &random) }.sorted()

        let finished = await withDeadline(seconds: 120) {
            await withTaskGroup(of: Void.self) { group in
                var cancellers: [@Sendable () -> Void] = []
                for index in 0..<loadCount {
                    // Some paths repeat, so that Deduplicate has loads in flight to share and Cache has responses.
                    var request = HTTPRequest(path: "/item/\(index % 64)")
                    request.authenticationMethod = plans[index].method
                    // ApplyEnvironment may come after Auth in this order: name the host so that every order
                    // authenticates.
                    request.host = "stress.example"
                    let record: @Sendable (HTTPResult) -> Void = { result in
                        completions.withLock { $0[index] += 1 }
                        let outcome = result.response.map { "\($0.status.rawValue)" } ?? result.error!.code.rawValue
                        tally.withLock { tally in
                            tally[outcome, default: 0] += 1
                            if result.response?.redirects.isEmpty == false {
                                tally["followed a redirect", default: 0] += 1
                            }
                        }
                        if let error = result.error,
                            ![.cancelled, .resetInProgress, .cannotConnect, .cannotAuthenticate, .circuitOpen].contains(
                                error.code)
                        {
                            unexpected.withLock { $0.append("\(index): \(error)") }
                        }
                    }
                    if plans[index].completionAPI {
                        let done = AsyncStream.makeStream(of: Void.self)
                        let task = chain.load(request) { result in
                            record(result)
                            done.continuation.finish()
                        }
                        cancellers.append { task.cancel() }
                        group.addTask { for await _ in done.stream {} }
                    } else {
                        let task = Task { record(await chain.load(request)) }
                        cancellers.append { task.cancel() }
                        group.addTask { await task.value }  // bounded by the deadline around the group
                    }
                    if index.isMultiple(of: 25) { await Task.yield() }
                }
                for (mode, threshold) in zip(resetModes, resetAfter) {
                    group.addTask {
                        try? await eventually { completions.withLock { $0.reduce(0, +) } >= threshold }
                        await chain.reset(mode: mode)
                    }
                }
                // The gate closes and opens while loads pass, and ends open: what it holds is sent on when it opens,
                // failed by a reset, or cancelled with its task.
                group.addTask {
                    for threshold in gateRounds {
                        try? await eventually { completions.withLock { $0.reduce(0, +) } >= threshold }
                        gate.close()
                        try? await eventually {
                            gate.heldCount > 0 || completions.withLock { $0.reduce(0, +) } >= loadCount
                        }
                        gate.open()
                    }
                }
                for index in cancelled { cancellers[index]() }
            }
            return true
        }
        try #require(finished == true, "\(context): loads or resets still pending after the deadline")

        let counts = completions.value
        #expect(
            counts.allSatisfy { $0 == 1 }, "\(context): \(counts.enumerated().filter { $0.element != 1 }.prefix(5))")
        #expect(unexpected.value.isEmpty, "\(context): \(unexpected.value.prefix(3))")
        let outcomes = tally.value
        print("ChainStressTests: \(context): \(outcomes.sorted { $0.key < $1.key })")
        #expect((outcomes["200"] ?? 0) > 0, "\(context): nothing succeeded: \(outcomes)")
        #expect((outcomes["resetInProgress"] ?? 0) + (outcomes["cancelled"] ?? 0) > 0, "\(context): \(outcomes)")
        try await eventually { cache.backgroundRevalidationCount == 0 }
        #expect(throttle.waitingCount == 0 && throttle.runningCount == 0, "\(context): left parked in Throttle")
        #expect(retry.waitingCount == 0, "\(context)")
        #expect(oauth.waitingCount == 0 && basic.waitingCount == 0, "\(context)")
        #expect(gate.heldCount == 0, "\(context): left held at the article's Gate")
        // Every load that reached the recorder is recorded once, and its secrets are not.
        let entries = recorder.cassette.entries
        #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted(), "\(context)")
        #expect(Set(entries.map(\.sequence)).count == entries.count, "\(context)")
        #expect(!entries.isEmpty, "\(context)")
        #expect(
            entries.allSatisfy { $0.request.headers["Authorization"].map { $0.hasSuffix("<redacted>") } ?? true },
            "\(context)")
        #expect(deduplicate.waitingCount == 0 && deduplicate.inFlightCount == 0, "\(context)")
    }
}

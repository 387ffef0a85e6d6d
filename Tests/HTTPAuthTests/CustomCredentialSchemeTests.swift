import Foundation
import HTTP
import HTTPAuth
import HTTPTestSupport
import Testing

/// A key server and the API it guards, as one terminal: `POST /keys` issues `key-N` (valid for `lifetime` seconds of
/// the test's clock), `POST /keys/revoke` revokes the key in `X-API-Key`, and every other path answers 200 to a valid
/// key and 401 to anything else. Key requests can be held until released, or refused.
final class KeyServer: HTTPLoader, @unchecked Sendable {
    struct State {
        var issued = 0
        var valid: [String: Date] = [:]
        var revoked: [(key: String, isPartOfReset: Bool)] = []
        var apiRequests: [HTTPRequest] = []
        /// Issued keys are refused by the API at once (a misconfigured server).
        var refusesEveryKey = false
        var failsKeyRequests = false
        var lifetime: Double = 3_600
        var holdsKeyRequests = false
        var heldKeyRequests: [CheckedContinuation<Void, Never>] = []
    }

    let state = Box(State())
    let clock: Box<Date>

    init(clock: Box<Date>) { self.clock = clock }

    var keyRequests: Int { state.value.issued }
    var apiRequests: [HTTPRequest] { state.value.apiRequests }
    var heldKeyRequests: Int { state.value.heldKeyRequests.count }

    /// Revokes `key` on the server's side, as an administrator would.
    func revoke(_ key: String) { state.withLock { _ = $0.valid.removeValue(forKey: key) } }

    func releaseKeyRequests() {
        let held = state.withLock { state in
            defer { state.heldKeyRequests = [] }
            return state.heldKeyRequests
        }
        for request in held { request.resume() }
    }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        switch request.path {
        case "/keys":
            let holds = state.withLock { $0.holdsKeyRequests }
            if holds {
                // Ignores cancellation, as a server that never answers does.
                await withCheckedContinuation { continuation in
                    state.withLock { $0.heldKeyRequests.append(continuation) }
                }
            }
            let now = clock.value
            let answer = state.withLock { state -> (status: HTTPStatus, body: String) in
                if state.failsKeyRequests { return (.internalServerError, "") }
                state.issued += 1
                let key = "key-\(state.issued)"
                if !state.refusesEveryKey { state.valid[key] = now.addingTimeInterval(state.lifetime) }
                return (.ok, #"{"key": "\#(key)", "expiresIn": \#(state.lifetime)}"#)
            }
            return .success(HTTPResponse(request: request, status: answer.status, body: Data(answer.body.utf8)))
        case "/keys/revoke":
            state.withLock { state in
                let key = request.headers["X-API-Key"] ?? ""
                state.revoked.append((key, request.isPartOfReset))
                state.valid[key] = nil
            }
            return .success(HTTPResponse(request: request, status: .ok))
        default:
            let now = clock.value
            let isValid = state.withLock { state -> Bool in
                state.apiRequests.append(request)
                guard let key = request.headers["X-API-Key"], let expiry = state.valid[key] else { return false }
                return now < expiry
            }
            return .success(HTTPResponse(request: request, status: isValid ? .ok : .unauthorized))
        }
    }
}

@Suite(.noHang) struct CustomCredentialSchemeTests {
    static let keys = URL(string: "https://api.example.com/keys")!
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    struct Setup {
        let clock = Box(CustomCredentialSchemeTests.start)
        let server: KeyServer
        let loader: CredentialLoader<APIKeyScheme>

        init(origins: Set<Origin> = ["api.example.com"], refusalLimit: RefreshLimit? = .standard) {
            server = KeyServer(clock: clock)
            let clock = clock
            loader = CredentialLoader(
                scheme: APIKeyScheme(keyEndpoint: CustomCredentialSchemeTests.keys, clientID: "tests"),
                method: .apiKey, origins: origins, refusalLimit: refusalLimit, now: { clock.value })
            loader.nextLoader = server
        }

        func advance(by seconds: Double) { clock.withLock { $0 += seconds } }
    }

    static func request(_ path: String = "/reports", host: String = "api.example.com", port: Int? = nil) -> HTTPRequest
    {
        var request = HTTPRequest(host: host, port: port, path: path)
        request.authenticationMethod = .apiKey
        return request
    }

    @Test func samplesMatchTheArticle() throws {
        let catalog = DocumentationSamples.catalog(of: "HTTPAuth", fromTestFile: #filePath)
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("CustomCredentialSchemeSamples.swift").path
        let missing = try DocumentationSamples.samplesMissing(
            from: samples, article: catalog.appendingPathComponent("CustomCredentialSchemes.md"))
        #expect(
            missing.isEmpty,
            "samples not in CustomCredentialSchemeSamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test func theArticlesChainIsAssembledAsDescribed() throws {
        let chain = makeAPIKeyChain(keys: Self.keys)
        let auth = try #require(chain.nextLoader as? Auth)
        #expect(auth.loaders[.apiKey] is CredentialLoader<APIKeyScheme>)
        #expect(auth.nextLoader is Retry)
        let signed = makeSignedChain(key: SigningKey(id: "k", secret: Data("s".utf8)))
        #expect(signed is FollowRedirects && signed.nextLoader is Retry)
        #expect(signed.nextLoader?.nextLoader is CredentialLoader<HMACSigner>)
    }

    @Test func manyRequestsShareOneKeyRequest() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.holdsKeyRequests = true }
        let loads = (0..<20).map { _ in Task { await setup.loader.load(Self.request()) } }
        try await eventually("\(setup.loader.debugState)") {
            setup.loader.waitingCount == 20 && setup.server.heldKeyRequests == 1
        }
        #expect(setup.loader.situation == .authorizing)
        setup.server.releaseKeyRequests()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(setup.server.keyRequests == 1)
        #expect(setup.server.apiRequests.allSatisfy { $0.headers["X-API-Key"] == "key-1" })
        // The key request itself went out unauthenticated, and did not pass the loader again.
        #expect(setup.loader.situation == .authorized)
    }

    @Test func aKeyDueSoonIsReplacedBeforeItIsUsedWithoutA401() async {
        let setup = Setup()
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        setup.advance(by: 3_600 - 61)
        #expect(setup.loader.situation == .authorized)
        setup.advance(by: 2)
        #expect(setup.loader.situation == .needsRefresh)
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        #expect(setup.server.keyRequests == 2)
        #expect(setup.server.apiRequests.map { $0.headers["X-API-Key"] } == ["key-1", "key-2"])
    }

    @Test func aRevokedKeyIsReplacedOnceAndTheRequestReplayed() async throws {
        let setup = Setup()
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        setup.server.revoke("key-1")
        let result = await setup.loader.load(Self.request())
        #expect(result.response?.status == .ok)
        #expect(setup.server.keyRequests == 2)
        #expect(setup.server.apiRequests.map { $0.headers["X-API-Key"] } == ["key-1", "key-1", "key-2"])
    }

    /// Requests sent with a key that has since been replaced are replayed with the current key, without asking for
    /// another: one key request for the whole burst.
    @Test func a401ForAReplacedKeyIsReplayedWithTheCurrentOne() async throws {
        let setup = Setup()
        let gate = Gate()
        gate.close()
        let gated = CredentialLoader(
            scheme: APIKeyScheme(keyEndpoint: Self.keys, clientID: "tests"), method: .apiKey,
            origins: ["api.example.com"], now: { setup.clock.value })
        let chain = gated --> gate --> setup.server
        // The first key, then five requests held with it, then the server revokes it.
        gate.open()
        #expect(await chain.load(Self.request()).response?.status == .ok)
        gate.close()
        let loads = (0..<5).map { _ in Task { await chain.load(Self.request()) } }
        try await eventually("Gate holds \(gate.heldCount); \(gated.debugState)") { gate.heldCount == 5 }
        setup.server.revoke("key-1")
        gate.open()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(setup.server.keyRequests == 2)
        #expect(setup.server.apiRequests.suffix(5).allSatisfy { $0.headers["X-API-Key"] == "key-2" })
    }

    /// The refusal limit catches a loop — a server that refuses every fresh key — and nothing else: keys that live a
    /// few seconds, replaced on time under steady traffic for several minutes, never count.
    @Test(arguments: [1.0, 2.0, 5.0], [0.25, 1.0, 3.0])
    func shortLivedKeysUnderSteadyTrafficNeverTripTheLimit(lifetime: Double, interval: Double) async {
        let setup = Setup()
        setup.server.state.withLock { $0.lifetime = lifetime }
        var failures = 0
        for _ in 0..<Int(300 / interval) {  // five minutes of the test's clock
            if await setup.loader.load(Self.request()).response?.status != .ok { failures += 1 }
            setup.advance(by: interval)
        }
        #expect(failures == 0)
        #expect(setup.server.keyRequests > 1)
    }

    @Test func aServerThatRefusesEveryKeyIsStoppedByTheLimit() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.refusesEveryKey = true }
        var results: [HTTPResult] = []
        for _ in 0..<8 { results.append(await setup.loader.load(Self.request())) }
        // Each request: a key, a 401, a new key, a 401 (returned). Five refusals a minute: then no more keys.
        #expect(setup.server.keyRequests <= 6)
        let stopped = try #require(results.last?.error)
        #expect(stopped.code == .cannotAuthenticate)
        #expect(stopped.response?.status == .unauthorized)
        #expect(stopped.message.contains("the API key"))
        let keysBefore = setup.server.keyRequests
        _ = await setup.loader.load(Self.request())
        #expect(setup.server.keyRequests == keysBefore)
        // A minute later, the loader tries again.
        setup.advance(by: 61)
        _ = await setup.loader.load(Self.request())
        #expect(setup.server.keyRequests > keysBefore)
    }

    @Test func aFailedKeyRequestFailsTheWaitingRequestsAndTheNextOneTriesAgain() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.failsKeyRequests = true }
        let failed = try #require(await setup.loader.load(Self.request()).error)
        #expect(failed.code == .cannotAuthenticate)
        #expect(failed.message == "obtaining the API key failed")
        #expect((failed.underlyingError as? APIKeyScheme.KeyRefused)?.status == .internalServerError)
        // The underlying error is named once, by the description.
        #expect(failed.description.components(separatedBy: "KeyRefused").count == 2, "\(failed.description)")
        setup.server.state.withLock { $0.failsKeyRequests = false }
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
    }

    @Test func theKeyGoesOnlyToItsOriginsAndAHostWithAPortMeansHTTPS() async throws {
        let setup = Setup(origins: ["api.example.com:8443"])
        #expect(await setup.loader.load(Self.request(port: 8443)).response?.status == .ok)
        let elsewhere = try #require(await setup.loader.load(Self.request()).error)
        #expect(elsewhere.code == .cannotAuthenticate)
        #expect(elsewhere.message.contains("https://api.example.com:8443"))
        var plain = Self.request(port: 8443)
        plain.scheme = "http"
        #expect(await setup.loader.load(plain).error?.code == .cannotAuthenticate)
        #expect(setup.server.apiRequests.count == 1)
    }

    @Test func aWaitingRequestThatIsCancelledCompletesAtOnce() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.holdsKeyRequests = true }
        let waiting = Task { await setup.loader.load(Self.request()) }
        let other = Task { await setup.loader.load(Self.request()) }
        try await eventually("\(setup.loader.debugState)") { setup.loader.waitingCount == 2 }
        waiting.cancel()
        #expect(try await waiting.finished().error?.code == .cancelled)
        setup.server.releaseKeyRequests()
        #expect(try await other.finished().response?.status == .ok)
    }

    /// A reset fails the waiting requests at once, stops waiting for a key request that never answers, revokes the key
    /// with a request that is part of the reset, and forgets it: the next request gets a new one.
    @Test(arguments: [ResetMode.drain, .cancel])
    func aResetInterruptsTheFlowRevokesAndForgetsTheKey(mode: ResetMode) async throws {
        let setup = Setup()
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        setup.loader.setNeedsRefresh()
        setup.server.state.withLock { $0.holdsKeyRequests = true }
        let waiting = Task { await setup.loader.load(Self.request()) }
        try await eventually("\(setup.loader.debugState)") {
            setup.loader.waitingCount == 1 && setup.server.heldKeyRequests == 1
        }
        try await Task { await setup.loader.reset(mode: mode) }.finished(within: 60, setup.loader.debugState)
        #expect(try await waiting.finished().error?.code == .resetInProgress)
        let revoked = setup.server.state.value.revoked
        #expect(revoked.count == 1 && revoked.first?.key == "key-1" && revoked.first?.isPartOfReset == true)
        #expect(setup.loader.credential == nil && setup.loader.situation == .idle)
        // The interrupted key request answers late: it changes nothing.
        setup.server.state.withLock { $0.holdsKeyRequests = false }
        setup.server.releaseKeyRequests()
        await setup.loader.waitUntilFlowsEnd()
        #expect(setup.loader.credential == nil)
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        #expect(setup.loader.credential?.value == "key-3")
    }

    @Test func aRequestForAnotherMethodPassesThroughUntouched() async {
        let setup = Setup()
        var plain = Self.request()
        plain.authenticationMethod = nil
        _ = await setup.loader.load(plain)
        #expect(setup.server.apiRequests.first?.headers["X-API-Key"] == nil)
        #expect(setup.server.keyRequests == 0)
    }

    // MARK: - The signer

    static let signingKey = SigningKey(id: "k1", secret: Data("signing secret".utf8))

    /// What the server computes to check a signature.
    static func expectedSignature(of request: HTTPRequest, body: Data = Data()) -> String {
        let digest = Data(SHA256.hash(data: body)).base64EncodedString()
        let target = request.percentEncodedPath + (request.percentEncodedQuery.map { "?" + $0 } ?? "")
        let signed = [
            request.method.rawValue, request.host ?? "", target, request.headers["X-Timestamp"] ?? "", digest,
        ].joined(separator: "\n")
        let code = HMAC<SHA256>.authenticationCode(
            for: Data(signed.utf8), using: SymmetricKey(data: signingKey.secret))
        return "HMAC-SHA256 keyId=\"k1\", signature=\"\(Data(code).base64EncodedString())\""
    }

    @Test func theHMACStandInMatchesRFC4231() {
        let code = HMAC<SHA256>.authenticationCode(
            for: Data("what do ya want for nothing?".utf8), using: SymmetricKey(data: Data("Jefe".utf8)))
        #expect(
            code.map { String(format: "%02x", $0) }.joined()
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func eachRetryAndEachRedirectHopIsSignedAfresh() async throws {
        let clock = Box(Self.start)
        let mock = MockLoader()
            .then { request in
                clock.withLock { $0 += 5 }
                return .success(
                    HTTPResponse(request: request, status: .temporaryRedirect, headers: ["Location": "/v2/reports?x=1"])
                )
            }
            .then { request in
                clock.withLock { $0 += 5 }
                return .success(HTTPResponse(request: request, status: .serviceUnavailable))
            }
            .then(status: .ok)
        let signer = CredentialLoader(
            scheme: HMACSigner(key: Self.signingKey, now: { clock.value }), method: .signed,
            origins: ["api.example.com"], credential: Self.signingKey)
        let chain =
            FollowRedirects() --> Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 2)) --> signer --> mock
        var request = HTTPRequest(host: "api.example.com", path: "/reports")
        request.authenticationMethod = .signed
        #expect(await chain.load(request).response?.status == .ok)
        let sent = mock.receivedRequests
        #expect(sent.map(\.path) == ["/reports", "/v2/reports", "/v2/reports"])
        #expect(sent.map { $0.headers["X-Timestamp"] } == ["1800000000", "1800000005", "1800000010"])
        for request in sent { #expect(request.headers["Authorization"] == Self.expectedSignature(of: request)) }
    }

    /// A server that refuses a signature (a timestamp it finds too old) gets the request signed again, once.
    @Test func aRefusedSignatureIsSignedAgainAndReplayedOnce() async {
        let clock = Box(Self.start)
        let mock = MockLoader()
            .then { request in
                clock.withLock { $0 += 400 }
                return .success(HTTPResponse(request: request, status: .unauthorized))
            }
            .then(status: .ok)
        let signer = CredentialLoader(
            scheme: HMACSigner(key: Self.signingKey, now: { clock.value }), method: .signed,
            origins: ["api.example.com"], credential: Self.signingKey)
        var request = HTTPRequest(
            method: .post, host: "api.example.com", path: "/upload", body: DataBody(Data("hi".utf8)))
        request.authenticationMethod = .signed
        #expect(await (signer --> mock).load(request).response?.status == .ok)
        let sent = mock.receivedRequests
        #expect(sent.map { $0.headers["X-Timestamp"] } == ["1800000000", "1800000400"])
        for request in sent {
            #expect(request.headers["Authorization"] == Self.expectedSignature(of: request, body: Data("hi".utf8)))
        }
    }

    @Test func aBodyThatCanBeReadOnlyOnceIsSentUnsigned() async {
        let mock = MockLoader().then(status: .ok)
        let signer = CredentialLoader(
            scheme: HMACSigner(key: Self.signingKey, now: { Self.start }), method: .signed,
            origins: ["api.example.com"], credential: Self.signingKey)
        let stream = AsyncStream<Data> { continuation in
            continuation.yield(Data("chunk".utf8))
            continuation.finish()
        }
        var request = HTTPRequest(method: .post, host: "api.example.com", path: "/upload", body: StreamBody(stream))
        request.authenticationMethod = .signed
        #expect(await (signer --> mock).load(request).response?.status == .ok)
        let sent = mock.receivedRequests.first
        #expect(
            sent?.headers["X-Content-SHA256"]
                == Data(SHA256.hash(data: Data("UNSIGNED-PAYLOAD".utf8))).base64EncodedString())
    }
}

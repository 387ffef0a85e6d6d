import Foundation
import HTTP
import HTTPTestSupport
import Testing

@testable import HTTPAuth

/// A device authorization endpoint, a token endpoint, a revocation endpoint and the API they guard, as one terminal.
/// `POST /device` issues `dc-N` and the user code `WDJB-MJHT`; each device-code poll of `POST /token` takes the next
/// scripted answer (`authorization_pending` once they run out; `"ok"` issues `at-N` and `rt-N`); a refresh-token
/// grant rotates the refresh token (or not, with `rotates` off) and answers `invalid_grant` for an unknown one;
/// `POST /revoke` revokes a token; every other path answers 200 to a valid bearer token and 401 to anything else.
private final class DeviceServer: HTTPLoader, @unchecked Sendable {
    struct State {
        var deviceRequests: [HTTPRequest] = []
        var polls: [HTTPRequest] = []
        var refreshes: [HTTPRequest] = []
        var revoked: [[String: String]] = []
        var answers: [String] = []
        var deviceAnswer: (status: HTTPStatus, body: String)?
        var expiresIn = 600
        var interval: Int? = 5
        var accessTokens: Set<String> = []
        var refreshTokens: Set<String> = []
        var rotates = true
        var issued = 0
        /// Fails this many polls as if the server could not be reached.
        var unreachablePolls = 0
    }

    let state = Box(State())

    var pollCount: Int { state.value.polls.count }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        let form = deviceFormFields(of: request)
        switch request.path {
        case "/device":
            let (status, body) = state.withLock { state -> (HTTPStatus, String) in
                state.deviceRequests.append(request)
                if let answer = state.deviceAnswer { return answer }
                let interval = state.interval.map { #","interval":\#($0)"# } ?? ""
                return (
                    .ok,
                    #"{"device_code":"dc-\#(state.deviceRequests.count)","user_code":"WDJB-MJHT","#
                        + #""verification_uri":"https://id.example.com/device","#
                        + #""verification_uri_complete":"https://id.example.com/device?user_code=WDJB-MJHT","#
                        + #""expires_in":\#(state.expiresIn)\#(interval)}"#
                )
            }
            return .success(HTTPResponse(request: request, status: status, body: Data(body.utf8)))
        case "/token" where form["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code":
            let answer = state.withLock { state -> String? in
                state.polls.append(request)
                if state.unreachablePolls > 0 {
                    state.unreachablePolls -= 1
                    return nil
                }
                let answer = state.answers.isEmpty ? "authorization_pending" : state.answers.removeFirst()
                return answer == "ok" ? issue(&state, refresh: true) : #"{"error":"\#(answer)"}"#
            }
            guard let answer else { return .failure(HTTPError(.cannotConnect, request: request)) }
            let status: HTTPStatus = answer.contains("access_token") ? .ok : .badRequest
            return .success(HTTPResponse(request: request, status: status, body: Data(answer.utf8)))
        case "/token" where form["grant_type"] == "refresh_token":
            let answer = state.withLock { state -> String? in
                state.refreshes.append(request)
                guard let old = form["refresh_token"], state.refreshTokens.contains(old) else { return nil }
                if state.rotates { state.refreshTokens.remove(old) }
                return issue(&state, refresh: state.rotates)
            }
            guard let answer else {
                return .success(
                    HTTPResponse(request: request, status: .badRequest, body: Data(#"{"error":"invalid_grant"}"#.utf8)))
            }
            return .success(HTTPResponse(request: request, status: .ok, body: Data(answer.utf8)))
        case "/revoke":
            state.withLock { state in
                state.revoked.append(form)
                if let token = form["token"] {
                    state.accessTokens.remove(token)
                    state.refreshTokens.remove(token)
                }
            }
            return .success(HTTPResponse(request: request, status: .ok))
        default:
            let ok = state.withLock { state in
                request.headers["Authorization"].map { state.accessTokens.contains(String($0.dropFirst(7))) } ?? false
            }
            return .success(HTTPResponse(request: request, status: ok ? .ok : .unauthorized))
        }
    }

    private func issue(_ state: inout State, refresh: Bool) -> String {
        state.issued += 1
        let access = "at-\(state.issued)"
        state.accessTokens.insert(access)
        var body = #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":3600"#
        if refresh {
            state.refreshTokens.insert("rt-\(state.issued)")
            body += #","refresh_token":"rt-\#(state.issued)""#
        }
        return body + "}"
    }
}

@Suite(.noHang) struct DeviceAuthorizationGrantTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    private struct Setup {
        let clock: DevicePollingClock
        let now = Box(DeviceAuthorizationGrantTests.start)
        let server = DeviceServer()
        let screen: RecordingCodeScreen
        let grant: DeviceAuthorizationGrant
        let loader: CredentialLoader<DeviceAuthorizationGrant>

        init(
            movesOnSleep: Bool = true, clientSecret: String? = nil,
            authentication: DeviceAuthorizationGrant.ClientAuthentication = .basic, hasDelegate: Bool = true,
            credentials: OAuthCredentials? = nil
        ) {
            clock = DevicePollingClock(movesOnSleep: movesOnSleep)
            screen = RecordingCodeScreen()
            grant = DeviceAuthorizationGrant(
                deviceAuthorizationEndpoint: URL(string: "https://id.example.com/device")!,
                tokenEndpoint: URL(string: "https://id.example.com/token")!,
                clientID: "tv-app", clientSecret: clientSecret, authentication: authentication,
                scopes: ["videos.read", "offline_access"],
                revocationEndpoint: URL(string: "https://id.example.com/revoke")!,
                delegate: hasDelegate ? screen : nil, clock: clock)
            let now = now
            loader = CredentialLoader(
                scheme: grant, method: .oauth, origins: ["api.example.com"], credential: credentials,
                now: { now.value })
            loader.nextLoader = server
        }

        func answer(_ answers: String...) {
            server.state.withLock { $0.answers = answers }
        }
    }

    static func request() -> HTTPRequest {
        var request = HTTPRequest(host: "api.example.com", path: "/videos")
        request.authenticationMethod = .oauth
        return request
    }

    @Test func theCodeIsShownThenTheTokenEndpointIsPolledAtTheIntervalUntilTheUserApproves() async throws {
        let setup = Setup()
        setup.answer("authorization_pending", "authorization_pending", "ok")
        let loads = (0..<16).map { _ in Task { await setup.loader.load(Self.request()) } }
        for load in loads { #expect(try await load.finished().response?.status == .ok) }

        let device = try #require(setup.server.state.value.deviceRequests.first)
        #expect(setup.server.state.value.deviceRequests.count == 1, "one flow for sixteen requests")
        #expect(deviceFormFields(of: device) == ["client_id": "tv-app", "scope": "videos.read offline_access"])
        #expect(device.headers["Content-Type"] == "application/x-www-form-urlencoded", "oauthlib wants no charset")
        #expect(setup.server.pollCount == 3)
        for poll in setup.server.state.value.polls {
            #expect(
                deviceFormFields(of: poll) == [
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": "dc-1",
                    "client_id": "tv-app",
                ])
        }
        #expect(setup.clock.requestedDurations == [.seconds(5), .seconds(5), .seconds(5)])
        let shown = try #require(setup.screen.shown.value.first)
        #expect(setup.screen.shown.value.count == 1 && setup.screen.hidden.value == [shown])
        #expect(
            shown.userCode == "WDJB-MJHT" && shown.verificationURI.absoluteString == "https://id.example.com/device")
        #expect(shown.verificationURIComplete?.absoluteString == "https://id.example.com/device?user_code=WDJB-MJHT")
        #expect(shown.expiresIn == .seconds(600) && shown.expirationDate == Self.start.addingTimeInterval(600))
        let credentials = try #require(setup.loader.credential)
        #expect(credentials.accessToken == "at-1" && credentials.refreshToken == "rt-1")
        // Received 15 s into the flow, by the grant's clock: the token expires an hour after that.
        #expect(credentials.expirationDate == Self.start.addingTimeInterval(15 + 3_600))
        #expect(setup.grant.lastPath.last == .finished)
    }

    @Test func slowDownAddsFiveSecondsToEveryLaterPoll() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.interval = 2 }
        setup.answer("slow_down", "authorization_pending", "slow_down", "authorization_pending", "ok")
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        #expect(setup.clock.requestedDurations == [2, 7, 7, 12, 12].map { .seconds($0) })
    }

    @Test func withoutAnIntervalTheGrantPollsEveryFiveSeconds() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.interval = nil }
        setup.answer("authorization_pending", "ok")
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        #expect(setup.clock.requestedDurations == [.seconds(5), .seconds(5)])
    }

    @Test func anUnreachableTokenEndpointDoublesTheInterval() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.unreachablePolls = 1 }
        setup.answer("authorization_pending", "ok")
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        #expect(setup.clock.requestedDurations == [.seconds(5), .seconds(10), .seconds(10)])
    }

    @Test(arguments: [
        ("access_denied", DeviceAuthorizationError.Code.accessDenied), ("expired_token", .expired),
    ])
    func aDeclinedOrExpiredCodeFailsWithItsOwnError(answer: String, code: DeviceAuthorizationError.Code) async throws {
        let setup = Setup()
        setup.answer("authorization_pending", answer)
        let error = try #require(await setup.loader.load(Self.request()).error)
        #expect(error.code == .cannotAuthenticate)
        #expect((error.underlyingError as? DeviceAuthorizationError)?.code == code)
        #expect(setup.server.pollCount == 2)
        #expect(setup.screen.hidden.value.count == 1)
        #expect(setup.loader.credential == nil)
    }

    @Test func theCodesLifetimeBoundsTheWholeWait() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.expiresIn = 12 }  // polls at 5 s and 10 s; one at 15 s would be too late
        let error = try #require(await setup.loader.load(Self.request()).error)
        let reason = try #require(error.underlyingError as? DeviceAuthorizationError)
        #expect(reason.code == .expired && reason.description.contains("12 s"))
        #expect(setup.server.pollCount == 2)
        #expect(setup.clock.now.offset == .seconds(10))
    }

    @Test func cancellingStopsPollingAtOnce() async throws {
        let setup = Setup(movesOnSleep: false)
        let load = Task { await setup.loader.load(Self.request()) }
        try await eventually(setup.loader.debugState) { setup.clock.sleeperCount == 1 }
        setup.clock.advance(by: .seconds(5))
        try await eventually(setup.loader.debugState) { setup.server.pollCount == 1 && setup.clock.sleeperCount == 1 }
        setup.grant.cancelAuthorization()
        let error = try #require(try await load.finished().error)
        #expect(error.code == .cannotAuthenticate)
        #expect((error.underlyingError as? DeviceAuthorizationError)?.code == .cancelled)
        #expect(setup.clock.sleeperCount == 0 && setup.server.pollCount == 1)
        #expect(setup.screen.hidden.value.count == 1)
        // The next request starts a new flow.
        let again = Task { await setup.loader.load(Self.request()) }
        try await eventually(setup.loader.debugState) { setup.server.state.value.deviceRequests.count == 2 }
        setup.grant.cancelAuthorization()
        #expect(try await again.finished().error != nil)
    }

    @Test func aResetStopsPollingAtOnce() async throws {
        let setup = Setup(movesOnSleep: false)
        let load = Task { await setup.loader.load(Self.request()) }
        try await eventually(setup.loader.debugState) { setup.clock.sleeperCount == 1 }
        await setup.loader.reset()
        #expect(try await load.finished().error?.code == .resetInProgress)
        try await eventually(setup.loader.debugState) { setup.screen.hidden.value.count == 1 }
        #expect(setup.clock.sleeperCount == 0 && setup.server.pollCount == 0)
        await setup.loader.waitUntilFlowsEnd()
        #expect(setup.grant.lastPath.last == .finished)
    }

    /// Hundreds of requests parked on one device flow, some cancelled by their tasks, while the app cancels the flow
    /// and a reset interrupts the next one: every request completes once, nothing is left sleeping on the clock, and
    /// the flow after that gets its tokens.
    @Test func parkedRequestsCancelsAndResetsAroundTheDeviceFlowEachEndOnce() async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let setup = Setup(movesOnSleep: false)
        for round in 0..<3 {
            let loads = (0..<300).map { _ in Task { await setup.loader.load(Self.request()) } }
            try await eventually("seed \(seed): \(setup.loader.debugState)") {
                setup.loader.waitingCount + loads.count(where: \.isCancelled) >= 300 && setup.clock.sleeperCount == 1
            }
            for load in loads where Bool.random(using: &random) { load.cancel() }
            if round == 0 { setup.grant.cancelAuthorization() } else { await setup.loader.reset() }
            var codes: [HTTPError.Code?] = []
            for load in loads { codes.append(try await load.finished().error?.code) }
            let expected: Set<HTTPError.Code?> = [.cancelled, round == 0 ? .cannotAuthenticate : .resetInProgress]
            #expect(Set(codes).isSubset(of: expected), "seed \(seed), round \(round): \(Set(codes))")
            #expect(Set(codes) == expected, "seed \(seed), round \(round): some cancelled, the rest failed together")
            try await eventually("seed \(seed): \(setup.loader.debugState)") { setup.clock.sleeperCount == 0 }
        }
        await setup.loader.waitUntilFlowsEnd()
        setup.answer("ok")
        let approved = Task { await setup.loader.load(Self.request()) }
        try await eventually(setup.loader.debugState) { setup.clock.sleeperCount == 1 }
        setup.clock.advance(by: .seconds(5))
        #expect(try await approved.finished().response?.status == .ok)
        #expect(setup.screen.shown.value.count == setup.screen.hidden.value.count)
    }

    @Test func withoutADelegateTheFlowFailsBeforeAskingForACode() async throws {
        let setup = Setup(hasDelegate: false)
        let error = try #require(await setup.loader.load(Self.request()).error)
        #expect((error.underlyingError as? DeviceAuthorizationError) == .noDelegate)
        #expect(setup.server.state.value.deviceRequests.isEmpty)
    }

    @Test func aRefusedOrUnusableDeviceAuthorizationRequestFailsWithTheServersError() async throws {
        let setup = Setup()
        setup.server.state.withLock {
            $0.deviceAnswer = (.badRequest, #"{"error":"invalid_scope","error_description":"no such scope"}"#)
        }
        let refused = try #require(
            await setup.loader.load(Self.request()).error?.underlyingError as? DeviceAuthorizationError)
        #expect(
            refused == .authorizationRequestFailed(status: 400, error: "invalid_scope", description: "no such scope"))
        for body in [
            #"{"device_code":"d","user_code":"u","verification_uri":"javascript:alert(1)","expires_in":600}"#,
            #"{"device_code":"d","user_code":"u","verification_uri":"https://id.example.com/d","expires_in":-1}"#,
            #"{"device_code":"d","user_code":"u","verification_uri":"https://id.example.com/d"}"#,
            #"{"device_code":"","user_code":"u","verification_uri":"https://id.example.com/d","expires_in":600}"#,
            "not JSON",
        ] {
            setup.server.state.withLock { $0.deviceAnswer = (.ok, body) }
            let error = await setup.loader.load(Self.request()).error?.underlyingError as? DeviceAuthorizationError
            #expect(error?.code == .invalidAuthorizationResponse, "\(body)")
        }
        #expect(setup.screen.shown.value.isEmpty && setup.server.pollCount == 0)
    }

    @Test func aConfidentialClientAuthenticatesAsTheTokenEndpointDoes() async throws {
        let basic = Setup(clientSecret: "s3cr:et")
        basic.answer("ok")
        #expect(await basic.loader.load(Self.request()).response?.status == .ok)
        let expected = BasicCredentials(username: "tv-app", password: "s3cr%3Aet").authorizationHeaderValue
        let device = try #require(basic.server.state.value.deviceRequests.first)
        let poll = try #require(basic.server.state.value.polls.first)
        #expect(device.headers["Authorization"] == expected && poll.headers["Authorization"] == expected)
        #expect(
            deviceFormFields(of: device)["client_id"] == "tv-app"
                && deviceFormFields(of: device)["client_secret"] == nil)

        let post = Setup(clientSecret: "s3cr:et", authentication: .post)
        post.answer("ok")
        #expect(await post.loader.load(Self.request()).response?.status == .ok)
        let postPoll = try #require(post.server.state.value.polls.first)
        #expect(
            postPoll.headers["Authorization"] == nil && deviceFormFields(of: postPoll)["client_secret"] == "s3cr:et")
    }

    @Test func aDueTokenIsRefreshedAndARotatedRefreshTokenReplacesTheOld() async throws {
        let setup = Setup()
        setup.answer("ok")
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        setup.now.withLock { $0 += 3_600 }  // past the refresh window
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        let refresh = try #require(setup.server.state.value.refreshes.first)
        #expect(deviceFormFields(of: refresh)["grant_type"] == "refresh_token")
        #expect(deviceFormFields(of: refresh)["refresh_token"] == "rt-1")
        #expect(setup.loader.credential?.accessToken == "at-2" && setup.loader.credential?.refreshToken == "rt-2")
        #expect(setup.server.state.value.deviceRequests.count == 1, "no new device flow")
    }

    @Test func aRefreshWithoutANewRefreshTokenKeepsTheOld() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.rotates = false }
        setup.answer("ok")
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        setup.loader.setNeedsRefresh()
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        #expect(setup.loader.credential?.accessToken == "at-2" && setup.loader.credential?.refreshToken == "rt-1")
    }

    @Test func aRejectedRefreshTokenOrNoneLeadsToANewDeviceFlow() async throws {
        let rejected = Setup(credentials: OAuthCredentials(accessToken: "stale", refreshToken: "unknown"))
        rejected.answer("ok")
        #expect(await rejected.loader.load(Self.request()).response?.status == .ok)
        #expect(rejected.server.state.value.refreshes.count == 1)
        #expect(rejected.server.state.value.deviceRequests.count == 1)
        #expect(rejected.loader.credential?.accessToken == "at-1")

        let none = Setup(credentials: OAuthCredentials(accessToken: "stale"))
        none.answer("ok")
        #expect(await none.loader.load(Self.request()).response?.status == .ok)
        #expect(none.server.state.value.refreshes.isEmpty && none.server.state.value.deviceRequests.count == 1)
    }

    @Test func aResetRevokesTheRefreshTokenThenTheAccessToken() async throws {
        let setup = Setup()
        setup.answer("ok")
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        await setup.loader.reset()
        #expect(
            setup.server.state.value.revoked == [
                ["token": "rt-1", "token_type_hint": "refresh_token", "client_id": "tv-app"],
                ["token": "at-1", "token_type_hint": "access_token", "client_id": "tv-app"],
            ])
        #expect(setup.loader.credential == nil)
    }

    @Test func secretsNeverAppearInDescriptionsMirrorsOrErrors() async throws {
        let setup = Setup(clientSecret: "s3cr:et")
        setup.answer("access_denied")
        let error = try #require(await setup.loader.load(Self.request()).error)
        var dumped = ""
        dump(setup.grant, to: &dumped)
        for text in [error.description, error.message, "\(setup.grant)", dumped, setup.loader.debugState] {
            #expect(!text.contains("s3cr") && !text.contains("dc-1"), "\(text)")
        }
        #expect(dumped.contains("<redacted>") && "\(setup.grant)".contains("tv-app"))
    }
}

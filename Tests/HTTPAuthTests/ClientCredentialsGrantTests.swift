import Foundation
import HTTP
import HTTPAuth
import HTTPTestSupport
import Testing

/// A token endpoint for the client credentials grant and the API it guards, as one terminal. `POST /token` checks the
/// client's authentication and issues `t-N` (valid for `lifetime` seconds of the test clock); `POST /revoke` revokes a
/// token; every other path answers 200 to a valid bearer token and 401 to anything else.
private final class ClientCredentialsServer: HTTPLoader, @unchecked Sendable {
    struct State {
        var tokenRequests: [HTTPRequest] = []
        var valid: [String: Date] = [:]
        var revoked: [String] = []
        var lifetime: Double = 3_600
        var status: HTTPStatus = .ok
        var holdsTokenRequests = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    let state = Box(State())
    let clock: Box<Date>
    init(clock: Box<Date>) { self.clock = clock }

    var tokenRequestCount: Int { state.value.tokenRequests.count }

    func release() {
        let held = state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        switch request.path {
        case "/token":
            if state.value.holdsTokenRequests {
                await withCheckedContinuation { continuation in state.withLock { $0.held.append(continuation) } }
            }
            let now = clock.value
            let (status, body) = state.withLock { state -> (HTTPStatus, String) in
                state.tokenRequests.append(request)
                guard state.status == .ok else { return (state.status, #"{"error":"invalid_client"}"#) }
                let token = "t-\(state.tokenRequests.count)"
                state.valid[token] = now.addingTimeInterval(state.lifetime)
                return (
                    .ok,
                    #"{"access_token":"\#(token)","token_type":"Bearer","expires_in":\#(Int(state.lifetime)),"refresh_token":"r"}"#
                )
            }
            return .success(HTTPResponse(request: request, status: status, body: Data(body.utf8)))
        case "/revoke":
            let form = String(decoding: (try? request.body.encode()) ?? Data(), as: UTF8.self)
            state.withLock { $0.revoked.append(form) }
            return .success(HTTPResponse(request: request, status: .ok))
        default:
            let now = clock.value
            let ok = state.withLock { state -> Bool in
                guard let header = request.headers["Authorization"], header.hasPrefix("Bearer "),
                    let expiry = state.valid[String(header.dropFirst(7))]
                else { return false }
                return now < expiry
            }
            return .success(HTTPResponse(request: request, status: ok ? .ok : .unauthorized))
        }
    }
}

@Suite(.noHang) struct ClientCredentialsGrantTests {
    static let tokenEndpoint = URL(string: "https://id.example.com/token")!

    private struct Setup {
        let clock = Box(Date(timeIntervalSince1970: 1_800_000_000))
        let server: ClientCredentialsServer
        let loader: CredentialLoader<ClientCredentialsGrant>

        init(
            authentication: ClientCredentialsGrant.ClientAuthentication = .basic, scopes: [String] = [],
            resources: [URL] = [], revocation: URL? = nil
        ) {
            server = ClientCredentialsServer(clock: clock)
            let clock = clock
            let grant = ClientCredentialsGrant(
                tokenEndpoint: ClientCredentialsGrantTests.tokenEndpoint, clientID: "worker 1",
                clientSecret: "s3cr:et", authentication: authentication, scopes: scopes, resources: resources,
                revocationEndpoint: revocation)
            loader = CredentialLoader(scheme: grant, method: .oauth, origins: ["api.example.com"], now: { clock.value })
            loader.nextLoader = server
        }
    }

    static func request(_ path: String = "/reports") -> HTTPRequest {
        var request = HTTPRequest(host: "api.example.com", path: path)
        request.authenticationMethod = .oauth
        return request
    }

    static func form(_ request: HTTPRequest) -> [String: String] {
        let text = String(decoding: (try? request.body.encode()) ?? Data(), as: UTF8.self)
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0], default: ""] += (fields[parts[0]] == nil ? "" : ",") + (parts.count > 1 ? parts[1] : "")
        }
        return fields
    }

    @Test func theTokenRequestAuthenticatesTheClientWithBasicAndAsksForScopesAndResources() async throws {
        let setup = Setup(
            scopes: ["reports.read", "reports.write"], resources: [URL(string: "https://api.example.com")!])
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        let token = try #require(setup.server.state.value.tokenRequests.first)
        #expect(token.method == .post && token.path == "/token")
        // RFC 6749 §2.3.1: the ID and secret form-encoded, then Basic-encoded.
        let basic = BasicCredentials(username: "worker+1", password: "s3cr%3Aet").authorizationHeaderValue
        #expect(token.headers["Authorization"] == basic)
        let form = Self.form(token)
        #expect(form["grant_type"] == "client_credentials")
        #expect(form["scope"] == "reports.read reports.write")
        #expect(form["resource"] == "https://api.example.com")
        #expect(form["client_secret"] == nil)
        #expect(setup.loader.credential?.refreshToken == nil, "a refresh token the server sends anyway is not kept")
    }

    /// RFC 6749 Appendix B: letters, digits and `-._*` stay; a space is `+`; every other UTF-8 byte is percent-encoded.
    @Test func theClientIsFormEncodedBeforeBasicEncoding() async throws {
        let clock = Box(Date(timeIntervalSince1970: 1_800_000_000))
        let server = ClientCredentialsServer(clock: clock)
        let grant = ClientCredentialsGrant(
            tokenEndpoint: Self.tokenEndpoint, clientID: "café ü-1._*", clientSecret: "a+b/c=d%e&f")
        let loader = CredentialLoader(scheme: grant, method: .oauth, origins: ["api.example.com"], now: { clock.value })
        _ = await (loader --> server).load(Self.request())
        let token = try #require(server.state.value.tokenRequests.first)
        let expected = BasicCredentials(username: "caf%C3%A9+%C3%BC-1._*", password: "a%2Bb%2Fc%3Dd%25e%26f")
        #expect(token.headers["Authorization"] == expected.authorizationHeaderValue)
    }

    @Test func postAuthenticationPutsTheClientInTheForm() async throws {
        let setup = Setup(authentication: .post)
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        let token = try #require(setup.server.state.value.tokenRequests.first)
        #expect(token.headers["Authorization"] == nil)
        #expect(Self.form(token)["client_id"] == "worker 1" && Self.form(token)["client_secret"] == "s3cr:et")
    }

    @Test func waitingRequestsShareOneTokenAndAnExpiringTokenIsReplacedOnce() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.holdsTokenRequests = true }
        let loads = (0..<16).map { _ in Task { await setup.loader.load(Self.request()) } }
        try await eventually(setup.loader.debugState) {
            setup.loader.waitingCount == 16 && setup.server.state.value.held.count == 1
        }
        setup.server.state.withLock { $0.holdsTokenRequests = false }
        setup.server.release()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(setup.server.tokenRequestCount == 1)
        // Within the refresh window of an hour-long token: one new token, before any request goes out.
        setup.clock.withLock { $0 += 3_600 - 30 }
        let again = (0..<8).map { _ in Task { await setup.loader.load(Self.request()) } }
        for load in again { #expect(try await load.finished().response?.status == .ok) }
        #expect(setup.server.tokenRequestCount == 2)
    }

    @Test func aRejectedTokenIsReplacedAndTheRequestReplayed() async throws {
        let setup = Setup()
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        _ = setup.server.state.withLock { $0.valid.removeValue(forKey: "t-1") }
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        #expect(setup.server.tokenRequestCount == 2)
    }

    @Test func aRefusedClientFailsWithTheServersErrorAndNeverShowsTheSecret() async throws {
        let setup = Setup()
        setup.server.state.withLock { $0.status = .unauthorized }
        let error = try #require(await setup.loader.load(Self.request()).error)
        #expect(error.code == .cannotAuthenticate)
        let reason = try #require(error.underlyingError as? OAuthError)
        #expect(
            reason.code == .tokenRequestFailed && reason.serverErrorCode == "invalid_client" && reason.status == 401)
        var dumped = ""
        dump(setup.loader.scheme, to: &dumped)
        for text in [error.description, error.message, "\(setup.loader.scheme)", dumped] {
            #expect(!text.contains("s3cr"), "\(text)")
        }
    }

    @Test func aResetRevokesTheTokenAndForgetsIt() async throws {
        let setup = Setup(revocation: URL(string: "https://id.example.com/revoke")!)
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        await setup.loader.reset()
        let revoked = setup.server.state.value.revoked
        #expect(revoked.count == 1 && revoked.first?.contains("token=t-1") == true)
        #expect(revoked.first?.contains("token_type_hint=access_token") == true)
        #expect(setup.loader.credential == nil)
        #expect(await setup.loader.load(Self.request()).response?.status == .ok)
        #expect(setup.server.tokenRequestCount == 2)
    }
}

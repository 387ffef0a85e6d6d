import Foundation
import HTTP

@testable import HTTPAuth

/// A controllable "now" for token expiry.
final class TestClock: Sendable {
    private let current = Box(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.value }
    var read: @Sendable () -> Date { { [current] in current.value } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

let issuerURL = URL(string: "https://id.example.com")!
let redirectURI = URL(string: "com.example.app:/oauth/callback")!

func oauthConfiguration(
    endpoints: OAuthConfiguration.Endpoints = .discover(issuer: issuerURL),
    clientSecret: String? = nil,
    scopes: [String] = ["openid", "profile"],
    onInvalidGrant: OAuthConfiguration.InvalidGrantPolicy = .logIn,
    refreshLimit: OAuthConfiguration.RefreshLimit = .standard
) -> OAuthConfiguration {
    OAuthConfiguration(
        endpoints: endpoints,
        clientID: "test-app",
        clientSecret: clientSecret,
        redirectURI: redirectURI,
        scopes: scopes,
        resourceOrigins: ["api.example.com"],
        onInvalidGrant: onInvalidGrant,
        refreshLimit: refreshLimit,
        postLogoutRedirectURI: URL(string: "com.example.app:/logged-out")
    )
}

func apiRequest(_ path: String = "/me", host: String = "api.example.com") -> HTTPRequest {
    var request = HTTPRequest(host: host, path: path)
    request.authenticationMethod = .oauth
    return request
}

/// An authorization server and a resource server in one terminal loader, following RFC 6749, 7636 and 7009
/// and OpenID Connect closely enough to catch a client that does not.
final class FakeAuthorizationServer: HTTPLoader, @unchecked Sendable {
    struct Grant {
        var challenge: String
        var nonce: String?
        var redirectURI: String
    }

    struct State {
        var accessTokens: [String: Date] = [:]
        var refreshTokens: Set<String> = []
        var codes: [String: Grant] = [:]
        var tokenRequests: [HTTPRequest] = []
        var resourceRequests: [HTTPRequest] = []
        var revoked: [String] = []
        var discoveryRequests = 0
        var counter = 0
        var lifetime: TimeInterval = 3_600
        var rotatesRefreshTokens = false
        var issuesRefreshTokens = true
        var nonceOverride: String?
        var rejectsEveryToken = false
        var tokenEndpointStatus: HTTPStatus?
        var heldResources: [String: CheckedContinuation<Void, Never>] = [:]
        var holdsResourcePaths: Set<String> = []
        var tokenGate: [CheckedContinuation<Void, Never>] = []
        var holdsTokenRequests = false
        var resets = 0
    }

    let state = Box(State())
    let clock: TestClock
    let issuer: String

    init(clock: TestClock, issuer: String = "https://id.example.com") {
        self.clock = clock
        self.issuer = issuer
    }

    var tokenRequestCount: Int { state.withLock { $0.tokenRequests.count } }
    var tokenRequests: [HTTPRequest] { state.withLock { $0.tokenRequests } }
    var resourceRequests: [HTTPRequest] { state.withLock { $0.resourceRequests } }

    /// Makes every access token issued so far invalid, as a server-side revocation would.
    func revokeAccessTokens() { state.withLock { $0.accessTokens = [:] } }
    func revokeRefreshTokens() { state.withLock { $0.refreshTokens = [] } }

    /// Lets held token requests through.
    func releaseTokenRequests() {
        let held = state.withLock { state in
            defer {
                state.tokenGate = []
                state.holdsTokenRequests = false
            }
            return state.tokenGate
        }
        for continuation in held { continuation.resume() }
    }

    func releaseResource(_ path: String) {
        state.withLock { $0.heldResources.removeValue(forKey: path) }?.resume()
    }

    /// Waits if `park` parks the continuation (it decides and parks under the lock, so a release that clears
    /// the hold flag and resumes the parked ones cannot slip in between and leave this request waiting).
    private func holdIfAsked(_ park: (inout State, CheckedContinuation<Void, Never>) -> Bool) async {
        await withCheckedContinuation { continuation in
            if !state.withLock({ park(&$0, continuation) }) { continuation.resume() }
        }
    }

    /// What the login page does when the user signs in: records the grant and redirects with a code.
    func signIn(at url: URL, state forcedState: String? = nil, error: String? = nil) -> URL {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let items = components.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        precondition(value("code_challenge_method") == "S256")
        let code = state.withLock { state -> String in
            state.counter += 1
            let code = "code-\(state.counter)"
            state.codes[code] = Grant(
                challenge: value("code_challenge")!, nonce: value("nonce"), redirectURI: value("redirect_uri")!)
            return code
        }
        var callback = URLComponents(string: value("redirect_uri")!)!
        var answer = [URLQueryItem(name: "state", value: forcedState ?? value("state"))]
        if let error {
            answer.append(URLQueryItem(name: "error", value: error))
            answer.append(URLQueryItem(name: "error_description", value: "The user said no"))
        } else {
            answer.append(URLQueryItem(name: "code", value: code))
        }
        callback.queryItems = answer
        return callback.url!
    }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        switch (request.host, request.path) {
        case ("id.example.com", "/.well-known/openid-configuration"):
            state.withLock { $0.discoveryRequests += 1 }
            let document: [String: String] = [
                "issuer": issuer,
                "authorization_endpoint": "https://id.example.com/authorize",
                "token_endpoint": "https://id.example.com/token",
                "revocation_endpoint": "https://id.example.com/revoke",
                "end_session_endpoint": "https://id.example.com/logout",
            ]
            return json(request, document)
        case ("id.example.com", "/token"):
            return await token(request)
        case ("id.example.com", "/revoke"):
            let form = self.form(request)
            state.withLock { state in
                state.revoked.append(form["token"] ?? "")
                state.refreshTokens.remove(form["token"] ?? "")
                state.accessTokens.removeValue(forKey: form["token"] ?? "")
            }
            return .success(HTTPResponse(request: request, status: .ok))
        case ("api.example.com", let path):
            let token = request.headers["Authorization"].flatMap {
                $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil
            }
            await holdIfAsked { state, continuation in
                guard state.holdsResourcePaths.contains(path) else { return false }
                state.heldResources[path] = continuation
                return true
            }
            let valid = state.withLock { state -> Bool in
                state.resourceRequests.append(request)
                guard !state.rejectsEveryToken, let token, let expiry = state.accessTokens[token] else { return false }
                return expiry > clock.now
            }
            return .success(
                HTTPResponse(
                    request: request,
                    status: valid ? .ok : .unauthorized,
                    headers: valid ? [:] : ["WWW-Authenticate": "Bearer error=\"invalid_token\""],
                    body: Data((valid ? "hello" : "no").utf8)
                ))
        default:
            return .success(HTTPResponse(request: request, status: .notFound))
        }
    }

    override func forgetState() async {
        state.withLock { $0.resets += 1 }
    }

    private func token(_ request: HTTPRequest) async -> HTTPResult {
        state.withLock { $0.tokenRequests.append(request) }
        await holdIfAsked { state, continuation in
            guard state.holdsTokenRequests else { return false }
            state.tokenGate.append(continuation)
            return true
        }
        if let status = state.withLock({ $0.tokenEndpointStatus }) {
            return .success(HTTPResponse(request: request, status: status))
        }
        let form = self.form(request)
        let clientID = form["client_id"] ?? basicUser(request)
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], let grant = state.withLock({ $0.codes.removeValue(forKey: code) }) else {
                return tokenError(request, "invalid_grant", "unknown or used code")
            }
            guard let verifier = form["code_verifier"], (try? PKCE(verifier: verifier))?.challenge == grant.challenge
            else {
                return tokenError(request, "invalid_grant", "PKCE verification failed")
            }
            guard form["redirect_uri"] == grant.redirectURI else {
                return tokenError(request, "invalid_grant", "redirect_uri differs")
            }
            return issue(request, clientID: clientID, nonce: grant.nonce, withIDToken: true)
        case "refresh_token":
            guard let refreshToken = form["refresh_token"], state.withLock({ $0.refreshTokens.contains(refreshToken) })
            else {
                return tokenError(request, "invalid_grant", "the refresh token is not valid")
            }
            if state.withLock({ $0.rotatesRefreshTokens }) {
                state.withLock { _ = $0.refreshTokens.remove(refreshToken) }
            }
            return issue(request, clientID: clientID, nonce: nil, withIDToken: false)
        default:
            return tokenError(request, "unsupported_grant_type", nil)
        }
    }

    private func issue(_ request: HTTPRequest, clientID: String?, nonce: String?, withIDToken: Bool) -> HTTPResult {
        let (access, refresh, lifetime, nonceToSend) = state.withLock {
            state -> (String, String?, TimeInterval, String?) in
            state.counter += 1
            let access = "access-\(state.counter)"
            state.accessTokens[access] = clock.now.addingTimeInterval(state.lifetime)
            var refresh: String?
            if state.issuesRefreshTokens && (withIDToken || state.rotatesRefreshTokens) {
                refresh = "refresh-\(state.counter)"
                state.refreshTokens.insert(refresh!)
            }
            return (access, refresh, state.lifetime, state.nonceOverride ?? nonce)
        }
        var body: [String: Any] = ["access_token": access, "token_type": "Bearer", "expires_in": lifetime]
        if let refresh { body["refresh_token"] = refresh }
        if withIDToken {
            // A day: the ID token outlives the stress test's clock jumps between issuing and checking it.
            var claims: [String: Any] = [
                "iss": issuer, "sub": "alice", "aud": clientID ?? "",
                "iat": clock.now.timeIntervalSince1970, "exp": clock.now.timeIntervalSince1970 + 86_400,
            ]
            if let nonceToSend { claims["nonce"] = nonceToSend }
            body["id_token"] = makeJWT(claims)
        }
        return .success(
            HTTPResponse(
                request: request, status: .ok, headers: ["Content-Type": "application/json"],
                body: try! JSONSerialization.data(withJSONObject: body)))
    }

    private func tokenError(_ request: HTTPRequest, _ error: String, _ description: String?) -> HTTPResult {
        var body = ["error": error]
        if let description { body["error_description"] = description }
        return .success(
            HTTPResponse(request: request, status: .badRequest, body: try! JSONSerialization.data(withJSONObject: body))
        )
    }

    private func json(_ request: HTTPRequest, _ object: [String: String]) -> HTTPResult {
        .success(
            HTTPResponse(
                request: request, status: .ok, headers: ["Content-Type": "application/json"],
                body: try! JSONSerialization.data(withJSONObject: object)))
    }

    func form(_ request: HTTPRequest) -> [String: String] {
        guard let body = try? request.body.encode(), let text = String(data: body, encoding: .utf8) else { return [:] }
        var components = URLComponents()
        components.percentEncodedQuery = text.replacingOccurrences(of: "+", with: "%20")
        return Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    private func basicUser(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["Authorization"], header.hasPrefix("Basic "),
            let data = Data(base64Encoded: String(header.dropFirst(6))), let text = String(data: data, encoding: .utf8)
        else { return nil }
        return text.split(separator: ":").first.map(String.init)
    }
}

/// An unsigned JWT with the given claims (the client relies on TLS, not on the signature).
func makeJWT(_ claims: [String: Any]) -> String {
    func encode(_ data: Data) -> String { data.base64URLEncodedString() }
    let header = try! JSONSerialization.data(withJSONObject: ["alg": "none", "typ": "JWT"])
    let payload = try! JSONSerialization.data(withJSONObject: claims)
    return encode(header) + "." + encode(payload) + ".c2ln"
}

/// A delegate that logs in through a fake server's login page, stores credentials in memory, and records
/// what it was asked.
final class OAuthTestDelegate: OAuthDelegate {
    struct State {
        var saved: OAuthCredentials?
        var loginURLs: [URL] = []
        var logoutURLs: [URL] = []
        var logouts: [OAuthLogout] = []
        var deletions = 0
        var saves = 0
        var heldLogins: [CheckedContinuation<Void, Never>] = []
    }

    let state: Box<State>
    /// What the login page answers; `nil` means the user closed it.
    let answer: @Sendable (URL) -> URL?
    /// Holds each login until ``releaseLogins()``, ignoring cancellation as a careless delegate would.
    let holdsLogins: Bool

    init(saved: OAuthCredentials? = nil, holdsLogins: Bool = false, answer: @escaping @Sendable (URL) -> URL?) {
        state = Box(State(saved: saved))
        self.holdsLogins = holdsLogins
        self.answer = answer
    }

    convenience init(server: FakeAuthorizationServer, saved: OAuthCredentials? = nil, holdsLogins: Bool = false) {
        self.init(saved: saved, holdsLogins: holdsLogins) { server.signIn(at: $0) }
    }

    var loginCount: Int { state.withLock { $0.loginURLs.count } }
    var heldLoginCount: Int { state.withLock { $0.heldLogins.count } }

    func releaseLogins() {
        for continuation in state.withLock({ state in
            defer { state.heldLogins = [] }; return state.heldLogins
        }) {
            continuation.resume()
        }
    }

    func savedCredentials(for loader: OAuth) async throws -> OAuthCredentials? { state.withLock { $0.saved } }

    func save(_ credentials: OAuthCredentials, for loader: OAuth) async throws {
        state.withLock {
            $0.saved = credentials
            $0.saves += 1
        }
    }

    func deleteCredentials(for loader: OAuth) async throws {
        state.withLock {
            $0.saved = nil
            $0.deletions += 1
        }
    }

    func logIn(at url: URL, for loader: OAuth) async -> URL? {
        state.withLock { $0.loginURLs.append(url) }
        if holdsLogins {
            await withCheckedContinuation { continuation in state.withLock { $0.heldLogins.append(continuation) } }
        }
        return answer(url)
    }

    func logOut(at url: URL, for loader: OAuth) async {
        state.withLock { $0.logoutURLs.append(url) }
    }

    func didLogOut(_ logout: OAuthLogout, for loader: OAuth) async {
        state.withLock { $0.logouts.append(logout) }
    }
}

extension URL {
    func queryValue(_ name: String) -> String? {
        URLComponents(url: self, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }
}

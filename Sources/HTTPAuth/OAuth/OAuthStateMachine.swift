import Foundation
import HTTP

/// One run of the ``OAuth`` loader's authorization flow, as a sequence of states (the series' part 15).
///
/// ```
/// GetSavedCredentials ─ valid ─────────────────────────────────────────┐
///        │ expiring, has refresh token ─→ RefreshTokens ─ ok ─────────┤
///        │ none                               │ invalid_grant          │
///        ▼                                    ▼                        ▼
///      LogIn ─ callback, state matches ─→ GetTokens ─ ok ──────────→ Done
///
/// reset (any state) ─→ LogOut: revoke, delete saved credentials, end the session ─→ Done
/// ```
///
/// `Discovery` runs before the first state that needs the server's endpoints, when the configuration names
/// an issuer instead of endpoints; its result is kept for later flows.
///
/// The loader runs one flow at a time. Each state checks for cancellation when it starts, and the waits a
/// state makes on the user (the login page) stop waiting at once when cancelled: ``OAuth/reset()`` cancels
/// the flow and runs `LogOut`.
public final class OAuthStateMachine: Sendable {
    /// A state of the flow.
    public enum State: String, Sendable, Hashable, CustomStringConvertible {
        /// Fetching the provider's discovery document.
        case discovery
        /// Reading credentials saved by an earlier session.
        case getSavedCredentials
        /// Showing the login page and waiting for its callback.
        case logIn
        /// Exchanging the authorization code for tokens.
        case getTokens
        /// Exchanging the refresh token for new tokens.
        case refreshTokens
        /// Revoking tokens, deleting saved credentials, ending the provider's session.
        case logOut
        /// Finished.
        case done

        public var description: String { rawValue }
    }

    /// How a run ended.
    enum Outcome: Sendable {
        case authorized(OAuthCredentials, OAuthSessionState)
        /// Failed; `deletedCredentials` when the flow threw the credentials away (the server rejected them).
        case failed(OAuthError, deletedCredentials: Bool)
        case loggedOut(OAuthError?)
        case interrupted
    }

    /// What a login sent, to check the callback and redeem its code.
    private struct PendingLogin: Sendable {
        var pkce: PKCE
        var state: String
        var nonce: String?
        var code: String?
    }

    private let loader: OAuth
    private let states = Locked<[State]>([])

    init(loader: OAuth) {
        self.loader = loader
    }

    /// The states this run has entered so far, in order.
    public var path: [State] { states.value }

    private func enter(_ state: State) {
        states.withLock { $0.append(state) }
    }

    private var configuration: OAuthConfiguration { loader.configuration }

    // MARK: - Running

    /// Runs from `start` until `Done`, or until cancelled (``Outcome/interrupted``) — except `LogOut`, which
    /// is what a reset runs, and is not interrupted.
    func run(from start: State, credentials initial: OAuthCredentials?) async -> Outcome {
        var state = start
        var credentials = initial
        var login: PendingLogin?
        var deletedCredentials = false
        var result: OAuthSessionState = .loggedIn
        while true {
            if state != .logOut, state != .done, Task.isCancelled { return .interrupted }
            do throws(OAuthError) {
                if state == .logIn || state == .getTokens || state == .refreshTokens {
                    _ = try await endpoints()  // Discovery first, when the endpoints are not known yet
                }
                enter(state)
                switch state {
                case .discovery, .done:
                    // Discovery is entered by `endpoints()`; Done is where every successful path ends.
                    guard let credentials else { return .loggedOut(nil) }
                    return .authorized(credentials, result)

                case .getSavedCredentials:
                    let saved = await loader.loadSavedCredentials()
                    guard let saved else {
                        state = .logIn
                        continue
                    }
                    credentials = saved
                    result = .loggedIn
                    if !loader.needsRefresh(saved) {
                        state = .done
                    } else {
                        state = saved.refreshToken == nil ? .logIn : .refreshTokens
                    }

                case .logIn:
                    login = try await logIn()
                    if login == nil { return .interrupted }
                    state = .getTokens

                case .getTokens:
                    guard let pending = login, let code = pending.code else {
                        throw .invalidCallback("no authorization code to redeem")
                    }
                    let new = try await redeem(code: code, login: pending)
                    credentials = new
                    result = .loggedIn
                    await loader.saveCredentials(new)
                    // A token dead on arrival is never handed to the waiting requests.
                    guard loader.needsRefresh(new) else {
                        state = .done
                        continue
                    }
                    guard new.refreshToken != nil else { throw Self.deadOnArrival(new) }
                    state = .refreshTokens

                case .refreshTokens:
                    guard let current = credentials, let refreshToken = current.refreshToken else {
                        state = .logIn
                        continue
                    }
                    try loader.checkRefreshLimit()
                    do throws(OAuthError) {
                        let new = try await refresh(current, refreshToken: refreshToken)
                        loader.recordRefresh()
                        credentials = new
                        result = .refreshed
                        await loader.saveCredentials(new)
                        // A token dead on arrival is refreshed again, not handed out: the refresh limit ends a
                        // server that keeps issuing them before any request goes out with one.
                        state = loader.needsRefresh(new) ? .refreshTokens : .done
                    } catch .tokenRequestFailed(_, "invalid_grant", let description) {
                        credentials = nil
                        deletedCredentials = true
                        _ = await loader.deleteSavedCredentials()
                        switch configuration.onInvalidGrant {
                        case .logIn: state = .logIn
                        case .fail: throw .refreshRejected(description: description)
                        }
                    }

                case .logOut:
                    let problem = await logOut(credentials)
                    return .loggedOut(problem)
                }
            } catch {
                if Task.isCancelled { return .interrupted }
                return .failed(error, deletedCredentials: deletedCredentials)
            }
        }
    }

    /// The failure of a login whose token expires (or must be refreshed) the moment it arrives.
    private static func deadOnArrival(_ credentials: OAuthCredentials) -> OAuthError {
        .invalidTokenResponse(
            "the token endpoint issued an access token that is already expired or due for refresh (expires "
                + "\(credentials.expirationDate.map { "\($0)" } ?? "never")) and no refresh token")
    }

    // MARK: - Discovery

    /// The server's endpoints, discovering them first when needed.
    private func endpoints() async throws(OAuthError) -> OAuthEndpoints {
        if let known = loader.knownEndpoints { return known }
        guard case .discover(let issuer) = configuration.endpoints else {
            preconditionFailure("known endpoints are always cached")
        }
        enter(.discovery)
        let url = issuer.appending(path: ".well-known/openid-configuration")
        var request = HTTPRequest(url: url, headers: ["Accept": "application/json"])
        request.markAsAuthorizationServerTraffic()
        let response: HTTPResponse
        switch await send(request, interruptibly: true) {
        case .failure(let error): throw .discoveryFailed("GET \(url.absoluteString): \(error.message)")
        case .success(let answer): response = answer
        }
        guard response.status.isSuccess else {
            throw .discoveryFailed("GET \(url.absoluteString) answered \(response.status.rawValue)")
        }
        let endpoints: OAuthEndpoints
        do {
            endpoints = try JSONDecoder().decode(OAuthEndpoints.self, from: response.body)
        } catch {
            throw .discoveryFailed("\(url.absoluteString) is not a discovery document: \(error)")
        }
        // OpenID Connect Discovery 1.0 §4.3: the issuer in the document must be the one asked.
        if let issuerInDocument = endpoints.issuer,
            Self.trimmingSlash(issuerInDocument) != Self.trimmingSlash(issuer.absoluteString)
        {
            throw .discoveryFailed(
                "the document at \(url.absoluteString) names the issuer \(issuerInDocument), not \(issuer.absoluteString)"
            )
        }
        loader.cache(endpoints)
        return endpoints
    }

    private static func trimmingSlash(_ text: String) -> Substring {
        text.last == "/" ? text.dropLast() : Substring(text)
    }

    // MARK: - Login

    /// Shows the login page and checks its callback. `nil` when interrupted.
    private func logIn() async throws(OAuthError) -> PendingLogin? {
        let endpoints = try await endpoints()
        guard let delegate = loader.delegate else { throw .noDelegate }
        let wantsIDToken = configuration.scopes.contains("openid")
        var login = PendingLogin(
            pkce: PKCE(),
            state: Self.randomToken(),
            nonce: wantsIDToken ? Self.randomToken() : nil
        )
        let url = authorizationURL(endpoints.authorization, login: login)
        let loader = self.loader
        let answer = await interruptible { await delegate.logIn(at: url, for: loader) }
        guard let answer else { return nil }  // interrupted
        guard let callback = answer else { throw .loginCancelled }
        login.code = try code(from: callback, expectedState: login.state)
        return login
    }

    private func authorizationURL(_ endpoint: URL, login: PendingLogin) -> URL {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: true) ?? URLComponents()
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: configuration.clientID),
            URLQueryItem(name: "redirect_uri", value: configuration.redirectURI.absoluteString),
            URLQueryItem(name: "scope", value: configuration.scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: login.state),
            URLQueryItem(name: "code_challenge", value: login.pkce.challenge),
            URLQueryItem(name: "code_challenge_method", value: PKCE.method),
        ]
        if let nonce = login.nonce { items.append(URLQueryItem(name: "nonce", value: nonce)) }
        items += configuration.additionalAuthorizationParameters
        components.queryItems = items
        // `+` is legal in a query but form decoders read it as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url ?? endpoint
    }

    /// The code in a callback URL, after checking that it answers this login (RFC 6749 §4.1.2, §10.12).
    private func code(from callback: URL, expectedState: String) throws(OAuthError) -> String {
        guard let components = URLComponents(url: callback, resolvingAgainstBaseURL: true) else {
            throw .invalidCallback("the callback is not a URL")
        }
        let redirect = URLComponents(url: configuration.redirectURI, resolvingAgainstBaseURL: true)
        guard components.scheme?.lowercased() == redirect?.scheme?.lowercased(),
            components.host?.lowercased() == redirect?.host?.lowercased(),
            components.port == redirect?.port,
            components.path == redirect?.path
        else {
            throw .invalidCallback(
                "the callback is not for the redirect URI \(configuration.redirectURI.absoluteString)")
        }
        let items = components.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        // The state is checked first, also for errors: an error callback from someone else's login is forged.
        guard value("state") == expectedState else { throw .stateMismatch }
        if let error = value("error") {
            throw .authorizationDenied(error: error, description: value("error_description"))
        }
        guard let code = value("code"), !code.isEmpty else {
            throw .invalidCallback("the callback has neither a code nor an error")
        }
        return code
    }

    // MARK: - Tokens

    private func redeem(code: String, login: PendingLogin) async throws(OAuthError) -> OAuthCredentials {
        let endpoints = try await endpoints()
        let (body, receivedAt, serverDate) = try await tokenRequest(
            endpoints.token,
            fields: [
                URLQueryItem(name: "grant_type", value: "authorization_code"),
                URLQueryItem(name: "code", value: code),
                URLQueryItem(name: "redirect_uri", value: configuration.redirectURI.absoluteString),
                URLQueryItem(name: "code_verifier", value: login.pkce.verifier),
            ]
        )
        let credentials = try OAuthCredentials(tokenResponse: body, receivedAt: receivedAt, serverDate: serverDate)
        try validateIDToken(of: credentials, endpoints: endpoints, nonce: login.nonce, required: login.nonce != nil)
        return credentials
    }

    private func refresh(
        _ current: OAuthCredentials, refreshToken: String
    ) async throws(OAuthError)
        -> OAuthCredentials
    {
        let endpoints = try await endpoints()
        let (body, receivedAt, serverDate) = try await tokenRequest(
            endpoints.token,
            fields: [
                URLQueryItem(name: "grant_type", value: "refresh_token"),
                URLQueryItem(name: "refresh_token", value: refreshToken),
            ]
        )
        let credentials = try OAuthCredentials(
            tokenResponse: body, receivedAt: receivedAt, serverDate: serverDate, previous: current)
        // A refresh may return a new ID token; it has no nonce (OpenID Connect Core 12.2).
        if credentials.idToken != current.idToken {
            try validateIDToken(of: credentials, endpoints: endpoints, nonce: nil, required: false)
        }
        return credentials
    }

    private func validateIDToken(
        of credentials: OAuthCredentials,
        endpoints: OAuthEndpoints,
        nonce: String?,
        required: Bool
    ) throws(OAuthError) {
        guard let idToken = credentials.idToken else {
            if required { throw .invalidIDToken("the scope includes openid but the token response has no id_token") }
            return
        }
        let claims = try IDTokenClaims(jwt: idToken)
        try claims.validate(
            issuer: endpoints.issuer ?? claims.issuer,
            clientID: configuration.clientID,
            nonce: nonce,
            now: credentials.serverTime(at: loader.now()),
            allowedSkew: configuration.allowedClockSkew,
            maximumAge: configuration.idTokenMaximumAge
        )
    }

    /// Posts a token request and returns the successful response's body, when it arrived, and its `Date`.
    private func tokenRequest(
        _ endpoint: URL, fields: [URLQueryItem]
    ) async throws(OAuthError) -> (Data, Date, Date?) {
        let response = try await post(fields, to: endpoint, what: "token endpoint")
        guard response.status.isSuccess else {
            let problem = try? JSONDecoder().decode(TokenErrorResponse.self, from: response.body)
            throw .tokenRequestFailed(
                status: response.status.rawValue,
                error: problem?.error,
                description: problem?.errorDescription
            )
        }
        let receivedAt = loader.now()
        let serverDate = response.headers["Date"].flatMap { RetryAfter.httpDate($0, now: receivedAt) }
        return (response.body, receivedAt, serverDate)
    }

    /// An error response from the token endpoint (RFC 6749 §5.2).
    private struct TokenErrorResponse: Decodable {
        var error: String
        var errorDescription: String?

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
    }

    /// Posts a form to one of the server's endpoints, authenticating the client (RFC 6749 §2.3.1): HTTP Basic
    /// with the secret for a confidential client, `client_id` in the form for a public one.
    private func post(
        _ fields: [URLQueryItem],
        to endpoint: URL,
        what: String,
        interruptibly: Bool = true,
        partOfReset: Bool = false
    ) async throws(OAuthError) -> HTTPResponse {
        var fields = fields
        var headers: HTTPHeaders = ["Accept": "application/json"]
        if let secret = configuration.clientSecret {
            let credentials = BasicCredentials(
                username: Self.formEncoded(configuration.clientID),
                password: Self.formEncoded(secret)
            )
            headers["Authorization"] = credentials.authorizationHeaderValue
        } else {
            fields.append(URLQueryItem(name: "client_id", value: configuration.clientID))
        }
        var request = HTTPRequest(method: .post, url: endpoint, headers: headers, body: FormBody(fields))
        request.markAsAuthorizationServerTraffic()
        request.isPartOfReset = partOfReset
        switch await send(request, interruptibly: interruptibly) {
        case .success(let response): return response
        case .failure(let error):
            throw .endpointUnreachable("POST \(endpoint.absoluteString) (\(what)): \(error.code): \(error.message)")
        }
    }

    /// `application/x-www-form-urlencoded` encoding of a client credential, as RFC 6749 §2.3.1 requires
    /// before Basic encoding.
    private static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text)
    }

    // MARK: - Logout

    /// Revokes the tokens, deletes the saved credentials, and ends the provider's session. Returns the first
    /// problem, if any; every step is attempted regardless.
    private func logOut(_ credentials: OAuthCredentials?) async -> OAuthError? {
        var problem: OAuthError?
        let credentials: OAuthCredentials? =
            if let credentials { credentials } else { await loader.loadSavedCredentials() }
        let endpoints: OAuthEndpoints? =
            if credentials == nil { loader.knownEndpoints } else { try? await self.endpoints() }
        if let credentials, let revocation = endpoints?.revocation {
            // RFC 7009 §2.1: revoking the refresh token is the one that matters; the access token too where the
            // server supports it.
            let tokens = [
                credentials.refreshToken.map { ($0, "refresh_token") }, (credentials.accessToken, "access_token"),
            ]
            for case let (token, hint)? in tokens {
                do {
                    let response = try await post(
                        [
                            URLQueryItem(name: "token", value: token),
                            URLQueryItem(name: "token_type_hint", value: hint),
                        ],
                        to: revocation,
                        what: "revocation endpoint",
                        interruptibly: false,
                        partOfReset: true
                    )
                    if !response.status.isSuccess, problem == nil {
                        problem = .tokenRequestFailed(status: response.status.rawValue, error: nil, description: nil)
                    }
                } catch {
                    problem = problem ?? error
                }
            }
        }
        if let error = await loader.deleteSavedCredentials() { problem = problem ?? error }
        if let endSession = endpoints?.endSession, let delegate = loader.delegate {
            await delegate.logOut(at: endSessionURL(endSession, idToken: credentials?.idToken), for: loader)
        }
        enter(.done)
        return problem
    }

    private func endSessionURL(_ endpoint: URL, idToken: String?) -> URL {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: true) ?? URLComponents()
        var items = components.queryItems ?? []
        if let idToken { items.append(URLQueryItem(name: "id_token_hint", value: idToken)) }
        items.append(URLQueryItem(name: "client_id", value: configuration.clientID))
        if let redirect = configuration.postLogoutRedirectURI {
            items.append(URLQueryItem(name: "post_logout_redirect_uri", value: redirect.absoluteString))
        }
        components.queryItems = items
        return components.url ?? endpoint
    }

    // MARK: - Helpers

    /// Sends one of the flow's requests down the chain. Interruptibly: a reset stops the wait at once, even
    /// when the loaders below do not honour cancellation promptly, so a late answer cannot outlive the flow.
    private func send(_ request: HTTPRequest, interruptibly: Bool) async -> HTTPResult {
        guard interruptibly else { return await loader.sendDownstream(request) }
        let loader = self.loader
        let result = await interruptible { await loader.sendDownstream(request) }
        return result
            ?? .failure(HTTPError(.cancelled, request: request, message: "the authorization flow was interrupted"))
    }

    /// 32 random bytes, base64url: for `state` and `nonce`.
    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64URLEncodedString()
    }
}

/// Runs `operation` in a task of its own and returns its result — or `nil` as soon as the calling task is
/// cancelled, without waiting for `operation` (which is cancelled too). For waits on the user, which a
/// delegate might not end promptly when cancelled.
func interruptible<Value: Sendable>(_ operation: @escaping @Sendable () async -> Value) async -> Value? {
    // The value is handed over under the lock rather than through the continuation: when `operation` finishes
    // before this task has suspended, the continuation resumes it without a job switch, a hand-over that
    // ThreadSanitizer cannot see (it reported the value's fields as racing); the mutex it can.
    let handover = Locked<(waiter: CheckedContinuation<Void, Never>?, value: Value?)>((nil, nil))
    let worker = Locked<Task<Void, Never>?>(nil)
    let finish: @Sendable (Value?) -> Void = { value in
        handover.withLock { handover -> CheckedContinuation<Void, Never>? in
            guard let waiter = handover.waiter else { return nil }
            handover.waiter = nil
            handover.value = value
            return waiter
        }?.resume()
    }
    await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            handover.withLock { $0.waiter = continuation }
            let task = Task { finish(await operation()) }
            worker.withLock { $0 = task }
            if Task.isCancelled {
                task.cancel()
                finish(nil)
            }
        }
    } onCancel: {
        worker.value?.cancel()
        finish(nil)
    }
    return handover.withLock { $0.value }
}

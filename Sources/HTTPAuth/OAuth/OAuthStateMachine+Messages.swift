import Foundation
import HTTP

/// The messages the flow exchanges with the authorization server, written and read without I/O: the requests the
/// machine asks its driver to send, the URLs of the login and logout pages, and what their answers mean.
extension OAuthStateMachine {
    // MARK: - Discovery

    /// The documents discovery asks for, in order: OpenID Connect discovery (`<issuer>/.well-known/openid-configuration`,
    /// OpenID Connect Discovery 1.0 §4), then the OAuth authorization-server metadata (RFC 8414 §3:
    /// `/.well-known/oauth-authorization-server` inserted before the issuer's path). Empty for known endpoints.
    var discoveryURLs: [URL] {
        guard case .discover(let issuer) = configuration.endpoints else { return [] }
        var openID = issuer
        openID.append(path: ".well-known/openid-configuration")
        var metadata = URLComponents(url: issuer, resolvingAgainstBaseURL: true) ?? URLComponents()
        let path = metadata.path.hasSuffix("/") ? String(metadata.path.dropLast()) : metadata.path
        metadata.path = "/.well-known/oauth-authorization-server" + path
        metadata.query = nil
        metadata.fragment = nil
        return [openID] + (metadata.url.map { [$0] } ?? [])
    }

    /// `GET` the discovery document at `url`.
    func discoveryRequest(_ url: URL) -> HTTPRequest {
        var request = HTTPRequest(url: url, headers: ["Accept": "application/json"])
        request.markAsAuthorizationServerTraffic()
        return request
    }

    /// The endpoints in the discovery document at `url`, checked against the issuer asked (OpenID Connect Discovery
    /// 1.0 §4.3, RFC 8414 §3.3).
    func discoveredEndpoints(from result: HTTPResult, at url: URL) throws(OAuthError) -> OAuthEndpoints {
        let url = url.absoluteString
        let response: HTTPResponse
        switch result {
        case .failure(let error): throw .discoveryFailed("GET \(url): \(error.message)")
        case .success(let answer): response = answer
        }
        guard response.status.isSuccess else {
            throw .discoveryFailed("GET \(url) answered \(response.status.rawValue)")
        }
        let endpoints: OAuthEndpoints
        do {
            endpoints = try JSONDecoder().decode(OAuthEndpoints.self, from: response.body)
        } catch {
            throw .discoveryFailed("\(url) is not a discovery document: \(error)")
        }
        if case .discover(let issuer) = configuration.endpoints, let issuerInDocument = endpoints.issuer,
            Self.trimmingSlash(issuerInDocument) != Self.trimmingSlash(issuer.absoluteString)
        {
            throw .discoveryFailed(
                "the document at \(url) names the issuer \(issuerInDocument), not \(issuer.absoluteString)")
        }
        return endpoints
    }

    private static func trimmingSlash(_ text: String) -> Substring {
        text.last == "/" ? text.dropLast() : Substring(text)
    }

    // MARK: - Login

    /// The login page: an authorization request with PKCE, `state` and, for OpenID Connect, `nonce`.
    func authorizationURL(_ endpoint: URL, secrets: LoginSecrets) -> URL {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: true) ?? URLComponents()
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: configuration.clientID),
            URLQueryItem(name: "redirect_uri", value: configuration.redirectURI.absoluteString),
            URLQueryItem(name: "scope", value: configuration.scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: secrets.state),
            URLQueryItem(name: "code_challenge", value: secrets.pkce.challenge),
            URLQueryItem(name: "code_challenge_method", value: PKCE.method),
        ]
        if let nonce = secrets.nonce { items.append(URLQueryItem(name: "nonce", value: nonce)) }
        items += configuration.additionalAuthorizationParameters
        components.queryItems = items
        // `+` is legal in a query but form decoders read it as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url ?? endpoint
    }

    /// The code in a callback URL, after checking that it answers this login (RFC 6749 §4.1.2, §10.12).
    func code(from callback: URL, expectedState: String) throws(OAuthError) -> String {
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

    /// The token request that redeems a login's code with its PKCE verifier.
    func codeRedemption(_ code: String, secrets: LoginSecrets) throws(OAuthError) -> HTTPRequest {
        tokenRequest(
            [
                URLQueryItem(name: "grant_type", value: "authorization_code"),
                URLQueryItem(name: "code", value: code),
                URLQueryItem(name: "redirect_uri", value: configuration.redirectURI.absoluteString),
                URLQueryItem(name: "code_verifier", value: secrets.pkce.verifier),
            ],
            to: try knownEndpoints().token
        )
    }

    /// The token request that exchanges a refresh token.
    func refreshRequest(_ refreshToken: String, endpoint: URL) -> HTTPRequest {
        tokenRequest(
            [
                URLQueryItem(name: "grant_type", value: "refresh_token"),
                URLQueryItem(name: "refresh_token", value: refreshToken),
            ],
            to: endpoint
        )
    }

    /// A revocation request (RFC 7009), sent as part of the reset: the loaders below let it through.
    func revocationRequest(_ token: String, hint: String, endpoint: URL) -> HTTPRequest {
        var request = tokenRequest(
            [URLQueryItem(name: "token", value: token), URLQueryItem(name: "token_type_hint", value: hint)],
            to: endpoint
        )
        request.isPartOfReset = true
        return request
    }

    /// What went wrong with a revocation, if anything.
    func problem(ofRevocation result: HTTPResult) -> OAuthError? {
        switch result {
        case .success(let response) where response.status.isSuccess:
            return nil
        case .success(let response):
            return .tokenRequestFailed(status: response.status.rawValue, error: nil, description: nil)
        case .failure(let error):
            let endpoint = error.request.url?.absoluteString ?? "?"
            return .endpointUnreachable("POST \(endpoint) (revocation endpoint): \(error.code): \(error.message)")
        }
    }

    /// The credentials in a token response received at `now`, replacing `current` (a refresh) or none (a login,
    /// whose ID token must carry `nonce`).
    func credentials(
        fromTokenResponse result: HTTPResult, replacing current: OAuthCredentials?, nonce: String?, at now: Date
    ) throws(OAuthError) -> OAuthCredentials {
        let endpoints = try knownEndpoints()
        let response = try TokenEndpoint.successfulResponse(result, from: endpoints.token)
        let serverDate = response.headers["Date"].flatMap { RetryAfter.httpDate($0, now: now) }
        let credentials = try OAuthCredentials(
            tokenResponse: response.body, receivedAt: now, serverDate: serverDate, previous: current)
        // A refresh may return a new ID token; it has no nonce (OpenID Connect Core 12.2).
        if let current, credentials.idToken == current.idToken { return credentials }
        try validateIDToken(of: credentials, endpoints: endpoints, nonce: nonce, at: now)
        return credentials
    }

    private func validateIDToken(
        of credentials: OAuthCredentials, endpoints: OAuthEndpoints, nonce: String?, at now: Date
    ) throws(OAuthError) {
        guard let idToken = credentials.idToken else {
            if nonce != nil {
                throw .invalidIDToken("the scope includes openid but the token response has no id_token")
            }
            return
        }
        let claims = try IDTokenClaims(jwt: idToken)
        try claims.validate(
            issuer: endpoints.issuer ?? claims.issuer,
            clientID: configuration.clientID,
            nonce: nonce,
            now: credentials.serverTime(at: now),
            allowedSkew: configuration.allowedClockSkew,
            maximumAge: configuration.idTokenMaximumAge
        )
    }

    /// The failure of a login whose token expires (or must be refreshed) the moment it arrives.
    static func deadOnArrival(_ credentials: OAuthCredentials) -> OAuthError {
        .invalidTokenResponse(
            "the token endpoint issued an access token that is already expired or due for refresh (expires "
                + "\(credentials.expirationDate.map { "\($0)" } ?? "never")) and no refresh token")
    }

    private func knownEndpoints() throws(OAuthError) -> OAuthEndpoints {
        guard let endpoints else { throw .discoveryFailed("the authorization server's endpoints are not known") }
        return endpoints
    }

    /// A form posted to one of the server's endpoints, authenticating the client (RFC 6749 §2.3.1): HTTP Basic
    /// with the secret for a confidential client, `client_id` in the form for a public one.
    private func tokenRequest(_ fields: [URLQueryItem], to endpoint: URL) -> HTTPRequest {
        TokenEndpoint.request(
            fields, to: endpoint, clientID: configuration.clientID, clientSecret: configuration.clientSecret)
    }

    // MARK: - Logout

    /// The provider's end-session page (OpenID Connect RP-Initiated Logout).
    func endSessionURL(_ endpoint: URL, idToken: String?) -> URL {
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
}

// MARK: - The loader's own traffic

/// Marks requests that an authentication loader sends for itself (discovery, tokens, revocation).
enum AuthorizationServerTraffic: HTTPRequestOption {
    static let defaultOptionValue = false
}

extension HTTPRequest {
    /// Whether an authentication loader sent this request for itself.
    var isAuthorizationServerTraffic: Bool { self[option: AuthorizationServerTraffic.self] }

    /// Marks the request as an authentication loader's own: unauthenticated, not throttled, and let through
    /// by ``Auth`` while it resets (a logout's revocation request).
    mutating func markAsAuthorizationServerTraffic() {
        self[option: AuthorizationServerTraffic.self] = true
        authenticationMethod = nil
        throttle = .never
    }
}

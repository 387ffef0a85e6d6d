public import Foundation
public import HTTP

/// The OAuth 2 client credentials grant (RFC 6749 §4.4) as a ``CredentialScheme``: for a server, a worker or a
/// command-line tool that calls an API on its own behalf, with no user and no browser.
///
/// ```swift
/// let service = CredentialLoader(
///     scheme: ClientCredentialsGrant(
///         tokenEndpoint: URL(string: "https://id.example.com/oauth2/token")!,
///         clientID: "reports-worker", clientSecret: secret, scopes: ["reports.read"]),
///     method: .oauth, origins: ["api.example.com"])
/// let chain = service --> Retry() --> URLSessionLoader()
/// ```
///
/// The first request that needs a token fetches one — one token request however many requests wait for it — and
/// every request goes out with `Authorization: Bearer …`. A token is fetched again, once, before it expires (within
/// ``refreshWindow``, or half its lifetime if that is sooner), and when the API answers `401` for it; no refresh token is
/// expected (RFC 6749 §4.4.3), and one the server sends anyway is not used. A reset revokes the token where a
/// ``revocationEndpoint`` is given (RFC 7009) and forgets it. ``CredentialLoader`` gives all of this its single flight,
/// origin binding, refusal limit and reset protocol.
///
/// The client authenticates with its secret as ``ClientAuthentication/basic`` (`client_secret_basic`, the default and
/// what servers must support) or ``ClientAuthentication/post`` (`client_secret_post`). The secret never appears in a
/// message, a description or a log: the token request's `Authorization` and form field are redacted by the standard
/// redaction.
public struct ClientCredentialsGrant: CredentialScheme, Sendable {
    /// How the client authenticates at the token endpoint (RFC 6749 §2.3.1): ``basic`` or ``post``.
    ///
    /// A struct rather than an enum, so that more methods (`private_key_jwt`, `tls_client_auth`) can be added
    /// without breaking code that switches over these.
    public struct ClientAuthentication: Sendable, Hashable, CustomStringConvertible {
        enum Code: Sendable, Hashable {
            case basic, post
        }

        let code: Code

        /// `client_secret_basic`: HTTP Basic with the form-encoded client ID and secret.
        public static let basic = ClientAuthentication(code: .basic)
        /// `client_secret_post`: `client_id` and `client_secret` in the form.
        public static let post = ClientAuthentication(code: .post)

        /// The method's name at the token endpoint: `client_secret_basic` or `client_secret_post`.
        public var description: String {
            switch code {
            case .basic: "client_secret_basic"
            case .post: "client_secret_post"
            }
        }
    }

    /// The authorization server's token endpoint.
    public var tokenEndpoint: URL
    /// The client identifier.
    public var clientID: String
    /// The client secret. Never shown.
    public var clientSecret: String
    /// How the secret is sent; ``ClientAuthentication/basic`` by default.
    public var authentication: ClientAuthentication
    /// Scopes to ask for (`scope`); none by default, the server's default scopes.
    public var scopes: [String]
    /// The resources the token is for (RFC 8707 `resource`, one parameter each); none by default.
    public var resources: [URL]
    /// Fetch a new token this long before the current one expires, or when half its lifetime is left if that is
    /// sooner; 60 s by default.
    public var refreshWindow: Duration
    /// Where a reset revokes the token (RFC 7009); without one, a reset only forgets it.
    public var revocationEndpoint: URL?

    /// - Parameters:
    ///   - tokenEndpoint: The token endpoint.
    ///   - clientID: The client identifier.
    ///   - clientSecret: The client secret.
    ///   - authentication: `client_secret_basic` (the default) or `client_secret_post`.
    ///   - scopes: Scopes to ask for.
    ///   - resources: RFC 8707 resource indicators.
    ///   - refreshWindow: How long before expiry to fetch a new token; 60 s by default.
    ///   - revocationEndpoint: Where a reset revokes the token, if the server has one.
    public init(
        tokenEndpoint: URL,
        clientID: String,
        clientSecret: String,
        authentication: ClientAuthentication = .basic,
        scopes: [String] = [],
        resources: [URL] = [],
        refreshWindow: Duration = .seconds(60),
        revocationEndpoint: URL? = nil
    ) {
        self.tokenEndpoint = tokenEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authentication = authentication
        self.scopes = scopes
        self.resources = resources
        self.refreshWindow = refreshWindow
        self.revocationEndpoint = revocationEndpoint
    }

    public var credentialName: String { "the client-credentials access token" }

    /// Fetches a token: `grant_type=client_credentials`, with the scopes and resources. Fails with an ``OAuthError``:
    /// ``OAuthError/Code/endpointUnreachable``, ``OAuthError/Code/tokenRequestFailed`` (the server's `error`, such as
    /// `invalid_client`), or ``OAuthError/Code/invalidTokenResponse``.
    public func obtainCredential(_ context: CredentialContext) async throws -> OAuthCredentials {
        var fields = [URLQueryItem(name: "grant_type", value: "client_credentials")]
        if !scopes.isEmpty { fields.append(URLQueryItem(name: "scope", value: scopes.joined(separator: " "))) }
        fields += resources.map { URLQueryItem(name: "resource", value: $0.absoluteString) }
        let response = try TokenEndpoint.successfulResponse(
            await context.send(clientRequest(fields, to: tokenEndpoint)), from: tokenEndpoint)
        let serverDate = response.headers["Date"].flatMap { RetryAfter.httpDate($0, now: context.now) }
        var credentials = try OAuthCredentials(
            tokenResponse: response.body, receivedAt: context.now, serverDate: serverDate)
        credentials.refreshToken = nil  // not expected (RFC 6749 §4.4.3), and never used
        return credentials
    }

    /// Whether `credentials` expire within the refresh window (or half their lifetime) at `now`.
    public func needsRefresh(_ credentials: OAuthCredentials, at now: Date) -> Bool {
        OAuthStateMachine.refreshDeadline(of: credentials, window: refreshWindow).map { now >= $0 } ?? false
    }

    /// Sets `Authorization: Bearer …`.
    public func authenticate(_ request: inout HTTPRequest, with credentials: OAuthCredentials) {
        request.headers["Authorization"] = credentials.authorizationHeaderValue
    }

    /// Revokes the access token at ``revocationEndpoint``, if there is one (RFC 7009); a failure changes nothing:
    /// the loader forgets the token either way.
    public func forgetCredential(_ credentials: OAuthCredentials?, _ context: CredentialContext) async {
        guard let credentials, let revocationEndpoint else { return }
        let fields = [
            URLQueryItem(name: "token", value: credentials.accessToken),
            URLQueryItem(name: "token_type_hint", value: "access_token"),
        ]
        _ = await context.send(clientRequest(fields, to: revocationEndpoint))
    }

    /// A form posted to `endpoint`, the client authenticated as ``authentication`` says.
    private func clientRequest(_ fields: [URLQueryItem], to endpoint: URL) -> HTTPRequest {
        TokenEndpoint.request(
            fields, to: endpoint, clientID: clientID, clientSecret: clientSecret,
            sendsSecretInForm: authentication == .post)
    }
}

extension ClientCredentialsGrant: CustomStringConvertible {
    /// The endpoint, the client and the scopes; never the secret.
    public var description: String {
        "ClientCredentialsGrant(tokenEndpoint: \(tokenEndpoint.absoluteString), clientID: \(clientID), "
            + "authentication: \(authentication), scopes: \(scopes.joined(separator: " ")))"
    }
}

extension ClientCredentialsGrant: CustomReflectable {
    /// The fields, the secret redacted: `dump`, debuggers and crash reporters never show it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "tokenEndpoint": tokenEndpoint, "clientID": clientID, "clientSecret": "<redacted>",
                "authentication": authentication, "scopes": scopes, "resources": resources,
                "refreshWindow": refreshWindow, "revocationEndpoint": revocationEndpoint as Any,
            ],
            displayStyle: .struct)
    }
}

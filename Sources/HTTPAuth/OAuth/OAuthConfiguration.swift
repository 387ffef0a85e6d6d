public import Foundation

/// The authorization server's endpoints, as an OpenID Connect discovery document lists them.
public struct OAuthEndpoints: Sendable, Hashable, Decodable {
    /// The issuer identifier; ID tokens' `iss` must equal it. `nil` skips that check (plain OAuth 2).
    public var issuer: String?
    /// Where the user logs in (RFC 6749 §3.1).
    public var authorization: URL
    /// Where codes and refresh tokens are exchanged for tokens (RFC 6749 §3.2).
    public var token: URL
    /// Where tokens are revoked on logout (RFC 7009), if the server has one.
    public var revocation: URL?
    /// Where the user's session at the provider ends (OpenID Connect RP-Initiated Logout), if it has one.
    public var endSession: URL?
    /// The OpenID Connect UserInfo endpoint, if the server has one.
    public var userInfo: URL?

    public init(
        issuer: String? = nil,
        authorization: URL,
        token: URL,
        revocation: URL? = nil,
        endSession: URL? = nil,
        userInfo: URL? = nil
    ) {
        self.issuer = issuer
        self.authorization = authorization
        self.token = token
        self.revocation = revocation
        self.endSession = endSession
        self.userInfo = userInfo
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorization = "authorization_endpoint"
        case token = "token_endpoint"
        case revocation = "revocation_endpoint"
        case endSession = "end_session_endpoint"
        case userInfo = "userinfo_endpoint"
    }
}

/// How an ``OAuth`` loader talks to its authorization server, and its rules for refreshing.
///
/// ```swift
/// let configuration = OAuthConfiguration(
///     issuer: URL(string: "https://id.example.com")!,
///     clientID: "my-app",
///     redirectURI: URL(string: "com.example.app:/oauth/callback")!,
///     resourceHosts: ["api.example.com"]
/// )
/// ```
public struct OAuthConfiguration: Sendable {
    /// Where the endpoints come from.
    public enum Endpoints: Sendable, Hashable {
        /// Read from `<issuer>/.well-known/openid-configuration` before the first flow that needs them.
        case discover(issuer: URL)
        /// Known in advance.
        case known(OAuthEndpoints)
    }

    /// What a refresh that the server answers with `invalid_grant` leads to.
    public enum InvalidGrantPolicy: Sendable, Hashable {
        /// Delete the credentials and run the login flow (the default).
        case logIn
        /// Delete the credentials and fail the waiting requests with ``OAuthError/refreshRejected(description:)``.
        case fail
    }

    /// At most ``maximumRefreshes`` successful refreshes within ``window``; one more fails with
    /// ``OAuthError/refreshLoop(refreshes:window:)``. Refreshes that failed (the server could not be reached)
    /// do not count: they are not a loop, and the next request tries again.
    public struct RefreshLimit: Sendable, Hashable {
        public var maximumRefreshes: Int
        public var window: Duration

        public init(maximumRefreshes: Int, window: Duration) {
            self.maximumRefreshes = maximumRefreshes
            self.window = window
        }

        /// 5 refreshes a minute.
        public static let standard = RefreshLimit(maximumRefreshes: 5, window: .seconds(60))
    }

    public var endpoints: Endpoints
    /// The client identifier registered with the server.
    public var clientID: String
    /// The client secret of a confidential client, sent with HTTP Basic authentication (RFC 6749 §2.3.1).
    /// Apps that run on users' devices are public clients and have none; PKCE protects them.
    public var clientSecret: String?
    /// Where the server sends the user back after login.
    public var redirectURI: URL
    /// Scopes to ask for; `openid` makes the server return an ID token, which is then validated.
    public var scopes: [String]
    /// The hosts access tokens are sent to. A request for another host fails rather than carry the token there.
    public var resourceHosts: Set<String>
    /// Refresh a token this long before it expires, or when half its lifetime is left if that is sooner
    /// (a token that lives 2 s is refreshed after 1 s, not at once). 60 s by default.
    public var refreshWindow: Duration
    public var onInvalidGrant: InvalidGrantPolicy
    public var refreshLimit: RefreshLimit
    /// How far this device's clock may be from the server's when ID tokens are checked.
    public var allowedClockSkew: Duration
    /// Where the provider sends the user after ending the session, if the app registered such a URI.
    public var postLogoutRedirectURI: URL?
    /// Extra authorization request parameters, such as `prompt` or `login_hint`.
    public var additionalAuthorizationParameters: [URLQueryItem]

    /// - Parameters:
    ///   - endpoints: The endpoints, or where to discover them.
    ///   - clientID: The client identifier.
    ///   - clientSecret: The secret of a confidential client.
    ///   - redirectURI: The registered redirect URI.
    ///   - scopes: Scopes to ask for; `["openid"]` by default.
    ///   - resourceHosts: The hosts tokens may be sent to.
    ///   - refreshWindow: How long before expiry to refresh; 60 s by default.
    ///   - onInvalidGrant: What a rejected refresh token leads to; login by default.
    ///   - refreshLimit: The refresh-loop guard; 5 a minute by default.
    ///   - allowedClockSkew: Clock skew allowed when checking ID tokens; 5 minutes by default.
    ///   - postLogoutRedirectURI: Sent with the end-session request, if set.
    ///   - additionalAuthorizationParameters: Sent with the authorization request.
    public init(
        endpoints: Endpoints,
        clientID: String,
        clientSecret: String? = nil,
        redirectURI: URL,
        scopes: [String] = ["openid"],
        resourceHosts: Set<String>,
        refreshWindow: Duration = .seconds(60),
        onInvalidGrant: InvalidGrantPolicy = .logIn,
        refreshLimit: RefreshLimit = .standard,
        allowedClockSkew: Duration = .seconds(300),
        postLogoutRedirectURI: URL? = nil,
        additionalAuthorizationParameters: [URLQueryItem] = []
    ) {
        self.endpoints = endpoints
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.resourceHosts = Set(resourceHosts.map { $0.lowercased() })
        self.refreshWindow = refreshWindow
        self.onInvalidGrant = onInvalidGrant
        self.refreshLimit = refreshLimit
        self.allowedClockSkew = allowedClockSkew
        self.postLogoutRedirectURI = postLogoutRedirectURI
        self.additionalAuthorizationParameters = additionalAuthorizationParameters
    }

    /// A configuration whose endpoints are discovered from `issuer`.
    public init(
        issuer: URL,
        clientID: String,
        clientSecret: String? = nil,
        redirectURI: URL,
        scopes: [String] = ["openid"],
        resourceHosts: Set<String>
    ) {
        self.init(
            endpoints: .discover(issuer: issuer),
            clientID: clientID,
            clientSecret: clientSecret,
            redirectURI: redirectURI,
            scopes: scopes,
            resourceHosts: resourceHosts
        )
    }
}

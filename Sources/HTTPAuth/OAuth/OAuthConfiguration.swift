public import Foundation
public import HTTP

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
///     resourceOrigins: ["api.example.com"]   // https://api.example.com:443, and nowhere else
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

    /// How many refreshes whose token did not work the loader allows within a window — the server rejected the
    /// token a refresh had just issued (a `401` for it), or the token had expired as it was issued; one more fails
    /// with ``OAuthError/refreshLoop(refreshes:window:)``. Healthy refreshes never count, however short-lived the
    /// tokens and however steady the traffic; nor do refreshes that failed (the server could not be reached): they
    /// are not a loop, and the next request tries again.
    public typealias RefreshLimit = HTTPAuth.RefreshLimit

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
    /// The origins access tokens are sent to: scheme, host and port. A request for another origin fails rather
    /// than carry the token there. A host name alone means `https` on port 443; tokens go over plain `http`
    /// only to an `http` origin listed here (`"http://127.0.0.1:8080"`).
    public var resourceOrigins: Set<Origin>

    /// The hosts of ``resourceOrigins``; setting it makes each host name an `https` origin on port 443 (or
    /// reads it as an origin, if it has a scheme).
    public var resourceHosts: Set<String> {
        get { Set(resourceOrigins.map(\.host)) }
        set { resourceOrigins = CredentialOrigins.origins(fromHosts: newValue) }
    }
    /// Refresh a token this long before it expires, or when half its lifetime is left if that is sooner
    /// (a token that lives 2 s is refreshed after 1 s, not at once). 60 s by default.
    public var refreshWindow: Duration
    public var onInvalidGrant: InvalidGrantPolicy
    public var refreshLimit: RefreshLimit
    /// How far this device's clock may be from the server's when ID tokens are checked (`exp`, `nbf`). The
    /// server's clock is known from the token response's `Date` where it has one, so this covers the rest.
    public var allowedClockSkew: Duration
    /// How long ago an ID token's `iat` may be (one issued in the future is checked against
    /// ``allowedClockSkew``); 10 minutes by default, as AppAuth.
    public var idTokenMaximumAge: Duration = .seconds(600)
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
    ///   - resourceOrigins: The origins tokens may be sent to; a host name means `https` on port 443.
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
        resourceOrigins: Set<Origin>,
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
        self.resourceOrigins = resourceOrigins
        self.refreshWindow = refreshWindow
        self.onInvalidGrant = onInvalidGrant
        self.refreshLimit = refreshLimit
        self.allowedClockSkew = allowedClockSkew
        self.postLogoutRedirectURI = postLogoutRedirectURI
        self.additionalAuthorizationParameters = additionalAuthorizationParameters
    }

    /// A configuration whose tokens go to `resourceHosts`: each a host name, which means `https` on port 443, or an
    /// origin such as `"http://127.0.0.1:8080"`. The other parameters are those of
    /// ``init(endpoints:clientID:clientSecret:redirectURI:scopes:resourceOrigins:refreshWindow:onInvalidGrant:refreshLimit:allowedClockSkew:postLogoutRedirectURI:additionalAuthorizationParameters:)``.
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
        self.init(
            endpoints: endpoints, clientID: clientID, clientSecret: clientSecret, redirectURI: redirectURI,
            scopes: scopes, resourceOrigins: CredentialOrigins.origins(fromHosts: resourceHosts),
            refreshWindow: refreshWindow, onInvalidGrant: onInvalidGrant, refreshLimit: refreshLimit,
            allowedClockSkew: allowedClockSkew, postLogoutRedirectURI: postLogoutRedirectURI,
            additionalAuthorizationParameters: additionalAuthorizationParameters
        )
    }

    /// A configuration whose endpoints are discovered from `issuer`.
    public init(
        issuer: URL,
        clientID: String,
        clientSecret: String? = nil,
        redirectURI: URL,
        scopes: [String] = ["openid"],
        resourceOrigins: Set<Origin>
    ) {
        self.init(
            endpoints: .discover(issuer: issuer),
            clientID: clientID,
            clientSecret: clientSecret,
            redirectURI: redirectURI,
            scopes: scopes,
            resourceOrigins: resourceOrigins
        )
    }

    /// A configuration whose endpoints are discovered from `issuer` and whose tokens go to `resourceHosts`: each a
    /// host name, which means `https` on port 443, or an origin such as `"http://127.0.0.1:8080"`.
    public init(
        issuer: URL,
        clientID: String,
        clientSecret: String? = nil,
        redirectURI: URL,
        scopes: [String] = ["openid"],
        resourceHosts: Set<String>
    ) {
        self.init(
            issuer: issuer, clientID: clientID, clientSecret: clientSecret, redirectURI: redirectURI, scopes: scopes,
            resourceOrigins: CredentialOrigins.origins(fromHosts: resourceHosts))
    }
}

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

    /// These endpoints, with the optional ones they lack taken from `other` (a second discovery document).
    func filling(from other: OAuthEndpoints) -> OAuthEndpoints {
        var merged = self
        merged.revocation = revocation ?? other.revocation
        merged.endSession = endSession ?? other.endSession
        merged.userInfo = userInfo ?? other.userInfo
        return merged
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

/// Endpoints given explicitly beside discovery: each one set here wins over the discovered one, and discovery fills
/// the others. For a provider whose discovery document leaves one out (a revocation endpoint published elsewhere) or
/// names one the app must not use.
///
/// ```swift
/// var configuration = OAuthConfiguration(issuer: issuer, clientID: "my-app", redirectURI: callback,
///                                        resourceOrigins: ["api.example.com"])
/// configuration.endpointOverrides.revocation = URL(string: "https://id.example.com/oauth2/revoke")!
/// ```
public struct OAuthEndpointOverrides: Sendable, Hashable {
    /// The authorization endpoint, if not the discovered one.
    public var authorization: URL?
    /// The token endpoint, if not the discovered one.
    public var token: URL?
    /// The revocation endpoint (RFC 7009), if not the discovered one.
    public var revocation: URL?
    /// The end-session endpoint (OpenID Connect RP-Initiated Logout), if not the discovered one.
    public var endSession: URL?
    /// The user-info endpoint, if not the discovered one.
    public var userInfo: URL?

    /// No overrides, or the ones given.
    public init(
        authorization: URL? = nil, token: URL? = nil, revocation: URL? = nil, endSession: URL? = nil,
        userInfo: URL? = nil
    ) {
        self.authorization = authorization
        self.token = token
        self.revocation = revocation
        self.endSession = endSession
        self.userInfo = userInfo
    }

    /// `endpoints` with every endpoint set here in place of theirs.
    func applied(to endpoints: OAuthEndpoints) -> OAuthEndpoints {
        var merged = endpoints
        merged.authorization = authorization ?? endpoints.authorization
        merged.token = token ?? endpoints.token
        merged.revocation = revocation ?? endpoints.revocation
        merged.endSession = endSession ?? endpoints.endSession
        merged.userInfo = userInfo ?? endpoints.userInfo
        return merged
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
    @frozen
    public enum Endpoints: Sendable, Hashable {
        /// Discovered before the first flow that needs them: the OpenID Connect discovery document
        /// (`<issuer>/.well-known/openid-configuration`), then, when that is missing or names no revocation
        /// endpoint, the OAuth authorization-server metadata (RFC 8414: `/.well-known/oauth-authorization-server`
        /// before the issuer's path), each document's issuer checked; ``OAuthConfiguration/endpointOverrides``
        /// win over both.
        case discover(issuer: URL)
        /// Known in advance.
        case known(OAuthEndpoints)
    }

    /// What a refresh that the server answers with `invalid_grant` (the refresh token expired or was revoked) leads
    /// to.
    ///
    /// An app with a user in front of it keeps ``logIn``, the default: the login page opens in the middle of the
    /// request that needed the token, and the request goes on once the user has logged in. A server process, a
    /// command-line tool or a background task, which has nobody to show a page to, chooses ``fail``: the request
    /// fails at once with a clear error, and the app decides when to log in again.
    @frozen
    public enum InvalidGrantPolicy: Sendable, Hashable {
        /// Delete the credentials and run the login flow (the default, for apps with a user).
        case logIn
        /// Delete the credentials and fail the waiting requests with ``OAuthError/refreshRejected(description:)``
        /// (for servers and background work).
        case fail
    }

    /// How many refreshes whose token did not work the loader allows within a window — the server rejected the
    /// token a refresh had just issued (a `401` for it), or the token had expired as it was issued; one more fails
    /// with ``OAuthError/refreshLoop(refreshes:window:)``. Healthy refreshes never count, however short-lived the
    /// tokens and however steady the traffic; nor do refreshes that failed (the server could not be reached): they
    /// are not a loop, and the next request tries again.
    public typealias RefreshLimit = HTTPAuth.RefreshLimit

    /// The endpoints, or where to discover them.
    public var endpoints: Endpoints
    /// Endpoints that win over the discovered (or known) ones; none by default.
    public var endpointOverrides: OAuthEndpointOverrides
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
    @available(*, deprecated, message: "use resourceOrigins, which keeps each origin's scheme and port")
    public var resourceHosts: Set<String> {
        get { Set(resourceOrigins.map(\.host)) }
        set { resourceOrigins = CredentialOrigins.origins(fromHosts: newValue) }
    }
    /// Refresh a token this long before it expires, or when half its lifetime is left if that is sooner
    /// (a token that lives 2 s is refreshed after 1 s, not at once). 60 s by default.
    public var refreshWindow: Duration
    /// What a rejected refresh token leads to: ``InvalidGrantPolicy/logIn`` by default (an app with a user);
    /// ``InvalidGrantPolicy/fail`` for a server or background work, which cannot show a login page.
    public var onInvalidGrant: InvalidGrantPolicy
    /// The refresh-loop guard: 5 refreshes whose new token did not work, a minute, by default.
    public var refreshLimit: RefreshLimit
    /// How far this device's clock may be from the server's when ID tokens are checked (`exp`, `nbf`). The
    /// server's clock is known from the token response's `Date` where it has one, so this covers the rest.
    public var allowedClockSkew: Duration
    /// How long ago an ID token's `iat` may be (one issued in the future is checked against
    /// ``allowedClockSkew``); 10 minutes by default, as AppAuth.
    public var idTokenMaximumAge: Duration
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
    ///   - idTokenMaximumAge: How old an ID token's `iat` may be; 10 minutes by default.
    ///   - postLogoutRedirectURI: Sent with the end-session request, if set.
    ///   - additionalAuthorizationParameters: Sent with the authorization request.
    ///   - endpointOverrides: Endpoints that win over the discovered ones; none by default.
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
        idTokenMaximumAge: Duration = .seconds(600),
        postLogoutRedirectURI: URL? = nil,
        additionalAuthorizationParameters: [URLQueryItem] = [],
        endpointOverrides: OAuthEndpointOverrides = OAuthEndpointOverrides()
    ) {
        self.endpoints = endpoints
        self.endpointOverrides = endpointOverrides
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.resourceOrigins = resourceOrigins
        self.refreshWindow = refreshWindow
        self.onInvalidGrant = onInvalidGrant
        self.refreshLimit = refreshLimit
        self.allowedClockSkew = allowedClockSkew
        self.idTokenMaximumAge = idTokenMaximumAge
        self.postLogoutRedirectURI = postLogoutRedirectURI
        self.additionalAuthorizationParameters = additionalAuthorizationParameters
    }

    /// A configuration whose tokens go to `resourceHosts`: each a host name, which means `https` on port 443, or an
    /// origin such as `"http://127.0.0.1:8080"`. The other parameters are those of
    /// ``init(endpoints:clientID:clientSecret:redirectURI:scopes:resourceOrigins:refreshWindow:onInvalidGrant:refreshLimit:allowedClockSkew:idTokenMaximumAge:postLogoutRedirectURI:additionalAuthorizationParameters:endpointOverrides:)``.
    @available(*, deprecated, message: "use resourceOrigins: a host name is an https origin")
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
        idTokenMaximumAge: Duration = .seconds(600),
        postLogoutRedirectURI: URL? = nil,
        additionalAuthorizationParameters: [URLQueryItem] = [],
        endpointOverrides: OAuthEndpointOverrides = OAuthEndpointOverrides()
    ) {
        self.init(
            endpoints: endpoints, clientID: clientID, clientSecret: clientSecret, redirectURI: redirectURI,
            scopes: scopes, resourceOrigins: CredentialOrigins.origins(fromHosts: resourceHosts),
            refreshWindow: refreshWindow, onInvalidGrant: onInvalidGrant, refreshLimit: refreshLimit,
            allowedClockSkew: allowedClockSkew, idTokenMaximumAge: idTokenMaximumAge,
            postLogoutRedirectURI: postLogoutRedirectURI,
            additionalAuthorizationParameters: additionalAuthorizationParameters, endpointOverrides: endpointOverrides
        )
    }

    /// A configuration whose endpoints are discovered from `issuer` (its OpenID Connect discovery document). Every
    /// setting can be given here, with the defaults and meanings of
    /// ``init(endpoints:clientID:clientSecret:redirectURI:scopes:resourceOrigins:refreshWindow:onInvalidGrant:refreshLimit:allowedClockSkew:idTokenMaximumAge:postLogoutRedirectURI:additionalAuthorizationParameters:endpointOverrides:)``.
    ///
    /// ```swift
    /// // A server process, which cannot show a login page: a rejected refresh token fails the request.
    /// let configuration = OAuthConfiguration(
    ///     issuer: URL(string: "https://id.example.com")!, clientID: "reports-worker", redirectURI: callback,
    ///     resourceOrigins: ["api.example.com"], onInvalidGrant: .fail)
    /// ```
    public init(
        issuer: URL,
        clientID: String,
        clientSecret: String? = nil,
        redirectURI: URL,
        scopes: [String] = ["openid"],
        resourceOrigins: Set<Origin>,
        refreshWindow: Duration = .seconds(60),
        onInvalidGrant: InvalidGrantPolicy = .logIn,
        refreshLimit: RefreshLimit = .standard,
        allowedClockSkew: Duration = .seconds(300),
        idTokenMaximumAge: Duration = .seconds(600),
        postLogoutRedirectURI: URL? = nil,
        additionalAuthorizationParameters: [URLQueryItem] = [],
        endpointOverrides: OAuthEndpointOverrides = OAuthEndpointOverrides()
    ) {
        self.init(
            endpoints: .discover(issuer: issuer), clientID: clientID, clientSecret: clientSecret,
            redirectURI: redirectURI, scopes: scopes, resourceOrigins: resourceOrigins, refreshWindow: refreshWindow,
            onInvalidGrant: onInvalidGrant, refreshLimit: refreshLimit, allowedClockSkew: allowedClockSkew,
            idTokenMaximumAge: idTokenMaximumAge, postLogoutRedirectURI: postLogoutRedirectURI,
            additionalAuthorizationParameters: additionalAuthorizationParameters, endpointOverrides: endpointOverrides)
    }

    /// A configuration whose endpoints are discovered from `issuer` and whose tokens go to `resourceHosts`: each a
    /// host, with or without a port, which means `https`, or an origin such as `"http://127.0.0.1:8080"`. The other
    /// parameters are those of
    /// ``init(issuer:clientID:clientSecret:redirectURI:scopes:resourceOrigins:refreshWindow:onInvalidGrant:refreshLimit:allowedClockSkew:idTokenMaximumAge:postLogoutRedirectURI:additionalAuthorizationParameters:endpointOverrides:)``.
    @available(*, deprecated, message: "use resourceOrigins: a host name is an https origin")
    public init(
        issuer: URL,
        clientID: String,
        clientSecret: String? = nil,
        redirectURI: URL,
        scopes: [String] = ["openid"],
        resourceHosts: Set<String>,
        refreshWindow: Duration = .seconds(60),
        onInvalidGrant: InvalidGrantPolicy = .logIn,
        refreshLimit: RefreshLimit = .standard,
        allowedClockSkew: Duration = .seconds(300),
        idTokenMaximumAge: Duration = .seconds(600),
        postLogoutRedirectURI: URL? = nil,
        additionalAuthorizationParameters: [URLQueryItem] = [],
        endpointOverrides: OAuthEndpointOverrides = OAuthEndpointOverrides()
    ) {
        self.init(
            issuer: issuer, clientID: clientID, clientSecret: clientSecret, redirectURI: redirectURI, scopes: scopes,
            resourceOrigins: CredentialOrigins.origins(fromHosts: resourceHosts), refreshWindow: refreshWindow,
            onInvalidGrant: onInvalidGrant, refreshLimit: refreshLimit, allowedClockSkew: allowedClockSkew,
            idTokenMaximumAge: idTokenMaximumAge, postLogoutRedirectURI: postLogoutRedirectURI,
            additionalAuthorizationParameters: additionalAuthorizationParameters, endpointOverrides: endpointOverrides)
    }
}

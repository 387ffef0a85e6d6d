import HTTP

/// Why an OAuth or OpenID Connect step failed.
///
/// A request that could not be authorized fails with `HTTPError.Code.cannotAuthenticate`; the
/// `OAuthError` is its `underlyingError`, and its description is the error's message. Branch on its ``code``:
///
/// ```swift
/// if case .failure(let error) = result, let reason = error.underlyingError as? OAuthError {
///     switch reason.code {
///     case .loginCancelled: showSignedOutScreen()
///     case .tokenRequestFailed where reason.serverErrorCode == "invalid_client": reportMisconfiguration()
///     default: showError(reason)
///     }
/// }
/// ```
///
/// Codes are open-ended, as `HTTPError.Code` is: a later version may add one, so a `switch` over them has a
/// `default`. Descriptions never contain a token, a code or a secret.
public struct OAuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A category of OAuth failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The token endpoint's answer could not be used; ``OAuthError/reason`` says why.
        public static let invalidTokenResponse = Code(rawValue: "invalidTokenResponse")
        /// The ID token was malformed or its claims failed validation (OpenID Connect Core 3.1.3.7).
        public static let invalidIDToken = Code(rawValue: "invalidIDToken")
        /// The provider's discovery document could not be fetched or read.
        public static let discoveryFailed = Code(rawValue: "discoveryFailed")
        /// An endpoint of the authorization server could not be reached; the reason names the endpoint and the
        /// transport error.
        public static let endpointUnreachable = Code(rawValue: "endpointUnreachable")
        /// The user closed the login (the delegate answered `nil`).
        public static let loginCancelled = Code(rawValue: "loginCancelled")
        /// The delegate's login failed with an error of its own — the browser could not be opened, the network
        /// failed, an error page came back: ``OAuthError/loginError`` is that error.
        public static let loginFailed = Code(rawValue: "loginFailed")
        /// There is no delegate to show the login page.
        public static let noDelegate = Code(rawValue: "noDelegate")
        /// The login callback carried an `error` (RFC 6749 §4.1.2.1), for instance `access_denied`: see
        /// ``OAuthError/serverErrorCode``.
        public static let authorizationDenied = Code(rawValue: "authorizationDenied")
        /// The callback's `state` is not the one this login sent: the callback may be forged (RFC 6749 §10.12).
        /// The code it carried was not redeemed.
        public static let stateMismatch = Code(rawValue: "stateMismatch")
        /// The callback URL has neither a code nor an error, or is not for this client's redirect URI.
        public static let invalidCallback = Code(rawValue: "invalidCallback")
        /// The token endpoint refused a request (RFC 6749 §5.2): see ``OAuthError/status`` and
        /// ``OAuthError/serverErrorCode``.
        public static let tokenRequestFailed = Code(rawValue: "tokenRequestFailed")
        /// The refresh token is no longer valid (`invalid_grant`) and the loader is configured not to log in
        /// again on its own.
        public static let refreshRejected = Code(rawValue: "refreshRejected")
        /// The loader refreshed more often than its ``OAuthConfiguration/RefreshLimit`` allows: a server that
        /// issues tokens it then rejects would otherwise make it refresh forever. See ``OAuthError/refreshLimit``.
        public static let refreshLoop = Code(rawValue: "refreshLoop")
        /// The credential store failed to read, save or delete credentials.
        public static let credentialStore = Code(rawValue: "credentialStore")
    }

    /// The category of failure.
    public var code: Code
    /// What exactly went wrong, in words, when the code alone does not say: which claim failed, which endpoint
    /// could not be reached.
    public var reason: String?
    /// The HTTP status the authorization server answered with, for ``Code/tokenRequestFailed``.
    public var status: Int?
    /// The error code the authorization server sent — its `error` parameter (RFC 6749 §4.1.2.1, §5.2), such as
    /// `invalid_grant` or `access_denied` —, when it sent one.
    public var serverErrorCode: String?
    /// The authorization server's `error_description`, when it sent one.
    public var serverErrorDescription: String?
    /// The limit that stopped refreshing, for ``Code/refreshLoop``.
    public var refreshLimit: OAuthConfiguration.RefreshLimit?
    /// The error the delegate's login failed with, for ``Code/loginFailed``: the delegate's own, unchanged. Not
    /// compared by `==` (its description is the ``reason``, which is).
    public var loginError: (any Error)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The category.
    ///   - reason: What exactly went wrong, in words.
    ///   - status: The authorization server's HTTP status.
    ///   - serverErrorCode: The authorization server's `error` parameter.
    ///   - serverErrorDescription: The authorization server's `error_description` parameter.
    ///   - refreshLimit: The refresh limit that tripped.
    public init(
        _ code: Code,
        reason: String? = nil,
        status: Int? = nil,
        serverErrorCode: String? = nil,
        serverErrorDescription: String? = nil,
        refreshLimit: OAuthConfiguration.RefreshLimit? = nil
    ) {
        self.code = code
        self.reason = reason
        self.status = status
        self.serverErrorCode = serverErrorCode
        self.serverErrorDescription = serverErrorDescription
        self.refreshLimit = refreshLimit
    }

    public var description: String {
        let detail = reason ?? ""
        let parenthesized = serverErrorDescription.map { " (\($0))" } ?? ""
        switch code {
        case .invalidTokenResponse: return "invalid token response: \(detail)"
        case .invalidIDToken: return "invalid ID token: \(detail)"
        case .discoveryFailed: return "OpenID Connect discovery failed: \(detail)"
        case .endpointUnreachable: return "the authorization server could not be reached: \(detail)"
        case .loginCancelled: return "the login was cancelled"
        case .loginFailed: return "the login failed: \(detail)"
        case .noDelegate: return "the OAuth loader has no delegate to show the login page"
        case .authorizationDenied:
            return "the authorization server refused the login: \(serverErrorCode ?? "no error code")" + parenthesized
        case .stateMismatch:
            return
                "the login callback's state does not match the login's; the callback was ignored and its code not redeemed"
        case .invalidCallback: return "invalid login callback: \(detail)"
        case .tokenRequestFailed:
            return "the token endpoint answered \(status.map(String.init) ?? "no status")"
                + (serverErrorCode.map { ": \($0)" } ?? "") + parenthesized
        case .refreshRejected:
            return "the refresh token was rejected (invalid_grant)" + (serverErrorDescription.map { ": \($0)" } ?? "")
                + "; log in again"
        case .refreshLoop:
            let limit = refreshLimit ?? .standard
            return "refreshed \(limit.maximumRefreshes) times within \(limit.window.seconds) s, and each new token was "
                + "rejected by the server (or had expired as it was issued), so the loader stopped refreshing until "
                + "the first of them is \(limit.window.seconds) s old"
        case .credentialStore: return "the credential store failed: \(detail)"
        default: return "\(code)" + (reason.map { ": \($0)" } ?? "")
        }
    }
}

extension OAuthError {
    /// Compares every field but ``loginError``, whose description is the ``reason``.
    public static func == (lhs: OAuthError, rhs: OAuthError) -> Bool {
        lhs.code == rhs.code && lhs.reason == rhs.reason && lhs.status == rhs.status
            && lhs.serverErrorCode == rhs.serverErrorCode && lhs.serverErrorDescription == rhs.serverErrorDescription
            && lhs.refreshLimit == rhs.refreshLimit
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(reason)
        hasher.combine(status)
        hasher.combine(serverErrorCode)
        hasher.combine(serverErrorDescription)
        hasher.combine(refreshLimit)
    }

    /// The delegate's login failed with `error`, which the returned error keeps as its ``loginError``.
    public static func loginFailed(_ error: any Error) -> OAuthError {
        var failure = OAuthError(.loginFailed, reason: "\(error)")
        failure.loginError = error
        return failure
    }

    /// The token endpoint's answer could not be used.
    public static func invalidTokenResponse(_ reason: String) -> OAuthError {
        OAuthError(.invalidTokenResponse, reason: reason)
    }

    /// The ID token was malformed or its claims failed validation.
    public static func invalidIDToken(_ reason: String) -> OAuthError {
        OAuthError(.invalidIDToken, reason: reason)
    }

    /// The provider's discovery document could not be fetched or read.
    public static func discoveryFailed(_ reason: String) -> OAuthError {
        OAuthError(.discoveryFailed, reason: reason)
    }

    /// An endpoint of the authorization server could not be reached.
    public static func endpointUnreachable(_ reason: String) -> OAuthError {
        OAuthError(.endpointUnreachable, reason: reason)
    }

    /// The user closed the login.
    public static let loginCancelled = OAuthError(.loginCancelled)

    /// There is no delegate to show the login page.
    public static let noDelegate = OAuthError(.noDelegate)

    /// The login callback carried an `error`, and perhaps an `error_description`.
    public static func authorizationDenied(error: String, description: String?) -> OAuthError {
        OAuthError(.authorizationDenied, serverErrorCode: error, serverErrorDescription: description)
    }

    /// The callback's `state` is not the one the login sent.
    public static let stateMismatch = OAuthError(.stateMismatch)

    /// The callback URL has neither a code nor an error, or is not for the redirect URI.
    public static func invalidCallback(_ reason: String) -> OAuthError {
        OAuthError(.invalidCallback, reason: reason)
    }

    /// The token endpoint answered `status`, with the `error` and `error_description` it sent, if any.
    public static func tokenRequestFailed(status: Int, error: String?, description: String?) -> OAuthError {
        OAuthError(.tokenRequestFailed, status: status, serverErrorCode: error, serverErrorDescription: description)
    }

    /// The refresh token was rejected with `invalid_grant` and the loader does not log in again on its own.
    public static func refreshRejected(description: String?) -> OAuthError {
        OAuthError(.refreshRejected, serverErrorCode: "invalid_grant", serverErrorDescription: description)
    }

    /// The loader refreshed `refreshes` times within `window`, as many as its refresh limit allows.
    public static func refreshLoop(refreshes: Int, window: Duration) -> OAuthError {
        OAuthError(
            .refreshLoop, refreshLimit: OAuthConfiguration.RefreshLimit(maximumRefreshes: refreshes, window: window))
    }

    /// The credential store failed.
    public static func credentialStore(_ reason: String) -> OAuthError {
        OAuthError(.credentialStore, reason: reason)
    }
}

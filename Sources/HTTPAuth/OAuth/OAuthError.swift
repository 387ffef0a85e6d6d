import HTTP

/// Why an OAuth or OpenID Connect step failed.
///
/// A request that could not be authorized fails with `HTTPError.Code.cannotAuthenticate`; the
/// `OAuthError` is its `underlyingError`, and its description is the error's message:
///
/// ```swift
/// if case .failure(let error) = result, let reason = error.underlyingError as? OAuthError {
///     if reason == .loginCancelled { showSignedOutScreen() }
/// }
/// ```
///
/// Descriptions never contain a token, a code or a secret.
public enum OAuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token endpoint's answer could not be used.
    case invalidTokenResponse(String)
    /// The ID token was malformed or its claims failed validation (OpenID Connect Core 3.1.3.7).
    case invalidIDToken(String)
    /// The provider's discovery document could not be fetched or read.
    case discoveryFailed(String)
    /// An endpoint of the authorization server could not be reached; the reason names the endpoint and the
    /// transport error.
    case endpointUnreachable(String)
    /// The user closed the login (the delegate answered `nil`).
    case loginCancelled
    /// There is no delegate to show the login page.
    case noDelegate
    /// The callback carried an `error` (RFC 6749 §4.1.2.1), for instance `access_denied`.
    case authorizationDenied(error: String, description: String?)
    /// The callback's `state` is not the one this login sent: the callback may be forged (RFC 6749 §10.12).
    /// The code it carried was not redeemed.
    case stateMismatch
    /// The callback URL has neither a code nor an error, or is not for this client's redirect URI.
    case invalidCallback(String)
    /// The token endpoint refused a request (RFC 6749 §5.2).
    case tokenRequestFailed(status: Int, error: String?, description: String?)
    /// The refresh token is no longer valid (`invalid_grant`) and the loader is configured not to log in
    /// again on its own.
    case refreshRejected(description: String?)
    /// The loader refreshed more often than its `RefreshLimit` allows: a server that issues tokens it then
    /// rejects would otherwise make it refresh forever.
    case refreshLoop(refreshes: Int, window: Duration)
    /// The credential store failed to read, save or delete credentials.
    case credentialStore(String)

    public var description: String {
        switch self {
        case .invalidTokenResponse(let reason): "invalid token response: \(reason)"
        case .invalidIDToken(let reason): "invalid ID token: \(reason)"
        case .discoveryFailed(let reason): "OpenID Connect discovery failed: \(reason)"
        case .endpointUnreachable(let reason): "the authorization server could not be reached: \(reason)"
        case .loginCancelled: "the login was cancelled"
        case .noDelegate: "the OAuth loader has no delegate to show the login page"
        case .authorizationDenied(let error, let description):
            "the authorization server refused the login: \(error)" + (description.map { " (\($0))" } ?? "")
        case .stateMismatch:
            "the login callback's state does not match the login's; the callback was ignored and its code not redeemed"
        case .invalidCallback(let reason): "invalid login callback: \(reason)"
        case .tokenRequestFailed(let status, let error, let description):
            "the token endpoint answered \(status)" + (error.map { ": \($0)" } ?? "")
                + (description.map { " (\($0))" } ?? "")
        case .refreshRejected(let description):
            "the refresh token was rejected (invalid_grant)" + (description.map { ": \($0)" } ?? "")
                + "; log in again"
        case .refreshLoop(let refreshes, let window):
            "refreshed \(refreshes) times within \(window.seconds) s; the server keeps rejecting fresh tokens, so the "
                + "loader stopped refreshing"
        case .credentialStore(let reason): "the credential store failed: \(reason)"
        }
    }
}

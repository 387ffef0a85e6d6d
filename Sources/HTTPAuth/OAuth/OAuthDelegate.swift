public import Foundation

/// What an ``OAuth`` loader needs from the app: persisted credentials, and a browser for login and logout.
///
/// Only ``logIn(at:for:)`` is required. Without the storage methods, credentials live in memory only;
/// without ``logOut(at:for:)``, the provider's session is not ended on reset.
///
/// ```swift
/// final class SessionController: OAuthDelegate {
///     let store = FileCredentialStore(directory: supportDirectory)
///
///     func savedCredentials(for loader: OAuth) async throws -> OAuthCredentials? {
///         try await store.load(OAuthCredentials.self, for: "oauth")
///     }
///     func save(_ credentials: OAuthCredentials, for loader: OAuth) async throws {
///         try await store.save(credentials, for: "oauth")
///     }
///     func deleteCredentials(for loader: OAuth) async throws {
///         try await store.delete(for: "oauth")
///     }
///     func logIn(at url: URL, for loader: OAuth) async -> URL? {
///         await browser.open(url, waitingForRedirectTo: redirectURI)  // nil when the user closes it
///     }
/// }
/// ```
public protocol OAuthDelegate: AnyObject, Sendable {
    /// The credentials saved by an earlier session, or `nil`.
    ///
    /// An error is not fatal: the loader logs in again, and the new credentials replace the unreadable ones.
    func savedCredentials(for loader: OAuth) async throws -> OAuthCredentials?

    /// Saves new credentials (after a login or a refresh). An error leaves them in memory only.
    func save(_ credentials: OAuthCredentials, for loader: OAuth) async throws

    /// Deletes the saved credentials (on logout, or when the server rejected them).
    func deleteCredentials(for loader: OAuth) async throws

    /// Shows the login page at `url` (a browser, `ASWebAuthenticationSession`) and returns the URL the server
    /// redirected to, which carries the code — or `nil` when the user cancelled.
    ///
    /// Throw when the login could not happen — the browser could not be opened, the network failed, an error page
    /// came back: the requests waiting for it fail with `HTTPError.Code.cannotAuthenticate` and an ``OAuthError`` of
    /// code ``OAuthError/Code/loginFailed`` whose ``OAuthError/loginError`` is your error, told apart from a
    /// cancellation (`nil`, or a `CancellationError`: ``OAuthError/Code/loginCancelled``). A method that never throws
    /// satisfies this requirement too.
    ///
    /// A reset while this runs interrupts the login: the loader stops waiting for the answer, and the task
    /// that called this method is cancelled.
    func logIn(at url: URL, for loader: OAuth) async throws -> URL?

    /// Shows the provider's end-session page at `url`, ending the user's session there too.
    ///
    /// `url` is the provider's `end_session_endpoint` (OpenID Connect RP-Initiated Logout) with `id_token_hint` (the
    /// ID token of the session, when there is one), `client_id` and, when configured,
    /// `post_logout_redirect_uri`. Return when the page is done — the provider redirected to that URI, or the user
    /// closed it: the reset that logs out waits for this method, and the chain accepts requests again after it.
    /// The loader calls it only when the provider has an end-session endpoint.
    func logOut(at url: URL, for loader: OAuth) async

    /// The logout at a reset is done: `logout` says whether the tokens were revoked at the server, the saved
    /// credentials deleted and the provider's session ended — for telling the user "signed out on this device
    /// only" when ``OAuthLogout/isSignedOutAtServer`` is `false`. Called before the session's observers hear
    /// ``OAuthSessionState/loggedOut(_:)``; the reset waits for it.
    func didLogOut(_ logout: OAuthLogout, for loader: OAuth) async
}

extension OAuthDelegate {
    /// Nothing is saved: returns `nil`.
    public func savedCredentials(for loader: OAuth) async throws -> OAuthCredentials? { nil }
    /// Nothing is saved: does nothing.
    public func save(_ credentials: OAuthCredentials, for loader: OAuth) async throws {}
    /// Nothing is saved: does nothing.
    public func deleteCredentials(for loader: OAuth) async throws {}
    /// Does nothing: the provider's session stays open.
    public func logOut(at url: URL, for loader: OAuth) async {}
    /// Does nothing; ``OAuth/lastLogout`` keeps the outcome.
    public func didLogOut(_ logout: OAuthLogout, for loader: OAuth) async {}
}

/// Where an ``OAuth`` loader's session stands, as ``OAuth/sessionStates()`` reports it.
@frozen
public enum OAuthSessionState: Sendable, Hashable, CustomStringConvertible {
    /// Credentials were obtained by a login or read from storage.
    case loggedIn
    /// The access token was refreshed.
    case refreshed
    /// There are no credentials: not logged in yet, logged out by a reset (`nil`), or because of the error
    /// that made the loader delete them (a rejected refresh token, a failed login after one).
    case loggedOut(OAuthError?)

    public var description: String {
        switch self {
        case .loggedIn: "logged in"
        case .refreshed: "refreshed"
        case .loggedOut(nil): "logged out"
        case .loggedOut(let error?): "logged out: \(error)"
        }
    }
}

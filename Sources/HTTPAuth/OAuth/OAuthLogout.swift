/// What a logout did, at the authorization server and on the device: for an app to tell its user "signed out
/// everywhere" from "signed out on this device only".
///
/// ``OAuth`` logs out at a reset; its delegate hears the outcome (``OAuthDelegate/didLogOut(_:for:)``), and
/// ``OAuth/lastLogout`` keeps it.
///
/// ```swift
/// func didLogOut(_ logout: OAuthLogout, for loader: OAuth) async {
///     if !logout.isSignedOutAtServer { showNotice("Signed out on this device only") }
/// }
/// ```
public struct OAuthLogout: Sendable, Hashable, CustomStringConvertible {
    /// What became of the tokens at the authorization server.
    @frozen
    public enum Revocation: Sendable, Hashable {
        /// Every token was revoked (RFC 7009): the refresh token, and the access token.
        case revoked
        /// The server has no revocation endpoint (none discovered, none configured): the tokens stay valid there
        /// until they expire.
        case unsupported
        /// A revocation request failed (the first failure): the token may still be valid at the server.
        case failed(OAuthError)
        /// There were no tokens to revoke.
        case nothingToRevoke
    }

    /// What became of the tokens at the server.
    public var revocation: Revocation
    /// Whether the saved credentials were deleted (the delegate's store did not fail).
    public var deletedSavedCredentials: Bool
    /// Whether the provider's own session was ended: its end-session page was shown (OpenID Connect RP-Initiated
    /// Logout). `false` when the server has no end-session endpoint.
    public var endedProviderSession: Bool
    /// The first thing that went wrong, as ``OAuthSessionState/loggedOut(_:)`` reports it.
    public var problem: OAuthError?

    /// - Parameters:
    ///   - revocation: What became of the tokens at the server.
    ///   - deletedSavedCredentials: Whether the saved credentials were deleted.
    ///   - endedProviderSession: Whether the provider's session was ended.
    ///   - problem: The first thing that went wrong.
    public init(
        revocation: Revocation, deletedSavedCredentials: Bool, endedProviderSession: Bool, problem: OAuthError?
    ) {
        self.revocation = revocation
        self.deletedSavedCredentials = deletedSavedCredentials
        self.endedProviderSession = endedProviderSession
        self.problem = problem
    }

    /// Whether no token of the session is still valid at the server: they were revoked, or there were none.
    public var isSignedOutAtServer: Bool {
        switch revocation {
        case .revoked, .nothingToRevoke: true
        case .unsupported, .failed: false
        }
    }

    /// What the logout did, in a sentence; never a token.
    public var description: String {
        let server =
            switch revocation {
            case .revoked: "tokens revoked at the server"
            case .unsupported:
                "tokens not revoked (the server has no revocation endpoint; they stay valid until they expire)"
            case .failed(let error): "revocation failed (\(error))"
            case .nothingToRevoke: "no tokens to revoke"
            }
        return [
            server,
            deletedSavedCredentials ? "saved credentials deleted" : "saved credentials not deleted",
            endedProviderSession ? "provider session ended" : "provider session not ended",
        ].joined(separator: "; ")
    }
}

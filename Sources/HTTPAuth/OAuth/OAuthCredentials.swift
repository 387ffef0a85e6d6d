public import Foundation
import HTTP

/// The tokens an OAuth 2 authorization server issued, with when the access token expires.
///
/// Built from a token endpoint's JSON response (RFC 6749 §5.1), stored through a `CredentialStore`:
///
/// ```swift
/// let credentials = try OAuthCredentials(tokenResponse: response.body, receivedAt: Date())
/// if credentials.expires(within: .seconds(60), at: Date()) { /* refresh first */ }
/// ```
///
/// Descriptions show no token.
public struct OAuthCredentials: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The bearer token sent with requests.
    public var accessToken: String
    /// The token used to get a new access token, if the server issued one.
    public var refreshToken: String?
    /// The OpenID Connect ID token (a JWT), if the server issued one.
    public var idToken: String?
    /// When the access token stops working, if the server said.
    public var expirationDate: Date?
    /// The granted scopes, if the server listed them.
    public var scope: String?
    /// When the access token was issued, if known: with ``expirationDate`` it gives the token's lifetime.
    public var issuedAt: Date?

    public init(
        accessToken: String,
        refreshToken: String? = nil,
        idToken: String? = nil,
        expirationDate: Date? = nil,
        scope: String? = nil,
        issuedAt: Date? = nil
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.expirationDate = expirationDate
        self.scope = scope
        self.issuedAt = issuedAt
    }

    /// The fields of a successful token response (RFC 6749 §5.1).
    private struct TokenResponse: Decodable {
        var accessToken: String
        var tokenType: String
        var expiresIn: Double?
        var refreshToken: String?
        var idToken: String?
        var scope: String?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresIn = "expires_in"
            case refreshToken = "refresh_token"
            case idToken = "id_token"
            case scope
        }
    }

    /// Reads a token endpoint's successful response.
    ///
    /// - Parameters:
    ///   - body: The response's JSON body.
    ///   - receivedAt: When the response arrived; `expires_in` counts from then.
    ///   - previous: The credentials being refreshed: a refresh response without `refresh_token` keeps theirs
    ///     (RFC 6749 §6 lets the server omit it).
    /// - Throws: ``OAuthError/invalidTokenResponse(_:)`` when the body is not such a response, or its token
    ///   type is not `Bearer`.
    public init(tokenResponse body: Data, receivedAt: Date, previous: OAuthCredentials? = nil) throws(OAuthError) {
        let response: TokenResponse
        do {
            response = try JSONDecoder().decode(TokenResponse.self, from: body)
        } catch {
            throw .invalidTokenResponse("the token response is not the JSON RFC 6749 §5.1 describes: \(error)")
        }
        guard response.tokenType.lowercased() == "bearer" else {
            throw .invalidTokenResponse("the token type is '\(response.tokenType)', not 'Bearer'")
        }
        self.init(
            accessToken: response.accessToken,
            refreshToken: response.refreshToken ?? previous?.refreshToken,
            idToken: response.idToken ?? previous?.idToken,
            expirationDate: response.expiresIn.map { receivedAt.addingTimeInterval($0) },
            scope: response.scope ?? previous?.scope,
            issuedAt: receivedAt
        )
    }

    /// Whether the access token has expired at `now`, or will within `window`. A token without an expiry
    /// never expires by this measure (the server's 401 will say).
    public func expires(within window: Duration = .zero, at now: Date) -> Bool {
        guard let expirationDate else { return false }
        return expirationDate.timeIntervalSince(now) <= window.seconds
    }

    /// How long the access token was issued for, when both ends are known.
    public var lifetime: Duration? {
        guard let issuedAt, let expirationDate else { return nil }
        return .seconds(expirationDate.timeIntervalSince(issuedAt))
    }

    /// `Authorization: Bearer <token>` (RFC 6750 §2.1).
    public var authorizationHeaderValue: String { "Bearer " + accessToken }

    public var description: String {
        let expiry = expirationDate.map { "expires \($0)" } ?? "no expiry"
        return
            "OAuthCredentials(access token <redacted>, refresh token \(refreshToken == nil ? "none" : "<redacted>"), \(expiry))"
    }

    public var debugDescription: String { description }
}

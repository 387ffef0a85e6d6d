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
    /// How far the authorization server's clock was ahead of this device's when the tokens arrived: the token
    /// response's `Date` minus the time it was received (negative when this device's clock is ahead).
    ///
    /// With an offset, ``issuedAt`` and ``expirationDate`` are in the server's clock — the token expires when the
    /// server says, whatever this device's clock reads — and ``expires(within:at:)`` adds the offset to this
    /// device's time before comparing. So a device clock that is minutes (or, after a dead battery, years) off
    /// refreshes neither too early nor too late, and ID token times are checked against the server's clock.
    /// `nil` when the response had no `Date`: this device's clock is used throughout.
    public var serverClockOffset: TimeInterval?

    public init(
        accessToken: String,
        refreshToken: String? = nil,
        idToken: String? = nil,
        expirationDate: Date? = nil,
        scope: String? = nil,
        issuedAt: Date? = nil,
        serverClockOffset: TimeInterval? = nil
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.expirationDate = expirationDate
        self.scope = scope
        self.issuedAt = issuedAt
        self.serverClockOffset = serverClockOffset
    }

    /// The fields of a successful token response (RFC 6749 §5.1).
    private struct TokenResponse: Decodable {
        var accessToken: String
        var tokenType: String
        var expiresIn: Double?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            accessToken = try container.decode(String.self, forKey: .accessToken)
            tokenType = try container.decode(String.self, forKey: .tokenType)
            // Some servers send the number as a string ("3600"); read it either way.
            if let number = try? container.decodeIfPresent(Double.self, forKey: .expiresIn) {
                expiresIn = number
            } else if let text = try? container.decodeIfPresent(String.self, forKey: .expiresIn) {
                guard let number = Double(text.trimmingCharacters(in: .whitespaces)) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .expiresIn, in: container, debugDescription: "expires_in is not a number")
                }
                expiresIn = number
            } else {
                expiresIn = nil
            }
            refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
            idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
            scope = try container.decodeIfPresent(String.self, forKey: .scope)
        }
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
    ///   - receivedAt: When the response arrived, by this device's clock.
    ///   - serverDate: The response's `Date` header, if it had one: `expires_in` then counts from the server's
    ///     time, and the difference between the two clocks is kept as ``serverClockOffset``.
    ///   - previous: The credentials being refreshed: a refresh response without `refresh_token` keeps theirs
    ///     (RFC 6749 §6 lets the server omit it).
    /// - Throws: ``OAuthError/invalidTokenResponse(_:)`` when the body is not such a response, its token type is
    ///   not `Bearer`, or its `expires_in` is not a number of seconds between 0 and a century.
    public init(
        tokenResponse body: Data, receivedAt: Date, serverDate: Date? = nil, previous: OAuthCredentials? = nil
    ) throws(OAuthError) {
        let response: TokenResponse
        do {
            response = try JSONDecoder().decode(TokenResponse.self, from: body)
        } catch {
            throw .invalidTokenResponse("the token response is not the JSON RFC 6749 §5.1 describes: \(error)")
        }
        guard response.tokenType.lowercased() == "bearer" else {
            throw .invalidTokenResponse("the token type is '\(response.tokenType)', not 'Bearer'")
        }
        guard receivedAt.timeIntervalSinceReferenceDate.isFinite else {
            throw .invalidTokenResponse("the time of receipt is not a valid date")
        }
        if let expiresIn = response.expiresIn, !(0...Self.longestLifetime).contains(expiresIn) {
            throw .invalidTokenResponse("expires_in \(expiresIn) is not a usable number of seconds")
        }
        let offset = serverDate.map { $0.timeIntervalSince(receivedAt) }.flatMap { $0.isFinite ? $0 : nil }
        let issued = serverDate != nil && offset != nil ? serverDate! : receivedAt
        self.init(
            accessToken: response.accessToken,
            refreshToken: response.refreshToken ?? previous?.refreshToken,
            idToken: response.idToken ?? previous?.idToken,
            expirationDate: response.expiresIn.map { issued.addingTimeInterval($0) },
            scope: response.scope ?? previous?.scope,
            issuedAt: issued,
            serverClockOffset: offset
        )
    }

    /// The longest `expires_in` read: a century. Beyond it a server's value is nonsense.
    private static let longestLifetime: TimeInterval = 3_155_760_000

    /// This device's time `now` in the clock ``issuedAt`` and ``expirationDate`` are in.
    public func serverTime(at now: Date) -> Date {
        now.addingTimeInterval(serverClockOffset ?? 0)
    }

    /// Whether the access token has expired at `now` (this device's clock), or will within `window`. A token
    /// without an expiry never expires by this measure (the server's 401 will say).
    public func expires(within window: Duration = .zero, at now: Date) -> Bool {
        guard let expirationDate else { return false }
        return expirationDate.timeIntervalSince(serverTime(at: now)) <= window.seconds
    }

    /// How long the access token was issued for, when both ends are known.
    public var lifetime: Duration? {
        lifetimeInSeconds.map { Duration(clampingSeconds: $0, to: .zero ... .century) }
    }

    /// ``lifetime`` in seconds, clamped the same way (NaN is zero): for the refresh deadline, which is asked on every
    /// request and computed in seconds, since `Duration` arithmetic goes through 128-bit integers.
    package var lifetimeInSeconds: TimeInterval? {
        guard let issuedAt, let expirationDate else { return nil }
        let seconds = expirationDate.timeIntervalSince(issuedAt)
        return seconds.isNaN ? 0 : min(max(seconds, 0), Duration.century.seconds)
    }

    /// `Authorization: Bearer <token>` (RFC 6750 §2.1).
    public var authorizationHeaderValue: String { "Bearer " + accessToken }

    public var description: String {
        let expiry =
            expirationDate.map { date in
                date.timeIntervalSinceReferenceDate.isFinite ? "expires \(date)" : "an invalid expiry"
            } ?? "no expiry"
        return
            "OAuthCredentials(access token <redacted>, refresh token \(refreshToken == nil ? "none" : "<redacted>"), \(expiry))"
    }

    public var debugDescription: String { description }
}

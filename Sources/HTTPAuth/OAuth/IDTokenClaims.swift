public import Foundation
import HTTP

/// The claims of an OpenID Connect ID token that a client must check (OpenID Connect Core 2 and 3.1.3.7).
///
/// The token's signature is not checked here: Core 3.1.3.7 step 6 lets a client that received the ID token
/// directly from the token endpoint over TLS rely on that channel instead.
///
/// ```swift
/// let claims = try IDTokenClaims(jwt: credentials.idToken!)
/// try claims.validate(issuer: "https://id.example.com", clientID: "my-app", nonce: sentNonce, now: Date())
/// ```
public struct IDTokenClaims: Sendable, Hashable {
    /// `iss`: who issued the token.
    public var issuer: String
    /// `sub`: whom it is about.
    public var subject: String
    /// `aud`: for whom it is meant (one or more client IDs).
    public var audience: [String]
    /// `exp`: when it expires.
    public var expiration: Date
    /// `iat`: when it was issued.
    public var issuedAt: Date
    /// `nbf`: the time before which it must not be accepted, if set.
    public var notBefore: Date?
    /// `nonce`: the value the client sent with the authorization request, echoed back.
    public var nonce: String?
    /// `azp`: the party the token was issued to, required when there are several audiences.
    public var authorizedParty: String?

    private struct Payload: Decodable {
        var iss: String
        var sub: String
        var aud: Audience
        var exp: Double
        var iat: Double
        var nbf: Double?
        var nonce: String?
        var azp: String?
    }

    /// `aud` is a string or an array of strings.
    private struct Audience: Decodable {
        var values: [String]
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let one = try? container.decode(String.self) {
                values = [one]
            } else {
                values = try container.decode([String].self)
            }
        }
    }

    /// Reads the claims from a compact-serialized JWT (`header.payload.signature`).
    ///
    /// - Throws: ``OAuthError/invalidIDToken(_:)`` when the token is not three base64url parts or its payload
    ///   lacks a required claim.
    public init(jwt: String) throws(OAuthError) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .invalidIDToken("a JWT has three dot-separated parts; this one has \(parts.count)")
        }
        guard let json = Data(base64URLEncoded: String(parts[1])) else {
            throw .invalidIDToken("the payload is not base64url")
        }
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: json)
        } catch {
            throw .invalidIDToken("the payload lacks a required claim or has one of the wrong type: \(error)")
        }
        issuer = payload.iss
        subject = payload.sub
        audience = payload.aud.values
        expiration = Date(timeIntervalSince1970: payload.exp)
        issuedAt = Date(timeIntervalSince1970: payload.iat)
        notBefore = payload.nbf.map { Date(timeIntervalSince1970: $0) }
        nonce = payload.nonce
        authorizedParty = payload.azp
    }

    /// Checks the claims as OpenID Connect Core 3.1.3.7 steps 2–4, 9, 10 and 11 require, the times on both sides.
    ///
    /// - Parameters:
    ///   - expectedIssuer: The issuer from the provider's discovery document; `iss` must equal it exactly.
    ///   - clientID: This client; `aud` must contain it, and when there are several audiences `azp` must be it.
    ///   - expectedNonce: The nonce sent with the authorization request, if one was; `nonce` must equal it.
    ///   - now: The current time, in the issuer's clock where it is known (see
    ///     ``OAuthCredentials/serverClockOffset``).
    ///   - allowedSkew: How far the client's clock may be from the server's: `exp` must be later than
    ///     `now - allowedSkew`, and `iat` and `nbf` (if present) no later than `now + allowedSkew`. 5 minutes by
    ///     default.
    ///   - maximumAge: How long ago `iat` may be: an ID token issued long before it arrives is a replay. 10
    ///     minutes by default, as AppAuth.
    /// - Throws: ``OAuthError/invalidIDToken(_:)`` naming the claim that failed.
    public func validate(
        issuer expectedIssuer: String,
        clientID: String,
        nonce expectedNonce: String?,
        now: Date,
        allowedSkew: Duration = .seconds(300),
        maximumAge: Duration = .seconds(600)
    ) throws(OAuthError) {
        let skew = allowedSkew.seconds
        guard issuer == expectedIssuer else {
            throw .invalidIDToken("iss is '\(issuer)', not the expected issuer '\(expectedIssuer)'")
        }
        guard audience.contains(clientID) else {
            throw .invalidIDToken("aud \(audience) does not contain this client, '\(clientID)'")
        }
        if audience.count > 1 || authorizedParty != nil {
            guard authorizedParty == clientID else {
                throw .invalidIDToken("azp is '\(authorizedParty ?? "missing")', not this client, '\(clientID)'")
            }
        }
        guard now.timeIntervalSince(expiration) < skew else {
            throw .invalidIDToken("the token expired at \(expiration)")
        }
        guard issuedAt.timeIntervalSince(now) <= skew else {
            throw .invalidIDToken("iat \(issuedAt) is in the future beyond the allowed clock skew")
        }
        guard now.timeIntervalSince(issuedAt) <= maximumAge.seconds else {
            throw .invalidIDToken("iat \(issuedAt) is more than \(maximumAge.seconds) s in the past: a replayed token")
        }
        if let notBefore, notBefore.timeIntervalSince(now) > skew {
            throw .invalidIDToken("nbf \(notBefore) is in the future beyond the allowed clock skew")
        }
        if let expectedNonce {
            guard nonce == expectedNonce else {
                throw .invalidIDToken("nonce does not match the one sent with the authorization request")
            }
        }
    }
}

import Foundation
import FuzzSupport
import HTTP
import HTTPAuth

/// What a token endpoint sends: ID tokens (`IDTokenClaims(jwt:)` and `validate`) and token responses
/// (`OAuthCredentials(tokenResponse:receivedAt:previous:)`, then `expires(within:at:)`, `lifetime`, descriptions
/// and `Codable`).
///
/// Oracles, beyond "no trap": `validate` passes exactly when OpenID Connect Core 3.1.3.7's rules hold (issuer,
/// audience, authorized party, expiry and issue time within the skew, nonce); credentials keep the previous
/// refresh token when the response has none; descriptions never show a token; credentials survive `Codable`.
enum TokenTarget: FuzzTarget {
    enum Case {
        case jwt(String, Validation)
        /// A JWT whose payload is this text, base64url-encoded between a fixed header and signature.
        case payload(String, Validation)
        case tokenResponse(String, receivedAt: Date, previous: Bool, window: Duration, now: Date)
    }

    /// The arguments of `validate`; `nil` ones are taken from the claims, so that most validations can pass.
    struct Validation {
        var issuer: String?
        var clientID: String?
        var nonce: Nonce
        var now: Date
        var allowedSkew: Duration?

        enum Nonce {
            case none, fromClaims
            case text(String)
        }
    }

    static func read(_ input: inout FuzzInput) -> Case {
        switch input.choice(3) {
        case 0: return .jwt(input.string(), readValidation(&input))
        case 1: return .payload(input.string(), readValidation(&input))
        default:
            return .tokenResponse(
                input.string(), receivedAt: input.date(), previous: input.bool(), window: input.duration(),
                now: input.date())
        }
    }

    static func readValidation(_ input: inout FuzzInput) -> Validation {
        Validation(
            issuer: input.optionalString(), clientID: input.optionalString(),
            nonce: {
                switch input.choice(3) {
                case 0: .none
                case 1: .fromClaims
                default: .text(input.string())
                }
            }(), now: input.date(), allowedSkew: input.bool() ? nil : input.duration())
    }

    static func jwt(payload: String) -> String {
        "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ." + base64URL(Data(payload.utf8)) + ".c2lnbmF0dXJl"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func run(_ input: inout FuzzInput) {
        switch read(&input) {
        case .jwt(let token, let validation): checkIDToken(token, validation)
        case .payload(let payload, let validation): checkIDToken(jwt(payload: payload), validation)
        case .tokenResponse(let body, let receivedAt, let previous, let window, let now):
            checkTokenResponse(body, receivedAt: receivedAt, previous: previous, window: window, now: now)
        }
    }

    static func checkIDToken(_ token: String, _ validation: Validation) {
        guard let claims = try? IDTokenClaims(jwt: token) else { return }
        let issuer = validation.issuer ?? claims.issuer
        let clientID = validation.clientID ?? claims.audience.first ?? ""
        let nonce: String? =
            switch validation.nonce {
            case .none: nil
            case .fromClaims: claims.nonce ?? ""
            case .text(let text): text
            }
        let skew = validation.allowedSkew ?? .seconds(300)
        let passes: Bool
        do {
            try claims.validate(
                issuer: issuer, clientID: clientID, nonce: nonce, now: validation.now, allowedSkew: skew)
            passes = true
        } catch {
            passes = false
            _ = error.description
        }
        // OpenID Connect Core 3.1.3.7 steps 2–4, 9, 10 and 11; `iat` at most ten minutes old (the default
        // maximumAge, as AppAuth) and not beyond the skew in the future; `nbf`, if present, not beyond the skew.
        let skewSeconds = skew / .seconds(1)
        let rules: [(String, Bool)] = [
            ("iss", claims.issuer == issuer),
            ("aud", claims.audience.contains(clientID)),
            (
                "azp",
                (claims.audience.count <= 1 && claims.authorizedParty == nil) || claims.authorizedParty == clientID
            ),
            ("exp", validation.now.timeIntervalSince(claims.expiration) < skewSeconds),
            ("iat", claims.issuedAt.timeIntervalSince(validation.now) <= skewSeconds),
            ("iat age", validation.now.timeIntervalSince(claims.issuedAt) <= 600),
            ("nbf", claims.notBefore.map { $0.timeIntervalSince(validation.now) <= skewSeconds } ?? true),
            ("nonce", nonce == nil || claims.nonce == nonce),
        ]
        let broken = rules.filter { !$0.1 }.map(\.0)
        FuzzCheck.expect(
            passes == broken.isEmpty,
            passes ? "validate passes although \(broken) fail" : "validate fails although every rule holds")
    }

    static func checkTokenResponse(_ body: String, receivedAt: Date, previous: Bool, window: Duration, now: Date) {
        let earlier = OAuthCredentials(
            accessToken: "previous-access-token", refreshToken: "previous-refresh-token", idToken: "previous.id.token",
            scope: "openid")
        guard
            let credentials = try? OAuthCredentials(
                tokenResponse: Data(body.utf8), receivedAt: receivedAt, previous: previous ? earlier : nil)
        else { return }
        if previous {
            FuzzCheck.expect(
                credentials.refreshToken != nil, "a refresh response without refresh_token dropped the old one")
        }
        _ = credentials.expires(within: window, at: now)
        _ = credentials.expires(at: now)
        _ = credentials.lifetime
        _ = credentials.authorizationHeaderValue

        let descriptions = [credentials.description, credentials.debugDescription, "\(credentials)"]
        for text in descriptions {
            for (name, secret) in [("access", credentials.accessToken), ("refresh", credentials.refreshToken ?? "")] {
                // A token that also occurs in a description of credentials holding other tokens is not a leak.
                let control = OAuthCredentials(
                    accessToken: "A", refreshToken: credentials.refreshToken == nil ? nil : "R",
                    expirationDate: credentials.expirationDate)
                guard secret.utf8.count >= 4, !control.description.containsBytes(of: secret) else { continue }
                FuzzCheck.expect(
                    !text.containsBytes(of: secret),
                    "a description shows the \(name) token: \(SwiftLiteral.string(text))")
            }
        }

        let dates = [credentials.expirationDate, credentials.issuedAt].compactMap { $0?.timeIntervalSinceReferenceDate }
        guard dates.allSatisfy(\.isFinite) else { return }
        do {
            let decoded = try JSONDecoder().decode(OAuthCredentials.self, from: JSONEncoder().encode(credentials))
            FuzzCheck.expect(decoded == credentials, "credentials change through Codable")
        } catch {
            FuzzCheck.fail("credentials do not survive Codable: \(error)")
        }
    }

    static func reproducer(_ input: inout FuzzInput) -> String {
        switch read(&input) {
        case .jwt(let token, let validation):
            return idTokenReproducer(SwiftLiteral.string(token), validation)
        case .payload(let payload, let validation):
            return "// payload: \(SwiftLiteral.string(payload))\n"
                + idTokenReproducer(SwiftLiteral.string(jwt(payload: payload)), validation)
        case .tokenResponse(let body, let receivedAt, let previous, let window, let now):
            return """
                let credentials = try OAuthCredentials(
                    tokenResponse: Data(\(SwiftLiteral.string(body)).utf8), receivedAt: \(SwiftLiteral.date(receivedAt)),
                    previous: \(previous ? "OAuthCredentials(accessToken: \"previous-access-token\", refreshToken: \"previous-refresh-token\", idToken: \"previous.id.token\", scope: \"openid\")" : "nil"))
                _ = credentials.expires(within: \(SwiftLiteral.duration(window)), at: \(SwiftLiteral.date(now)))
                _ = credentials.lifetime
                _ = credentials.description
                _ = try JSONDecoder().decode(OAuthCredentials.self, from: JSONEncoder().encode(credentials))
                """
        }
    }

    static func idTokenReproducer(_ token: String, _ validation: Validation) -> String {
        let nonce =
            switch validation.nonce {
            case .none: "nil"
            case .fromClaims: "claims.nonce ?? \"\""
            case .text(let text): SwiftLiteral.string(text)
            }
        return """
            let claims = try IDTokenClaims(jwt: \(token))
            try claims.validate(
                issuer: \(validation.issuer.map(SwiftLiteral.string) ?? "claims.issuer"),
                clientID: \(validation.clientID.map(SwiftLiteral.string) ?? "claims.audience.first ?? \"\""),
                nonce: \(nonce), now: \(SwiftLiteral.date(validation.now)),
                allowedSkew: \(SwiftLiteral.duration(validation.allowedSkew ?? .seconds(300))))
            """
    }
}

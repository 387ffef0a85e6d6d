import Foundation
import HTTP
import Testing

@testable import HTTPAuth

@Suite(.noHang) struct OAuthCredentialsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func readsATokenResponse() throws {
        let body = Data(
            #"{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-1","scope":"openid"}"#
                .utf8
        )
        let credentials = try OAuthCredentials(tokenResponse: body, receivedAt: now)
        #expect(credentials.accessToken == "at-1")
        #expect(credentials.refreshToken == "rt-1")
        #expect(credentials.expirationDate == now.addingTimeInterval(3600))
        #expect(credentials.scope == "openid")
        #expect(credentials.authorizationHeaderValue == "Bearer at-1")
    }

    @Test func aRefreshResponseWithoutARefreshTokenKeepsTheOldOne() throws {
        let old = OAuthCredentials(accessToken: "at-1", refreshToken: "rt-1", idToken: "id-1")
        let body = Data(#"{"access_token":"at-2","token_type":"bearer","expires_in":60}"#.utf8)
        let refreshed = try OAuthCredentials(tokenResponse: body, receivedAt: now, previous: old)
        #expect(refreshed.accessToken == "at-2")
        #expect(refreshed.refreshToken == "rt-1")
        #expect(refreshed.idToken == "id-1")
    }

    @Test func rejectsResponsesThatAreNotBearerTokens() {
        #expect(throws: OAuthError.self) {
            try OAuthCredentials(tokenResponse: Data(#"{"access_token":"x","token_type":"mac"}"#.utf8), receivedAt: now)
        }
        #expect(throws: OAuthError.self) {
            try OAuthCredentials(tokenResponse: Data(#"{"error":"invalid_grant"}"#.utf8), receivedAt: now)
        }
    }

    @Test func expiryWithinAWindow() {
        let credentials = OAuthCredentials(accessToken: "a", expirationDate: now.addingTimeInterval(30))
        #expect(!credentials.expires(at: now))
        #expect(credentials.expires(within: .seconds(60), at: now))
        #expect(credentials.expires(at: now.addingTimeInterval(30)))
        #expect(!OAuthCredentials(accessToken: "a").expires(within: .seconds(3600), at: now))
    }

    @Test func descriptionsShowNoToken() {
        let credentials = OAuthCredentials(accessToken: "secret-at", refreshToken: "secret-rt")
        #expect(!credentials.description.contains("secret"))
        #expect(!String(reflecting: credentials).contains("secret"))
    }
}

@Suite(.noHang) struct IDTokenClaimsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func jwt(_ claims: [String: Any]) -> String {
        let header = Data(#"{"alg":"RS256","typ":"JWT"}"#.utf8).base64URLEncodedString()
        let payload = (try! JSONSerialization.data(withJSONObject: claims)).base64URLEncodedString()
        return "\(header).\(payload).c2lnbmF0dXJl"
    }

    private func claims(_ overrides: [String: Any] = [:]) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": "https://id.example.com", "sub": "alice", "aud": "my-app",
            "exp": now.timeIntervalSince1970 + 300, "iat": now.timeIntervalSince1970, "nonce": "n-1",
        ]
        for (key, value) in overrides { claims[key] = value }
        return claims
    }

    private func validate(_ claims: [String: Any], nonce: String? = "n-1") throws(OAuthError) {
        try IDTokenClaims(jwt: jwt(claims)).validate(
            issuer: "https://id.example.com", clientID: "my-app", nonce: nonce, now: now)
    }

    /// The description of the `OAuthError` that `body` throws, or nil when it throws nothing.
    private func reason(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as OAuthError {
            return error.description
        } catch {
            return "not an OAuthError: \(error)"
        }
    }

    @Test func validClaimsPass() throws {
        try validate(claims())
        try validate(claims(["aud": ["my-app", "other"], "azp": "my-app"]))
        let read = try IDTokenClaims(jwt: jwt(claims()))
        #expect(read.subject == "alice")
        #expect(read.audience == ["my-app"])
        #expect(read.expiration == now.addingTimeInterval(300))
    }

    @Test func eachRuleOfCore3137Fails() {
        #expect(reason { try validate(claims(["iss": "https://evil.example.com"])) }?.contains("iss") == true)
        #expect(reason { try validate(claims(["aud": "someone-else"])) }?.contains("aud") == true)
        #expect(reason { try validate(claims(["aud": ["my-app", "other"]])) }?.contains("azp") == true)
        #expect(
            reason { try validate(claims(["aud": ["my-app", "other"], "azp": "other"])) }?.contains("azp") == true)
        #expect(reason { try validate(claims(["exp": now.timeIntervalSince1970 - 301])) }?.contains("expired") == true)
        #expect(reason { try validate(claims(["iat": now.timeIntervalSince1970 + 301])) }?.contains("future") == true)
        #expect(reason { try validate(claims(["nonce": "n-2"])) }?.contains("nonce") == true)
        #expect(reason { try validate(claims(), nonce: "n-9") }?.contains("nonce") == true)
    }

    @Test func issuedAtIsCheckedOnBothSides() throws {
        let past = reason { try validate(claims(["iat": now.timeIntervalSince1970 - 601])) }
        #expect(past?.contains("in the past") == true)
        try validate(claims(["iat": now.timeIntervalSince1970 - 599]))
        // The limit is configurable.
        let strict = reason {
            try IDTokenClaims(jwt: jwt(claims(["iat": now.timeIntervalSince1970 - 120]))).validate(
                issuer: "https://id.example.com", clientID: "my-app", nonce: "n-1", now: now, maximumAge: .seconds(60))
        }
        #expect(strict?.contains("60.0 s in the past") == true)
    }

    @Test func notBeforeIsChecked() throws {
        #expect(reason { try validate(claims(["nbf": now.timeIntervalSince1970 + 301])) }?.contains("nbf") == true)
        try validate(claims(["nbf": now.timeIntervalSince1970 + 60]))
        try validate(claims(["nbf": now.timeIntervalSince1970 - 3_600]))
    }

    @Test func withinTheClockSkewIsAccepted() throws {
        try validate(claims(["exp": now.timeIntervalSince1970 - 60]))
        try validate(claims(["iat": now.timeIntervalSince1970 + 60]))
    }

    @Test func malformedTokensAreClearErrors() {
        #expect(reason { _ = try IDTokenClaims(jwt: "not-a-jwt") }?.contains("three") == true)
        #expect(reason { _ = try IDTokenClaims(jwt: "a.%%%.c") }?.contains("base64url") == true)
        #expect(reason { _ = try IDTokenClaims(jwt: jwt(["iss": "x"])) }?.contains("required claim") == true)
    }
}

/// Token responses and dates the fuzzers broke.
@Suite(.noHang) struct OAuthCredentialsFuzzFindingsTests {
    @Test func aHugeExpiresInIsRefusedAndAnInvalidDateIsToo() {
        let huge = Data(#"{"access_token":"a","token_type":"Bearer","expires_in":1e300}"#.utf8)
        #expect(throws: OAuthError.self) { try OAuthCredentials(tokenResponse: huge, receivedAt: Date()) }
        let fine = Data(#"{"access_token":"a","token_type":"Bearer","expires_in":5}"#.utf8)
        #expect(throws: OAuthError.self) {
            try OAuthCredentials(tokenResponse: fine, receivedAt: Date(timeIntervalSince1970: .nan))
        }
    }

    @Test func credentialsWithNonsenseDatesDescribeThemselvesWithoutTrapping() {
        let credentials = OAuthCredentials(
            accessToken: "a", expirationDate: Date(timeIntervalSince1970: .nan),
            issuedAt: Date(timeIntervalSince1970: .infinity))
        #expect(credentials.description.contains("invalid expiry"))
        #expect(credentials.lifetime == .zero)
    }
}

/// Issue 26, item 4: every setting is reachable from every initialiser, with the documented defaults.
@Suite(.noHang) struct OAuthConfigurationTests {
    static let issuer = URL(string: "https://id.example.com")!
    static let callback = URL(string: "com.example.app:/callback")!

    @Test func theIssuerInitialisersTakeEverySetting() {
        let limit = RefreshLimit(maximumRefreshes: 2, window: .seconds(30))
        let logout = URL(string: "com.example.app:/signed-out")!
        let prompt = [URLQueryItem(name: "prompt", value: "login")]
        let byOrigins = OAuthConfiguration(
            issuer: Self.issuer, clientID: "worker", redirectURI: Self.callback, resourceOrigins: ["api.example.com"],
            refreshWindow: .seconds(10), onInvalidGrant: .fail, refreshLimit: limit, allowedClockSkew: .seconds(5),
            idTokenMaximumAge: .seconds(60), postLogoutRedirectURI: logout, additionalAuthorizationParameters: prompt)
        let byHosts = OAuthConfiguration(
            issuer: Self.issuer, clientID: "worker", redirectURI: Self.callback, resourceOrigins: ["api.example.com"],
            refreshWindow: .seconds(10), onInvalidGrant: .fail, refreshLimit: limit, allowedClockSkew: .seconds(5),
            idTokenMaximumAge: .seconds(60), postLogoutRedirectURI: logout, additionalAuthorizationParameters: prompt)
        for configuration in [byOrigins, byHosts] {
            #expect(configuration.endpoints == .discover(issuer: Self.issuer))
            #expect(configuration.resourceOrigins == ["https://api.example.com"])
            #expect(configuration.refreshWindow == .seconds(10))
            #expect(configuration.onInvalidGrant == .fail)
            #expect(configuration.refreshLimit == limit)
            #expect(configuration.allowedClockSkew == .seconds(5))
            #expect(configuration.idTokenMaximumAge == .seconds(60))
            #expect(configuration.postLogoutRedirectURI == logout)
            #expect(configuration.additionalAuthorizationParameters == prompt)
        }
    }

    @Test func theDefaultsAreTheDocumentedOnes() {
        let configuration = OAuthConfiguration(
            issuer: Self.issuer, clientID: "app", redirectURI: Self.callback, resourceOrigins: ["api.example.com"])
        #expect(configuration.scopes == ["openid"])
        #expect(configuration.refreshWindow == .seconds(60))
        #expect(configuration.onInvalidGrant == .logIn)
        #expect(configuration.refreshLimit == RefreshLimit(maximumRefreshes: 5, window: .seconds(60)))
        #expect(configuration.allowedClockSkew == .seconds(300))
        #expect(configuration.idTokenMaximumAge == .seconds(600))
        #expect(configuration.postLogoutRedirectURI == nil)
        #expect(configuration.additionalAuthorizationParameters.isEmpty)
    }
}

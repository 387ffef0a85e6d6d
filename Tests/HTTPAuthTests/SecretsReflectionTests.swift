import Foundation
import HTTP
import HTTPAuth
import Testing

/// Credentials, tokens, proof keys and configurations seen through reflection — `dump`, `Mirror`,
/// `String(reflecting:)`, what debuggers and crash reporters show — never show their secrets, wherever they sit:
/// alone, in a request's options, in a loader's state.
@Suite(.noHang) struct SecretsReflectionTests {
    private static let secret = "S3CR3TVALUE7x"

    private func views(_ value: Any) -> [(String, String)] {
        var dumped = ""
        dump(value, to: &dumped, maxDepth: 30)
        return [("dump", dumped), ("Mirror", walked(value)), ("String(reflecting:)", String(reflecting: value))]
    }

    private func walked(_ value: Any, depth: Int = 0) -> String {
        guard depth < 30 else { return "" }
        var text = String(describing: value) + "\n"
        for child in Mirror(reflecting: value).children {
            text += (child.label ?? "-") + ": " + walked(child.value, depth: depth + 1)
        }
        return text
    }

    private func expectHidden(
        _ value: Any, secrets: [String] = [secret], showing visible: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (view, text) in views(value) {
            for secret in secrets {
                #expect(!text.contains(secret), "\(view) shows \(secret):\n\(text)", sourceLocation: sourceLocation)
            }
            // `String(reflecting:)` is the description, which shows less: it only has to hide.
            for shown in visible where view != "String(reflecting:)" {
                #expect(
                    text.contains(shown), "\(view) does not show \(shown):\n\(text)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func basicCredentialsShowTheUserNameOnly() {
        let credentials = BasicCredentials(username: "ann", password: Self.secret)
        expectHidden(credentials, showing: ["ann", "<redacted>"])
        var request = HTTPRequest(host: "api.example.com", path: "/reports")
        request.basicCredentials = credentials
        expectHidden(request, showing: ["ann", "BasicCredentials"])
        expectHidden(BasicAuth(origins: ["api.example.com"], credentials: credentials), showing: [])
    }

    @Test func oauthCredentialsShowNoToken() throws {
        let credentials = OAuthCredentials(
            accessToken: Self.secret + "a", refreshToken: Self.secret + "r", idToken: Self.secret + "i",
            expirationDate: Date(timeIntervalSince1970: 1_800_000_000), scope: "openid profile")
        expectHidden(credentials, showing: ["openid profile", "<redacted>", "2027"])
        let withoutRefresh = OAuthCredentials(accessToken: Self.secret)
        expectHidden(withoutRefresh, showing: ["none"])
    }

    @Test func aProofKeyShowsItsChallengeNotItsVerifier() throws {
        let pkce = try PKCE(verifier: Self.secret + String(repeating: "v", count: 40))
        expectHidden(pkce, showing: [pkce.challenge, "S256", "<redacted>"])
    }

    @Test func configurationsAndGrantsShowNoClientSecret() throws {
        var configuration = OAuthConfiguration(
            issuer: try #require(URL(string: "https://id.example.com")), clientID: "my-app",
            clientSecret: Self.secret, redirectURI: try #require(URL(string: "com.example.app:/oauth/callback")),
            resourceOrigins: ["api.example.com"])
        configuration.additionalAuthorizationParameters = [
            URLQueryItem(name: "login_hint", value: "ann"), URLQueryItem(name: "client_assertion", value: Self.secret),
        ]
        expectHidden(configuration, showing: ["my-app", "id.example.com", "login_hint=ann", "<redacted>"])
        let grant = ClientCredentialsGrant(
            tokenEndpoint: try #require(URL(string: "https://id.example.com/token")), clientID: "service",
            clientSecret: Self.secret)
        expectHidden(grant, showing: ["service"])
    }
}

import Foundation
import HTTP
import HTTPAuth
import Testing

/// `print(chain)` with the authentication loaders: `Auth`'s sub-loaders as labelled branches, the chain going on
/// after `Auth` at its level, and no secret anywhere.
@Suite(.noHang) struct ChainDescriptionTests {
    static func oauth(endpoints: OAuthConfiguration.Endpoints) -> OAuth {
        OAuth(
            configuration: OAuthConfiguration(
                endpoints: endpoints,
                clientID: "demo-app",
                clientSecret: "client-s3cret",
                redirectURI: URL(string: "com.example.app:/callback")!,
                scopes: ["openid", "email"],
                resourceOrigins: ["api.example.com", "http://127.0.0.1:8080"]
            ),
            credentials: OAuthCredentials(accessToken: "access-t0ken", refreshToken: "refresh-t0ken")
        )
    }

    @Test func authShowsEachSubLoaderUnderItsMethodAndTheChainGoesOn() {
        let oauth = Self.oauth(endpoints: .discover(issuer: URL(string: "https://id.example.com")!))
        let basic = BasicAuth(origins: ["https://b.example.com", "api.example.com"], credentials: ann)
        let chain =
            ResetGuard()
            --> ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
            --> Auth(loaders: [.oauth: oauth, .basic: basic])
            --> Retry(strategy: Backoff.never, budget: nil)
            --> MockLoader()

        #expect(
            chain.description == """
                ResetGuard
                --> ApplyEnvironment(environment: https://api.example.com/)
                --> Auth(methods: basic, oauth)
                    ├─ basic: BasicAuth(origins: https://api.example.com, https://b.example.com)
                    └─ oauth: OAuth(clientID: demo-app, issuer: https://id.example.com, scopes: openid email, \
                resourceOrigins: http://127.0.0.1:8080, https://api.example.com)
                --> Retry(strategy: Backoff(immediately, attempts: 1, maximumDelay: 30 s), budget: none)
                --> MockLoader
                """)
        for secret in ["client-s3cret", "access-t0ken", "refresh-t0ken", ann.password] {
            #expect(!chain.description.contains(secret))
        }
    }

    @Test func oauthWithKnownEndpointsNamesItsServer() {
        let oauth = Self.oauth(
            endpoints: .known(
                OAuthEndpoints(
                    authorization: URL(string: "https://login.example.com/authorize")!,
                    token: URL(string: "https://login.example.com:8443/token")!)))
        #expect(oauth.description.contains("server: https://login.example.com:8443,"))
    }

    @Test func authAtTheEndOfAChainEndsTheDescription() {
        let auth = Auth(loaders: [.basic: BasicAuth(origins: ["api.example.com"])])
        #expect(
            auth.description == """
                Auth(methods: basic)
                └─ basic: BasicAuth(origins: https://api.example.com)
                """)
    }

    @Test func aSubLoaderRegisteredUnderTwoMethodsIsDescribedOnce() {
        let basic = BasicAuth(origins: ["api.example.com"])
        let chain = Auth(loaders: [.basic: basic, AuthenticationMethod(rawValue: "legacy"): basic]) --> MockLoader()
        #expect(
            chain.description == """
                Auth(methods: basic, legacy)
                ├─ basic: BasicAuth(origins: https://api.example.com)
                └─ legacy: BasicAuth (described above)
                --> MockLoader
                """)
    }
}

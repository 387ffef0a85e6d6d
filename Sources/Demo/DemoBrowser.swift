import Foundation
import HTTP
import HTTPAuth

/// Plays the user's browser for the OAuth demo: on the provider's login page it signs in as `subject`
/// (oidc-provider-mock's form takes a `sub` and redirects back with a code), and it opens the end-session
/// page on logout. Credentials are kept in an in-memory store.
final class DemoBrowser: OAuthDelegate {
    let subject: String
    let store = InMemoryCredentialStore()
    private let transport = DemoTransport.makeTerminal()

    init(subject: String) {
        self.subject = subject
    }

    func savedCredentials(for loader: OAuth) async throws -> OAuthCredentials? {
        try await store.load(OAuthCredentials.self, for: "demo")
    }

    func save(_ credentials: OAuthCredentials, for loader: OAuth) async throws {
        try await store.save(credentials, for: "demo")
        print("   [store] saved \(credentials)")
    }

    func deleteCredentials(for loader: OAuth) async throws {
        try await store.delete(for: "demo")
        print("   [store] deleted the saved credentials")
    }

    func logIn(at url: URL, for loader: OAuth) async -> URL? {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let shown = ["scope", "code_challenge_method"].compactMap { name in
            query.first { $0.name == name }?.value.map { "\(name)=\($0)" }
        }
        print(
            "   [browser] login page \(url.path) (\(shown.joined(separator: ", ")), state, nonce); signing in as \(subject)"
        )
        var request = HTTPRequest(method: .post, url: url, body: FormBody(["sub": subject]))
        request.redirectPolicy = .doNotFollow
        guard let response = try? await transport.load(request).get(), response.status.rawValue == 302,
            let location = response.headers["Location"]
        else {
            print("   [browser] the login page did not redirect back")
            return nil
        }
        print("   [browser] redirected back to the app with a code")
        return URL(string: location)
    }

    func logOut(at url: URL, for loader: OAuth) async {
        let status = (try? await transport.load(HTTPRequest(url: url)).get())?.status
        print("   [browser] end-session page \(url.path): \(status.map { "\($0)" } ?? "unreachable")")
    }
}

/// Plays the user's phone in the device-grant section: the TV shows a code, and the "phone" enters it at the
/// verification page and accepts — plain POSTs to django-oauth-toolkit's own pages (the local test provider signs
/// every visitor in as its test user).
final class DemoPhone: DeviceAuthorizationDelegate {
    let terminal: HTTPLoader

    init(terminal: HTTPLoader) { self.terminal = terminal }

    func showUserCode(_ authorization: DeviceAuthorization, for grant: DeviceAuthorizationGrant) async {
        print(
            "   📺 the TV shows: go to \(authorization.verificationURI.absoluteString), enter \(authorization.userCode)")
        let terminal = terminal
        Task {
            try? await Task.sleep(for: .milliseconds(1_500))  // the user picks up the phone; the TV polls meanwhile
            let entry = HTTPRequest(
                method: .post, url: authorization.verificationURI, body: FormBody(["user_code": authorization.userCode])
            )
            guard case .success(let entered) = await terminal.load(entry), entered.status.rawValue == 302,
                let location = entered.headers["Location"],
                let confirmation = URL(string: location, relativeTo: authorization.verificationURI)?.absoluteURL
            else {
                print("   ✗ the phone could not enter the code")
                return
            }
            let decision = HTTPRequest(method: .post, url: confirmation, body: FormBody(["action": "accept"]))
            let status = await terminal.load(decision).response?.status
            print("   📱 the phone entered the code and accepted the TV: \(status.map { "\($0)" } ?? "no answer")")
        }
    }
}

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

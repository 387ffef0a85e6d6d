import Foundation
import HTTP
import HTTPAuth
import HTTPTestSupport
import Testing

// Every `swift` block of Sources/HTTPAuth/HTTPAuth.docc/Authentication.md is in this file, and
// `DocumentationTests.samplesMatchTheArticle` fails when one is not.

// Authentication.md, "Mark the requests that need credentials".
func reportsRequest() -> HTTPRequest {
    var request = HTTPRequest(path: "/reports")
    request.authenticationMethod = .basic
    return request
}

// Authentication.md, "Provide credentials".
final class LoginController: BasicAuthDelegate {
    func credentials(for loader: BasicAuth) async -> BasicCredentials? {
        // Show a login screen, read the Keychain…; nil fails the waiting requests with .cannotAuthenticate.
        BasicCredentials(username: "ann", password: "s3cret")
    }
}

// Authentication.md, "Assemble the chain". Builds a URLSessionLoader, never loads through it.
func makeAuthenticatedChain(login: LoginController) -> HTTPLoader {
    ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
        --> Auth(loaders: [.basic: BasicAuth(hosts: ["api.example.com"], delegate: login)])
        --> Retry()
        --> URLSessionLoader()
}

// Authentication.md, "Test it with a mock".
@Test func sendsTheCredentialsOnce() async {
    let mock = MockLoader().then(status: .ok)
    let chain =
        BasicAuth(hosts: ["api.example.com"], credentials: BasicCredentials(username: "ann", password: "pw"))
        --> mock
    var request = HTTPRequest(host: "api.example.com", path: "/reports")
    request.authenticationMethod = .basic
    _ = await chain.load(request)
    #expect(mock.receivedRequests.first?.headers["Authorization"] == "Basic YW5uOnB3")
}

@Suite struct DocumentationTests {
    @Test func theMarkedRequestIsAuthenticatedWithTheDelegatesCredentials() async {
        let login = LoginController()
        let mock = MockLoader().then(status: .ok)
        let chain =
            ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
            --> Auth(loaders: [.basic: BasicAuth(hosts: ["api.example.com"], delegate: login)])
            --> mock
        _ = await chain.load(reportsRequest())
        let expected = BasicCredentials(username: "ann", password: "s3cret").authorizationHeaderValue
        #expect(mock.receivedRequests.first?.headers["Authorization"] == expected)
        withExtendedLifetime(login) {}
    }

    @Test func theChainIsAssembledAsDescribed() {
        let login = LoginController()
        let chain = makeAuthenticatedChain(login: login)
        #expect(chain.nextLoader is Auth)
        #expect(chain.nextLoader?.nextLoader is Retry)
    }

    @Test(arguments: ["HTTPAuth.md", "Authentication.md"])
    func samplesMatchTheArticle(article: String) throws {
        let catalog = DocumentationSamples.catalog(of: "HTTPAuth", fromTestFile: #filePath)
        let missing = try DocumentationSamples.samplesMissing(
            from: #filePath, article: catalog.appendingPathComponent(article))
        #expect(missing.isEmpty, "\(article): samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

import Foundation
import HTTP
import Testing

// The example from README.md ("A chain per environment"), kept identical so the README cannot drift.
extension ServerEnvironment {
    fileprivate static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
    fileprivate static let development = ServerEnvironment(
        scheme: "http", host: "localhost", port: 8080, pathPrefix: "/v1")
}

private func makeChain(for environment: ServerEnvironment, verbose: Bool) -> HTTPLoader {
    ResetGuard()  // refuses requests while a reset (log out) runs
        --> ApplyEnvironment(environment: environment)  // relative requests go to this server
        --> FollowRedirects()  // redirects are followed here, hop by hop
        --> (verbose ? PrintLoader() : nil)  // an optional link: skipped when nil
        --> URLSessionLoader()  // the network
}

@Suite(.noHang) struct ReadmeExampleTests {
    @Test func theChainIsAssembledAsDescribed() {
        let chain = makeChain(for: .production, verbose: true)
        #expect(chain is ResetGuard)
        #expect(chain.nextLoader is ApplyEnvironment)
        #expect(chain.nextLoader?.nextLoader is FollowRedirects)
        #expect(chain.nextLoader?.nextLoader?.nextLoader is PrintLoader)
        #expect(chain.nextLoader?.nextLoader?.nextLoader?.nextLoader is URLSessionLoader)
        let quiet = makeChain(for: .development, verbose: false)
        #expect(quiet.nextLoader?.nextLoader?.nextLoader is URLSessionLoader)
    }

    @Test func inTestsTheTerminalIsAMock() async {
        let chain = ApplyEnvironment(environment: .production) --> MockLoader().then(status: .notFound)
        let result = await chain.load(HTTPRequest(path: "/people/42"))
        #expect(result.response?.status == .notFound)  // a 404 lands in .success
        #expect(result.response?.request.url?.absoluteString == "https://api.example.com/v1/people/42")
    }
}

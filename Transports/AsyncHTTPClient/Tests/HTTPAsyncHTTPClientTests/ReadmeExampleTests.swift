import Foundation
import HTTP
import HTTPAsyncHTTPClient
import Testing

// The example from README.md ("Which transport?"), kept identical so the README cannot drift.
extension ServerEnvironment {
    fileprivate static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

@Suite(.timeLimit(.minutes(3))) struct ReadmeExampleTests {
    @Test func theServerChainEndsInTheAsyncHTTPClientLoaderAndShutsDown() async throws {
        let terminal = AsyncHTTPClientLoader()  // its own client; (client:) borrows yours
        let chain = ApplyEnvironment(environment: .production) --> FollowRedirects() --> Retry() --> terminal
        // … and when the server stops:
        await terminal.shutdown()

        #expect(chain.nextLoader?.nextLoader?.nextLoader === terminal)
        let afterShutdown = await terminal.load(HTTPRequest(url: URL(string: "https://api.example.com/v1/people/42")!))
        #expect(afterShutdown.error?.code == .cannotConnect, "\(afterShutdown)")
    }
}

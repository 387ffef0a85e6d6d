import Foundation
import HTTP
import HTTPLogging
import InMemoryLogging
import Logging
import ObservabilityTestSupport
import Testing

// The `swift` blocks of Sources/HTTPLogging/HTTPLogging.docc, each in a test: a block that stops compiling, or
// stops doing what the article says, fails here. Keep them in step.

@Suite(.noHang) struct LoggingDocumentationTests {
    @Test func theLandingPagesChainLogsRetriesAndFailuresAtNotice() async throws {
        let (base, handler) = inMemoryLogger()
        // From HTTPLogging.md:
        var logger = base
        logger.logLevel = .notice  // retries, 4xx, 5xx and failures
        let chain =
            Observe(HTTPEventLogger(logger: logger)) --> ApplyEnvironment(environment: .production)
            --> Retry() --> URLSessionLoader()

        #expect("\(chain)".contains("ApplyEnvironment"))
        let event = HTTPEvent(
            kind: .loadFinished, loadID: LoadID(rawValue: 1), request: HTTPRequest(host: "api.example.com"),
            result: .success(HTTPResponse(request: HTTPRequest(host: "api.example.com"), status: .notFound)))
        HTTPEventLogger(logger: logger).handle(event)
        HTTPEventLogger(logger: logger).handle(
            HTTPEvent(kind: .loadStarted, loadID: event.loadID, request: event.request))
        #expect(handler.entries.map(\.level) == [.notice])
    }

    @Test func theArticlesRedactionHidesTheAppsOwnSecrets() async throws {
        let (logger, handler) = inMemoryLogger()
        // From LoggingLoads.md:
        let chain =
            Observe(HTTPEventLogger(logger: logger, redaction: .standard.adding("X-Session")))
            --> ApplyEnvironment(environment: .production) --> Retry() --> FollowRedirects() --> URLSessionLoader()

        #expect("\(chain)".contains("FollowRedirects"))
        let request = HTTPRequest(host: "api.example.com", path: "/me", query: [.init(name: "x-session", value: "s3")])
        HTTPEventLogger(logger: logger, redaction: .standard.adding("X-Session"))
            .handle(HTTPEvent(kind: .loadStarted, loadID: LoadID(rawValue: 2), request: request))
        let url = try #require(handler.entries.first?.metadata["url.full"]?.description)
        #expect(url.hasPrefix("https://api.example.com/me?x-session="))
        #expect(!url.contains("s3"))
    }
}

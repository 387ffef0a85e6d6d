import Foundation
import HTTP
import HTTPLogging
import InMemoryLogging
import Logging
import ObservabilityTestSupport
import Testing

@Suite(.noHang) struct PrintLoaderLoggerTests {
    @Test func printLoaderLinesGoToTheLoggerAtItsLevel() async throws {
        let (logger, handler) = inMemoryLogger()
        let chain = PrintLoader(logger: logger, level: .info) --> MockLoader().then(status: .ok, body: Data(count: 213))

        _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/people/42"))

        let entries = handler.entries
        #expect(entries.count == 2)
        #expect(entries.allSatisfy { $0.level == .info && $0.metadata.isEmpty })
        #expect(entries.first?.message.description.hasPrefix("→ #") == true)
        #expect(entries.first?.message.description.hasSuffix(" GET https://api.example.com/people/42") == true)
        #expect(
            entries.last?.message.description.contains("200 OK GET https://api.example.com/people/42 · 213 bytes")
                == true)
    }

    @Test func linesBelowTheLoggersLevelAreDropped() async throws {
        let (logger, handler) = inMemoryLogger(level: .info)
        let chain = PrintLoader(logger: logger) --> MockLoader().then(status: .ok)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(handler.entries.isEmpty)
    }

    @Test func printedLinesWithHeaderFieldsShowNoSecret() async throws {
        let (logger, handler) = inMemoryLogger()
        let mock = MockLoader()
            .then(status: .serviceUnavailable, headers: ["Set-Cookie": "session=\(Secrets.bearerToken)"])
            .then(failureQuotingSecrets)
        let chain = PrintLoader(logger: logger, includesHeaders: true) --> retryAtOnce(attempts: 2) --> mock

        _ = await chain.load(Secrets.request())

        let lines = handler.entries.map(\.message.description)
        #expect(lines.count == 3)  // the request, the retry, the failure
        #expect(lines.first?.contains("Authorization: Bearer <redacted>") == true)
        for line in lines { #expect(Secrets.found(in: line).isEmpty, "\(line)") }
    }
}

import Foundation
import HTTP
import Testing

/// An error's description, and PrintLoader's line for it, name the underlying error once: a message that already
/// quotes its cause is not followed by the same cause again.
@Suite(.noHang) struct HTTPErrorDescriptionTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The number of times `part` occurs in `text`.
    static func occurrences(of part: String, in text: String) -> Int {
        text.ranges(of: part).count
    }

    @Test func aMessageThatQuotesItsCauseIsNotFollowedByItAgain() async throws {
        // ModifyRequest's message quotes what its closure threw, and keeps it as the underlying error.
        let chain = ModifyRequest { _ in throw Failure(description: "the clock is unset") } --> MockLoader()
        let error = try #require(await chain.load(HTTPRequest(host: "example.com")).error)
        #expect(error.message == "ModifyRequest's closure threw: the clock is unset")
        #expect(error.underlyingError is Failure)
        #expect(Self.occurrences(of: "the clock is unset", in: error.description) == 1, "\(error)")
        #expect(!error.description.contains("underlying"), "\(error)")
    }

    @Test func aCauseTheMessageDoesNotNameIsNamedOnce() {
        let request = HTTPRequest(host: "example.com", path: "/x")
        let error = HTTPError(
            .unknown, request: request, message: "could not save the body",
            underlyingError: Failure(description: "disk full"))
        #expect(
            error.description == "unknown: GET https://example.com/x — could not save the body (underlying: disk full)")
    }

    @Test func anUnderlyingHTTPErrorIsItsCodeAndMessageWithoutTheRequestAgain() async throws {
        // A retry that cannot resend its body keeps the attempt's failure as its cause: the URL is named once.
        let mock = MockLoader().then(failWith: .timedOut)
        let retry = Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 3), budget: nil)
        var request = HTTPRequest(method: .put, host: "example.com", path: "/upload")
        request.body = StreamBody(AsyncStream<Data> { $0.finish() })
        let error = try #require(await (retry --> mock).load(request).error)
        #expect(error.code == .bodyNotReplayable)
        #expect(Self.occurrences(of: "https://example.com/upload", in: error.description) == 1, "\(error)")
        #expect(error.description.hasSuffix("(underlying: timedOut — the server did not answer in time)"), "\(error)")
    }

    @Test func randomMessagesNameTheirCauseOnceInTheDescriptionAndInPrintLoadersLine() async {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        // Messages from one alphabet, causes from another, so a cause occurs in a message only where it was put.
        func words(_ letters: String, count: Int) -> String {
            (0..<count).map { _ in
                String((0..<Int.random(in: 1...8, using: &random)).map { _ in letters.randomElement(using: &random)! })
            }.joined(separator: " ")
        }
        for round in 0..<200 {
            let cause = "cause " + words("nopqrstuvwxyz", count: Int.random(in: 1...4, using: &random))
            let quotesCause = Bool.random(using: &random)
            let before = words("abcdefghijklm", count: Int.random(in: 0...5, using: &random))
            let after = words("abcdefghijklm", count: Int.random(in: 0...3, using: &random))
            let message = quotesCause ? "\(before): \(cause) \(after)" : "\(before) \(after)"
            let context = "seed \(seed), round \(round): \(message) / \(cause)"
            let sink = Locked<[String]>([])
            let chain =
                PrintLoader { line in sink.withLock { $0.append(line) } }
                --> MockLoader().then { request in
                    .failure(
                        HTTPError(
                            .unknown, request: request, message: message,
                            underlyingError: Failure(description: cause)))
                }
            let error = await chain.load(HTTPRequest(host: "example.com")).error
            #expect(Self.occurrences(of: cause, in: error?.description ?? "") == 1, "\(context)")
            #expect(Self.occurrences(of: cause, in: sink.value.last ?? "") == 1, "\(context): \(sink.value)")
            #expect((error?.description.contains("(underlying: ") ?? false) == !quotesCause, "\(context)")
        }
    }

    @Test func aURLErrorNamedInTheMessageIsNotNamedAgain() async throws {
        // Nothing listens on port 9 of loopback (discard): URLSession fails to connect, and the message ends with the
        // URLError's name in parentheses — "… (URLError.cannotConnectToHost (-1004))" — which is the underlying error.
        let url = try #require(URL(string: "http://127.0.0.1:9/"))
        let error = try #require(await URLSessionLoader().load(HTTPRequest(url: url)).error)
        #expect(error.underlyingError is URLError)
        #expect(error.message.contains("(URLError."), "\(error)")
        #expect(Self.occurrences(of: "URLError.", in: error.description) == 1, "\(error)")
        #expect(!error.description.contains("underlying"), "\(error)")
    }
}

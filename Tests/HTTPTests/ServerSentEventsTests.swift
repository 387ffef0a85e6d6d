import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// The event-stream interpretation of the WHATWG HTML specification (§9.2.6), chunk by chunk.
@Suite(.noHang) struct ServerSentEventParserTests {
    static func parse(_ text: String, chunks: [Int]? = nil) -> [ServerSentEvent] {
        parse(Array(text.utf8), chunks: chunks)
    }

    /// `bytes` fed whole, or cut at `chunks` (sizes, the rest last).
    static func parse(_ bytes: [UInt8], chunks: [Int]? = nil) -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        guard let chunks else { return parser.parse(bytes) }
        var events: [ServerSentEvent] = []
        var rest = bytes[...]
        for size in chunks {
            events += parser.parse(rest.prefix(size))
            rest = rest.dropFirst(size)
        }
        return events + parser.parse(rest)
    }

    @Test func dataLinesAreJoinedWithLineFeeds() {
        #expect(Self.parse("data: YHOO\ndata: +2\ndata: 10\n\n") == [ServerSentEvent(data: "YHOO\n+2\n10")])
    }

    @Test func commentsIDsAndAnUnterminatedLastEventAreHandledAsTheSpecificationShows() {
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
        #expect(
            Self.parse(stream) == [
                ServerSentEvent(data: "first event", lastEventID: "1"),
                ServerSentEvent(data: "second event", lastEventID: ""),
            ])
    }

    @Test func aFieldWithoutAColonHasAnEmptyValue() {
        #expect(Self.parse("data\n\ndata\ndata\n\ndata:") == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
    }

    @Test func onlyOneSpaceAfterTheColonIsRemoved() {
        #expect(Self.parse("data:test\n\ndata: test\n\ndata:  test\n\n").map(\.data) == ["test", "test", " test"])
    }

    @Test func eventTypesApplyToOneEvent() {
        let events = Self.parse("event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\ndata: plain\n\n")
        #expect(events.map(\.type) == ["add", "remove", "message"])
        #expect(events.map(\.data) == ["73857293", "2153", "plain"])
    }

    @Test func lineEndingsAreCRLFLFOrCR() {
        let expected = [ServerSentEvent(data: "a\nb"), ServerSentEvent(data: "c")]
        #expect(Self.parse("data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n") == expected)
        #expect(Self.parse("data: a\rdata: b\r\rdata: c\r\r") == expected)
        #expect(Self.parse("data: a\ndata: b\r\n\rdata: c\n\r\n") == expected)
    }

    @Test func aLeadingByteOrderMarkIsSkippedOnceAndOnlyAtTheStart() {
        #expect(Self.parse("\u{FEFF}data: a\n\n") == [ServerSentEvent(data: "a")])
        // A second one is part of the first line: a field named "\u{FEFF}data", ignored.
        #expect(Self.parse("\u{FEFF}\u{FEFF}data: a\n\ndata: b\n\n") == [ServerSentEvent(data: "b")])
        for cut in 1...3 {
            #expect(Self.parse("\u{FEFF}data: a\n\n", chunks: [cut]) == [ServerSentEvent(data: "a")], "cut at \(cut)")
        }
    }

    @Test func anIDContainingNULIsIgnoredAndTheLastIDCarriesOver() {
        let events = Self.parse("id: 7\ndata: a\n\nid: 8\u{0}\ndata: b\n\ndata: c\n\n")
        #expect(events.map(\.lastEventID) == ["7", "7", "7"])
    }

    @Test func retryTakesDigitsOnly() {
        var parser = ServerSentEventParser()
        _ = parser.parse(Array("retry: 2500\n\n".utf8))
        #expect(parser.reconnectionDelay == .milliseconds(2_500))
        for invalid in ["retry: 1.5\n", "retry: -1\n", "retry: 10s\n", "retry:\n", "retry: ３\n"] {
            _ = parser.parse(Array(invalid.utf8))
            #expect(parser.reconnectionDelay == .milliseconds(2_500), "\(invalid.debugDescription)")
        }
    }

    @Test func theSourcesLastEventIDChangesOnlyWhenAnEventIsDispatched() {
        var parser = ServerSentEventParser()
        _ = parser.parse(Array("id: 1\ndata: a\n\nid: 2\ndata: cut off".utf8))
        #expect(parser.lastEventID == "1")
        parser.finish()
        #expect(parser.lastEventID == "1", "an id whose event never ended is not resumed from")
        // A new stream starts with an empty buffer: an event without an id makes the source's empty.
        _ = parser.parse(Array(": reconnected\n\n".utf8))
        #expect(parser.lastEventID == "")
    }

    @Test func invalidUTF8BecomesTheReplacementCharacter() {
        let bytes = Array("data: a".utf8) + [0xFF, 0xC3] + Array("\n\n".utf8)
        #expect(Self.parse(bytes).first?.data == "a\u{FFFD}\u{FFFD}")
    }

    /// Every way of cutting a stream into chunks gives the events of the whole: random cuts of a stream that has every
    /// construct — CRLF pairs, a BOM, multi-byte characters, comments, ids, retry, an unterminated tail.
    @Test func everySplitOfAStreamGivesTheSameEvents() {
        let stream = Array(
            ("\u{FEFF}: hi\r\nevent: greeting\r\ndata: Grüße 👋\r\ndata\r\n\r\nid: 42\rdata: second\r\rretry: 10\n"
                + "data:  spaced\nid: 4\u{0}3\n\n:comment\ndata: last\n\ndata: unterminated").utf8)
        let whole = Self.parse(stream)
        #expect(whole.count == 4)
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            var cuts: [Int] = []
            var left = stream.count
            while left > 0 {
                let size = Int.random(in: 0...min(left, 7), using: &random)
                cuts.append(size)
                left -= size
            }
            let split = Self.parse(stream, chunks: cuts)
            #expect(split == whole, "cuts \(cuts) (seed \(seed))")
            if split != whole { break }
        }
        // Byte by byte, too.
        #expect(Self.parse(stream, chunks: Array(repeating: 1, count: stream.count)) == whole)
    }

    /// Random streams over the format's alphabet never crash the parser, and agree with a reference reading of the
    /// whole text split into lines.
    @Test func randomStreamsAgreeWithAReferenceReading() {
        let alphabet = ["data", "event", "id", "retry", ":", " ", "\n", "\r", "\r\n", "x", "é", "\u{0}", "1"]
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...40, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
                .joined()
            #expect(Self.parse(text) == Self.reference(text), "\(text.debugDescription) (seed \(seed))")
        }
    }

    /// The specification's steps, on the whole text at once.
    static func reference(_ text: String) -> [ServerSentEvent] {
        var lines: [String] = []
        var current = ""
        var scalars = Array(text.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            if scalar == "\r" {
                if scalars.first == "\n" { scalars.removeFirst() }
                lines.append(current)
                current = ""
            } else if scalar == "\n" {
                lines.append(current)
                current = ""
            } else {
                current.unicodeScalars.append(scalar)
            }
        }
        var events: [ServerSentEvent] = []
        var data = ""
        var type = ""
        var id = ""
        for line in lines {
            if line.isEmpty {
                if !data.isEmpty {
                    if data.hasSuffix("\n") { data.removeLast() }
                    events.append(ServerSentEvent(type: type.isEmpty ? "message" : type, data: data, lastEventID: id))
                }
                (data, type) = ("", "")
                continue
            }
            if line.hasPrefix(":") { continue }
            var field = line
            var value = ""
            if let colon = line.firstIndex(of: ":") {
                field = String(line[..<colon])
                value = String(line[line.index(after: colon)...])
                if value.hasPrefix(" ") { value.removeFirst() }
            }
            switch field {
            case "event": type = value
            case "data": data += value + "\n"
            case "id": if !value.contains("\u{0}") { id = value }
            default: break
            }
        }
        return events
    }
}

/// `HTTPLoader.events(for:)`: reading, reconnecting with `Last-Event-ID` after the server's `retry`, and stopping.
@Suite(.noHang) struct ServerSentEventsTests {
    static let eventStream: HTTPHeaders = ["Content-Type": "text/event-stream; charset=utf-8"]

    static func body(_ text: String) -> Data { Data(text.utf8) }

    @Test func eventsAreReadAndTheStreamResumesWithTheLastEventIDAfterTheServersRetry() async throws {
        let mock = MockLoader()
            .then(
                status: .ok, headers: Self.eventStream,
                body: Self.body("id: 1\ndata: a\n\nretry: 5000\nid: 2\ndata: b\n\ndata: cut")
            )
            .then(status: .ok, headers: Self.eventStream, body: Self.body("data: c\n\n"))
            .then(status: .noContent)
        let clock = ManualClock()
        let chain = ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com")) --> mock
        let received = try await clock.movingOnEverySleep(by: .seconds(60)) {
            var received: [ServerSentEvent] = []
            for try await event in chain.events(for: HTTPRequest(path: "/feed"), clock: clock) {
                received.append(event)
            }
            return received
        }
        #expect(received.map(\.data) == ["a", "b", "c"])
        #expect(received.map(\.lastEventID) == ["1", "2", ""])
        let sent = mock.receivedRequests
        #expect(sent.count == 3)
        #expect(sent.allSatisfy { $0.headers["Accept"] == "text/event-stream" })
        #expect(sent.map { $0.headers["Last-Event-ID"] } == [nil, "2", nil])
        // The server's retry (5 s) is the event source's: it lasts for later reconnections too.
        #expect(clock.requestedDurations == [.seconds(5), .seconds(5)])
    }

    @Test func withoutARetryFieldTheDefaultDelayIsUsed() async throws {
        let mock = MockLoader()
            .then(status: .ok, headers: Self.eventStream, body: Self.body("data: a\n\n"))
            .then(failWith: .cannotConnect)
            .then(status: .noContent)
        let clock = ManualClock()
        let received = try await clock.movingOnEverySleep(by: .seconds(60)) {
            var received: [String] = []
            for try await event in mock.events(for: HTTPRequest(host: "h", path: "/feed"), clock: clock) {
                received.append(event.data)
            }
            return received
        }
        #expect(received == ["a"])
        #expect(clock.requestedDurations == [.seconds(3), .seconds(3)], "a failed connection is retried too")
    }

    @Test(arguments: [
        (HTTPStatus.ok, "application/json"), (.notFound, "text/event-stream"), (.internalServerError, "text/plain"),
    ])
    func aResponseThatIsNotAnEventStreamEndsItWithTheResponse(status: HTTPStatus, type: String) async throws {
        let mock = MockLoader().then(status: status, headers: ["Content-Type": type], body: Self.body("{}"))
        var iterator = mock.events(for: HTTPRequest(host: "h", path: "/feed")).makeAsyncIterator()
        let error = await #expect(throws: HTTPError.self) { _ = try await iterator.next() }
        #expect(error?.code == .invalidResponse)
        #expect(error?.response?.status == status)
        #expect(error?.message.contains("cannot be read or resumed") == true)
        #expect(mock.receivedRequests.count == 1, "not resumed")
    }

    @Test(arguments: [HTTPError.Code.resetInProgress, .cannotAuthenticate, .invalidRequest, .insecureConnection])
    func aFailureThatAnotherAttemptWouldNotChangeEndsTheStream(code: HTTPError.Code) async throws {
        let mock = MockLoader().then(failWith: code)
        var iterator = mock.events(for: HTTPRequest(host: "h", path: "/feed")).makeAsyncIterator()
        let error = await #expect(throws: HTTPError.self) { _ = try await iterator.next() }
        #expect(error?.code == code)
        #expect(mock.receivedRequests.count == 1)
    }

    /// The consumer stops: the transfer stops, and nothing reconnects.
    @Test func cancellingTheConsumerEndsTheStreamAtOnce() async throws {
        let mock = MockLoader()
            .then(status: .ok, headers: Self.eventStream, body: Self.body("data: a\n\n"))
            .then(status: .ok, headers: Self.eventStream, body: Self.body("data: b\n\n"))
        let clock = ManualClock()
        let first = Box(false)
        let consumer = Task {
            var count = 0
            for try await _ in mock.events(for: HTTPRequest(host: "h", path: "/feed"), clock: clock) {
                count += 1
                first.withLock { $0 = true }
            }
            return count
        }
        try await eventually { first.value && clock.sleeperCount == 1 }  // waiting to reconnect
        consumer.cancel()
        let outcome = await consumer.result
        guard case .failure(let error) = outcome else {
            Issue.record("the stream went on after its consumer was cancelled: \(outcome)")
            return
        }
        #expect((error as? HTTPError)?.code == .cancelled)
        #expect(mock.receivedRequests.count == 1)
    }
}

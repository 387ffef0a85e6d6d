import Foundation
import HTTP
import HTTPConnection
import Testing

/// Streamed bodies through `Connection`: chunks, lines and JSON Lines, with their errors, cancellation, resets and
/// backpressure.
@Suite(.noHang) struct ConnectionStreamsTests {
    struct Record: Codable, Sendable, Equatable {
        var id: Int
        var name: String
    }

    static let request = HTTPRequest(host: "api.example.com", path: "/export")
    static let records = Request<Record>(underlyingRequest: request)
    static let text = Request<String>(underlyingRequest: request)
    static let raw = Request<Data>(underlyingRequest: request)

    /// Every terminator (LF, CR, CRLF, a CRLF split across chunks, empty lines), multi-byte UTF-8, and a last line
    /// without a terminator.
    static let mixedText = Data("alpha\nbeta\r\ngamma\rdelta\n\n\r\nzoë ✓\r\r\nlast".utf8)
    static let mixedLines = ["alpha", "beta", "gamma", "delta", "", "", "zoë ✓", "", "last"]

    private func lines(of body: [Data], maximumLineLength: Int = 1 << 20) async throws -> [String] {
        let mock = StreamingMock().then(body)
        var lines: [String] = []
        for try await line in Connection(loader: mock.loader).lines(
            for: Self.text, maximumLineLength: maximumLineLength)
        {
            lines.append(line)
        }
        return lines
    }

    @Test func linesAreTheSameWhereverTheBodyIsCut() async throws {
        let text = Self.mixedText
        #expect(try await lines(of: [text]) == Self.mixedLines)
        for cut in 1..<text.count {
            #expect(try await lines(of: chunks(of: text, cutAt: [cut])) == Self.mixedLines, "cut at \(cut)")
        }
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        for _ in 0..<100 {
            let body = randomChunks(of: text, largest: 5, using: &random)
            #expect(try await lines(of: body) == Self.mixedLines, "seed \(seed), chunks \(body.map(\.count))")
        }
        #expect(try await lines(of: text.map { Data([$0]) }) == Self.mixedLines, "a byte at a time")
    }

    @Test func aBodyEndingWithATerminatorHasNoEmptyLastLine() async throws {
        #expect(try await lines(of: [Data("a\nb\n".utf8)]) == ["a", "b"])
        #expect(try await lines(of: [Data("a\r".utf8), Data("\n".utf8)]) == ["a"])
        #expect(try await lines(of: []).isEmpty)
    }

    @Test func jsonLinesAreDecodedElementByElementWhereverTheBodyIsCut() async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let records = (1...40).map { Record(id: $0, name: "person \($0) — ünïcode") }
        var text = Data()
        for (index, record) in records.enumerated() {
            text += try JSONEncoder().encode(record)
            text += Data((index.isMultiple(of: 3) ? "\r\n" : "\n").utf8)
            if index == 10 { text += Data("\n".utf8) }  // an empty line, skipped
        }
        for round in 0..<50 {
            let body = randomChunks(of: text, largest: round < 25 ? 3 : 64, using: &random)
            let mock = StreamingMock().then(headers: ["Content-Type": "application/x-ndjson"], body)
            var decoded: [Record] = []
            for try await record in Connection(loader: mock.loader).jsonLines(for: Self.records) {
                decoded.append(record)
            }
            #expect(decoded == records, "seed \(seed), round \(round)")
        }
    }

    @Test func aMalformedLineEndsTheStreamWithAnErrorNamingTheLine() async throws {
        let text = Data(
            """
            {"id":1,"name":"a"}
            {"id":2,"name":"b"}
            {"id":3,"nmae":"c"}
            {"id":4,"name":"d"}

            """.utf8)
        let mock = StreamingMock().then(chunks(of: text, cutAt: [7, 23, 30]))
        var iterator = Connection(loader: mock.loader).jsonLines(for: Self.records)
            .makeAsyncIterator()
        #expect(try await iterator.next()?.id == 1)
        #expect(try await iterator.next()?.id == 2)
        let error = await #expect(throws: ResponseError.self) { _ = try await iterator.next() }
        #expect(error?.kind == .undecodable)
        #expect(error?.line == 3)
        #expect(error?.response.body == Data(#"{"id":3,"nmae":"c"}"#.utf8))
        let description = error?.description ?? ""
        #expect(description.contains("its line 3 is not a Record"), "\(description)")
        #expect(description.contains(#"keyNotFound "name""#), "\(description)")
        #expect(try await iterator.next() == nil, "the stream ended once, with the error")
    }

    @Test func aLineThatIsNotUTF8IsAnErrorNamingTheLine() async throws {
        let mock = StreamingMock().then([Data("ok\n".utf8), Data([0x66, 0xFF, 0x0A])])
        var iterator = Connection(loader: mock.loader).lines(for: Self.text).makeAsyncIterator()
        #expect(try await iterator.next() == "ok")
        let error = await #expect(throws: ResponseError.self) { _ = try await iterator.next() }
        #expect(error?.line == 2)
        #expect(error?.kind == .undecodable)
    }

    @Test func aLineLongerThanTheMaximumFailsAndStopsTheTransfer() async throws {
        // An endless body without a line break: reading it must fail rather than hold it all.
        let mock = StreamingMock().then(endless: true, [Data("short\n".utf8), Data(repeating: 0x61, count: 1_000)])
        var iterator = Connection(loader: mock.loader).lines(for: Self.text, maximumLineLength: 4_096)
            .makeAsyncIterator()
        #expect(try await iterator.next() == "short")
        let error = await #expect(throws: HTTPError.self) { _ = try await iterator.next() }
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("line 2") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("4096 bytes") == true, "\(error?.message ?? "")")
        let producer = try #require(mock.all.first)
        try await eventually("\(producer.cancels) cancels") { producer.isFinished }
        #expect(producer.cancels == 1)
        #expect(try await iterator.next() == nil)
    }

    @Test func aStatusThatIsNotAcceptedThrowsWithTheHeadAndABoundedExcerpt() async throws {
        let mock = StreamingMock().then(
            status: .serviceUnavailable, headers: ["Retry-After": "5"], endless: true,
            [Data(repeating: 0x7A, count: 1_000)])
        let connection = Connection(loader: mock.loader)
        let error = await #expect(throws: ResponseError.self) { try await connection.stream(Self.raw) }
        #expect(error?.kind == .unacceptableStatus)
        #expect(error?.status == .serviceUnavailable)
        #expect(error?.response.headers["Retry-After"] == "5")
        #expect(error?.response.body.count == 4_096, "the excerpt is bounded, the rest not read")
        let producer = try #require(mock.all.first)
        try await eventually { producer.isFinished }
        #expect(producer.cancels == 1, "the endless body was stopped")

        // The lazy forms throw the same, when the iteration begins.
        let lazy = Connection(loader: StreamingMock().then(status: .notFound, [Data("gone".utf8)]).loader)
        var lines = lazy.lines(for: Self.text).makeAsyncIterator()
        let lazyError = await #expect(throws: ResponseError.self) { _ = try await lines.next() }
        #expect(lazyError?.status == .notFound)
        #expect(lazyError?.response.body == Data("gone".utf8))
        #expect(try await lines.next() == nil)
    }

    @Test func aTypedErrorBodyIsThrownForTheHeadBeforeAnyElement() async throws {
        struct Problem: Decodable, Sendable { var code: String }
        let problem = Data(#"{"code":"overloaded"}"#.utf8)
        let mock = StreamingMock()
            .then(status: .serviceUnavailable, headers: ["Content-Type": "application/json"], [problem])
            .then(status: .serviceUnavailable, [problem])
            .then(status: .serviceUnavailable, [problem])
            .then(status: .serviceUnavailable, [Data("not json".utf8)])
        let connection = Connection(loader: mock.loader)

        let streamError = await #expect(throws: ServerError<Problem>.self) {
            try await connection.stream(Self.raw.decodingErrors(as: Problem.self))
        }
        #expect(streamError?.body.code == "overloaded" && streamError?.response.status == .serviceUnavailable)

        var records = connection.jsonLines(for: Self.records.decodingErrors(as: Problem.self)).makeAsyncIterator()
        await #expect(throws: ServerError<Problem>.self) { _ = try await records.next() }
        #expect(try await records.next() == nil, "the sequence threw once, then ended")

        var lines = connection.lines(for: Self.text.decodingErrors(as: Problem.self)).makeAsyncIterator()
        let linesError = await #expect(throws: ServerError<Problem>.self) { _ = try await lines.next() }
        #expect(linesError?.body.code == "overloaded")

        // A body that is not the error type: the status error, with the body as its excerpt.
        var other = connection.jsonLines(for: Self.records.decodingErrors(as: Problem.self)).makeAsyncIterator()
        let statusError = await #expect(throws: ResponseError.self) { _ = try await other.next() }
        #expect(statusError?.kind == .unacceptableStatus && statusError?.response.body == Data("not json".utf8))
        for producer in mock.all {
            try await eventually { producer.isFinished }
        }
    }

    @Test func eachLineIsDecodedAsTheRequestDecodesABody() async throws {
        struct Entry: Decodable, Sendable, Equatable { var fullName: String }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let mock = StreamingMock()
            .then([Data("{\"full_name\":\"Ann\"}\n{\"full_".utf8), Data("name\":\"Bo\"}\n".utf8)])
            .then(headers: ["Content-Type": "text/plain; charset=iso-8859-1"], [Data([0x63, 0x61, 0x66, 0xE9, 0x0A])])
            .then(status: .notFound, [Data("{\"full_name\":\"Gone\"}".utf8)])
        let connection = Connection(loader: mock.loader)
        var entries: [Entry] = []
        for try await entry in connection.jsonLines(
            for: Request<Entry>(underlyingRequest: Self.request, decoder: decoder))
        {
            entries.append(entry)
        }
        #expect(entries == [Entry(fullName: "Ann"), Entry(fullName: "Bo")])

        var lines: [String] = []
        for try await line in connection.lines(for: Self.text) { lines.append(line) }
        #expect(lines == ["café"], "the charset of the Content-Type")

        // A request that accepts another status reads its body too.
        let accepting = Request<Entry>(underlyingRequest: Self.request, decoder: decoder).accepting(.notFound)
        var gone: [Entry] = []
        for try await entry in connection.jsonLines(for: accepting) { gone.append(entry) }
        #expect(gone == [Entry(fullName: "Gone")])
    }

    @Test func aFailureBeforeTheHeadIsTheChainsError() async {
        let connection = Connection(loader: MockLoader().then(failWith: .cannotConnect))
        var iterator = connection.jsonLines(for: Self.records).makeAsyncIterator()
        let error = await #expect(throws: HTTPError.self) { _ = try await iterator.next() }
        #expect(error?.code == .cannotConnect)
    }

    @Test func theHeadComesFirstAndTheBodyIsReadInAnyForm() async throws {
        let mock = StreamingMock()
            .then(
                headers: ["X-Total": "2"],
                [Data("{\"id\":1,\"name\":\"a\"}\n{\"id\":2,".utf8), Data("\"name\":\"b\"}".utf8)]
            )
            .then([Data("raw ".utf8), Data("bytes".utf8)])
        let connection = Connection(loader: mock.loader)
        let export = try await connection.stream(Self.raw)
        #expect(export.status == .ok && export.headers["X-Total"] == "2" && export.head.body.isEmpty)
        var records: [Record] = []
        for try await record in export.jsonLines(of: Record.self) { records.append(record) }
        #expect(records.map(\.id) == [1, 2])
        var raw = Data()
        for try await chunk in try await connection.stream(Self.raw).chunks { raw += chunk }
        #expect(raw == Data("raw bytes".utf8))
    }

    @Test func cancellingTheReadingTaskStopsTheTransferOnce() async throws {
        let mock = StreamingMock().then(endless: true, [Data("line\n".utf8)])
        let connection = Connection(loader: mock.loader)
        let received = Box(0)
        let reading = Task {
            var count = 0
            for try await _ in connection.lines(for: Self.text) {
                count += 1
                received.withLock { $0 = count }
            }
            return count
        }
        try await eventually("\(received.value) lines") { received.value >= 10 }
        reading.cancel()
        let outcome = try await Task { await reading.result }.finished()
        #expect((outcome.error as? HTTPError)?.code == .cancelled, "\(outcome)")
        let producer = try #require(mock.all.first)
        try await eventually { producer.isFinished }
        #expect(producer.cancels == 1)
        #expect(mock.loader.receivedRequests.count == 1)
    }

    @Test func droppingTheIteratorStopsTheTransfer() async throws {
        let mock = StreamingMock().then(endless: true, [Data("line\n".utf8)])
        let connection = Connection(loader: mock.loader)
        for try await line in connection.lines(for: Self.text) {
            #expect(line == "line")
            break
        }
        let producer = try #require(mock.all.first)
        try await eventually("\(producer.cancels) cancels") { producer.isFinished }
        #expect(producer.cancels == 1)
    }

    @Test(arguments: [ResetMode.drain, .cancel])
    func aResetEndsTheStreamOnceWithResetInProgress(mode: ResetMode) async throws {
        let mock = StreamingMock().then(endless: true, [Data("{\"id\":1,\"name\":\"a\"}\n".utf8)])
        let connection = Connection(loader: mock.loader)
        let received = Box(0)
        let reading = Task {
            var iterator = connection.jsonLines(for: Self.records).makeAsyncIterator()
            var failures: [any Error] = []
            while true {
                do {
                    guard try await iterator.next() != nil else { break }
                    received.withLock { $0 += 1 }
                } catch {
                    failures.append(error)
                }
            }
            return failures
        }
        try await eventually("\(received.value) records") { received.value >= 5 }
        try await Task { await connection.reset(mode: mode) }.finished()
        let failures = try await reading.finished()
        #expect(failures.count == 1, "\(failures)")
        #expect((failures.first as? HTTPError)?.code == .resetInProgress, "\(failures)")
        let producer = try #require(mock.all.first)
        try await eventually { producer.isFinished }
        #expect(producer.cancels == 1)
    }

    @Test func aResetEndsAListingBeforeItsNextPage() async throws {
        let mock = MockLoader()
            .then(status: .ok, headers: ["Link": "</items?page=2>; rel=next"], body: Data("[1]".utf8))
            .then(status: .ok, headers: ["Link": "</items?page=3>; rel=next"], body: Data("[2]".utf8))
        let connection = Connection(loader: mock)
        var pages = connection.pages(for: Request<[Int]>(underlyingRequest: HTTPRequest(host: "h", path: "/items")))
            .makeAsyncIterator()
        #expect(try await pages.next() == [1])
        await connection.reset()
        let error = await #expect(throws: HTTPError.self) { _ = try await pages.next() }
        #expect(error?.code == .resetInProgress)
        #expect(try await pages.next() == nil)
        #expect(mock.receivedRequests.count == 1, "the next page was not loaded")
    }

    @Test func aSlowConsumerHoldsTheProducerBack() async throws {
        // 2 MiB of lines through a stream that holds at most 16 KiB for its consumer: the producer stops whenever
        // the stream is full, so it is never more than the limit (and the chunk on its way) ahead of the consumer.
        let line = Data((String(repeating: "x", count: 1_023) + "\n").utf8)
        let chunk = Data((0..<4).flatMap { _ in line })
        let limit = 16 * 1024
        let mock = StreamingMock().then(bufferLimit: limit, Array(repeating: chunk, count: 512))
        let export = try await Connection(loader: mock.loader).stream(Self.raw)
        let producer = try #require(mock.all.first)
        var consumed = 0
        var furthestAhead = 0
        for try await text in export.lines() {
            consumed += text.utf8.count + 1
            furthestAhead = max(furthestAhead, producer.produced - consumed)
            if consumed % (64 * 1024) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(consumed == 2 * 1024 * 1024)
        #expect(furthestAhead <= limit + 2 * chunk.count, "the producer got \(furthestAhead) bytes ahead")
        #expect(furthestAhead > 0)
    }
}

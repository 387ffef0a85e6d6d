import Foundation
import HTTP
import HTTPConnection
import Testing

/// The exactly-once contract for the typed layer's sequences: hundreds of JSON Lines streams, line streams, raw
/// streams (head first, then chunks), listings, event streams, downloads and streams whose head the request refuses
/// with a typed error body, all typed by their `Request`, through `Connection` over ResetGuard, Throttle and Retry,
/// above a MockLoader whose
/// bodies arrive in random chunks after random delays — while tasks are cancelled mid-stream and the connection is
/// reset, in both modes, at random moments. Every sequence ends exactly once (all of it, or one error, then nothing),
/// every transfer stops, and nothing is left waiting. Runs under ThreadSanitizer in the test command.
@Suite(.noHang) struct ConnectionStressTests {
    enum Kind: CaseIterable {
        case jsonLines, lines, chunks, pages, events, downloads, refused
    }

    /// The error body the server sends for `/problem`, which `refused` streams decode.
    struct Problem: Decodable, Sendable {
        var code: String
    }

    /// What ``consume(_:expected:)`` reports for a `ServerError<Problem>`.
    static let refusal = HTTPError.Code(rawValue: "refused with a ServerError<Problem>")

    /// How one consumer's sequence ended.
    enum Outcome: Sendable {
        case complete(Int)
        case failed(HTTPError.Code)
        /// The sequence broke its contract: more elements than sent, or a second error, or elements after one.
        case violation(String)
    }

    struct Item: Decodable, Sendable {
        var n: Int
    }

    static let itemsPerStream = 12

    /// Answers every request by its path, after a random delay; its bodies arrive in random chunks.
    final class Server: Sendable {
        let producers = Box<[ChunkProducer]>([])
        /// Once set, no answer fails: for the sequences read after the storm.
        let isCalm = Box(false)

        func answer(_ request: HTTPRequest, latency: Int, seed: UInt64) async -> HTTPResult {
            do {
                try await Task.sleep(for: .microseconds(latency))
            } catch {
                return .failure(HTTPError(.cancelled, request: request))
            }
            var random = SplitMix64(seed: seed)
            if Int.random(in: 0..<12, using: &random) == 0, !isCalm.value {
                return .failure(HTTPError(.cannotConnect, request: request))
            }
            let path = request.path
            if path == "/download" {
                let body = Data((1...ConnectionStressTests.itemsPerStream).map { "{\"n\":\($0)}\n" }.joined().utf8)
                return .success(HTTPResponse(request: request, status: .ok, body: body))
            }
            if path.hasPrefix("/pages/") {
                let page = Int(path.dropFirst("/pages/".count)) ?? 1
                let headers: HTTPHeaders = page < 3 ? ["Link": "</pages/\(page + 1)>; rel=next"] : [:]
                return .success(
                    HTTPResponse(request: request, status: .ok, headers: headers, body: Data("[\(page)]".utf8)))
            }
            let count = ConnectionStressTests.itemsPerStream
            let text: String
            var headers: HTTPHeaders = [:]
            switch path {
            case "/events":
                if request.headers["Last-Event-ID"] != nil {
                    return .success(HTTPResponse(request: request, status: .noContent))
                }
                headers["Content-Type"] = "text/event-stream"
                text = (1...count).map { "id: \($0)\ndata: {\"n\":\($0)}\n\n" }.joined()
            case "/lines":
                text = (1...count).map { "line \($0)\r\n" }.joined()
            case "/problem":
                let producer = ChunkProducer(
                    request: request,
                    chunks: randomChunks(of: Data(#"{"code":"busy"}"#.utf8), largest: 4, using: &random),
                    bufferLimit: 64, pause: .microseconds(Int.random(in: 0...40, using: &random)))
                producers.withLock { $0.append(producer) }
                return .success(producer.response(to: request, status: .unprocessableContent))
            default:
                text = (1...count).map { "{\"n\":\($0)}\n" }.joined()
            }
            let producer = ChunkProducer(
                request: request, chunks: randomChunks(of: Data(text.utf8), largest: 24, using: &random),
                bufferLimit: 64, pause: .microseconds(Int.random(in: 0...40, using: &random)))
            producers.withLock { $0.append(producer) }
            return .success(producer.response(to: request, headers: headers))
        }
    }

    /// Reads one sequence to its end, checking that it ends exactly once.
    static func consume<S: AsyncSequence>(_ sequence: S, expected: Int) async -> Outcome {
        var iterator = sequence.makeAsyncIterator()
        var count = 0
        var failure: HTTPError.Code?
        while true {
            do {
                guard try await iterator.next() != nil else { break }
                if failure != nil { return .violation("an element after the error") }
                count += 1
            } catch {
                if failure != nil { return .violation("a second error: \(error)") }
                switch error {
                case let error as HTTPError: failure = error.code
                case is CancellationError: failure = .cancelled
                case let error as ServerError<Problem> where error.body.code == "busy": failure = refusal
                default: return .violation("an unexpected error: \(error)")
                }
            }
        }
        if let failure { return .failed(failure) }
        return count == expected ? .complete(count) : .violation("\(count) elements of \(expected)")
    }

    /// Opens a stream with `Connection.stream(_:)` and reads its chunks to the end, checking that it ends exactly
    /// once with every byte (`expected`) or with one error.
    static func consumeChunks(_ connection: Connection, _ request: Request<Data>, expected: Int) async -> Outcome {
        let streamed: ResponseStream
        do {
            streamed = try await connection.stream(request)
        } catch let error as HTTPError {
            return .failed(error.code)
        } catch {
            return .violation("an unexpected error opening the stream: \(error)")
        }
        var iterator = streamed.chunks.makeAsyncIterator()
        var bytes = 0
        var failure: HTTPError.Code?
        while true {
            do {
                guard let chunk = try await iterator.next() else { break }
                if failure != nil { return .violation("a chunk after the error") }
                bytes += chunk.count
            } catch {
                if failure != nil { return .violation("a second error: \(error)") }
                guard let error = error as? HTTPError else { return .violation("an unexpected error: \(error)") }
                failure = error.code
            }
        }
        if let failure { return .failed(failure) }
        return bytes == expected ? .complete(bytes) : .violation("\(bytes) bytes of \(expected)")
    }

    /// Downloads with `Connection.download(_:to:)` and checks the file: all of it, or one error and no file.
    static func consumeDownload(_ connection: Connection, to folder: URL, expected: Data) async -> Outcome {
        let destination = folder.appending(path: UUID().uuidString)
        let request = Request<Data>(underlyingRequest: HTTPRequest(host: "h", path: "/download"))
        do {
            let file = try await connection.download(request, to: destination)
            let written = try Data(contentsOf: file.fileURL)
            return written == expected ? .complete(written.count) : .violation("\(written.count) bytes written")
        } catch let error as HTTPError {
            if FileManager.default.fileExists(atPath: destination.path) { return .violation("a file after \(error)") }
            return .failed(error.code)
        } catch {
            return .violation("an unexpected error downloading: \(error)")
        }
    }

    /// The whole body every stream sends: `itemsPerStream` JSON lines.
    static let jsonLinesBody = Data((1...itemsPerStream).map { "{\"n\":\($0)}\n" }.joined().utf8)

    /// Reads one sequence (or downloads one file) of `kind` through `connection`, typed by its `Request`.
    static func read(_ kind: Kind, through connection: Connection, downloadingTo folder: URL) async -> Outcome {
        let count = itemsPerStream
        switch kind {
        case .jsonLines:
            let items = Request<Item>(underlyingRequest: HTTPRequest(host: "h", path: "/jsonl"))
            return await consume(connection.jsonLines(for: items), expected: count)
        case .lines:
            let lines = Request<String>(underlyingRequest: HTTPRequest(host: "h", path: "/lines"))
            return await consume(connection.lines(for: lines), expected: count)
        case .chunks:
            return await consumeChunks(
                connection, Request<Data>(underlyingRequest: HTTPRequest(host: "h", path: "/chunks")),
                expected: jsonLinesBody.count)
        case .downloads:
            return await consumeDownload(connection, to: folder, expected: jsonLinesBody)
        case .refused:
            let refused = Request<Item>(underlyingRequest: HTTPRequest(host: "h", path: "/problem"))
                .decodingErrors(as: Problem.self)
            return await consume(connection.jsonLines(for: refused), expected: 0)
        case .pages:
            let first = Request<[Int]>(underlyingRequest: HTTPRequest(host: "h", path: "/pages/1"))
            return await consume(connection.pages(for: first), expected: 3)
        case .events:
            let events = Request<Item>(underlyingRequest: HTTPRequest(host: "h", path: "/events"))
            return await consume(connection.events(for: events, reconnectionDelay: .zero), expected: count)
        }
    }

    @Test(arguments: 0..<2)
    func everySequenceEndsExactlyOnceUnderCancellationAndResets(run: Int) async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let context = "seed \(seed)"
        let consumerCount = 300
        let server = Server()
        let terminal = MockLoader()
        for _ in 0..<(consumerCount * 8) {
            let latency = Int.random(in: 0...400, using: &random)
            let answerSeed = random.next()
            terminal.then { request in await server.answer(request, latency: latency, seed: answerSeed) }
        }
        let chain =
            ResetGuard() --> Throttle(maximumNumberOfRequests: 4)
            --> Retry(strategy: .immediately(maximumNumberOfAttempts: 2), budget: nil) --> terminal
        let connection = Connection(loader: chain)
        let folder = FileManager.default.temporaryDirectory.appending(path: "stress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let kinds = (0..<consumerCount).map { _ in Kind.allCases.randomElement(using: &random)! }
        let cancels = (0..<consumerCount).map { _ in Int.random(in: 0..<5, using: &random) == 0 }
        // Three resets, in both modes, each when the run has got so far: after the first sequences have completed,
        // and when 40% and 70% of them have ended, so that some run before, across and after each.
        let resets: [(mode: ResetMode, completed: Int, ended: Int)] = [
            (.drain, 20, 0), (.cancel, 0, consumerCount * 2 / 5), (.drain, 0, consumerCount * 7 / 10),
        ]
        let completed = Box(0)
        let ended = Box(0)
        let outcomes = Box<[(kind: Kind, outcome: Outcome)]>([])
        let finished = await withDeadline(seconds: 120, context) {
            await withTaskGroup(of: Void.self) { group in
                var consumers: [Task<Outcome, Never>] = []
                for index in 0..<consumerCount {
                    let consumer = Task { await Self.read(kinds[index], through: connection, downloadingTo: folder) }
                    consumers.append(consumer)
                    if cancels[index] {
                        group.addTask {
                            try? await Task.sleep(for: .microseconds(Int.random(in: 0...3_000)))
                            consumer.cancel()
                        }
                    }
                }
                for (consumer, kind) in zip(consumers, kinds) {
                    group.addTask {
                        let outcome = await consumer.value
                        outcomes.withLock { $0.append((kind, outcome)) }
                        if case .complete = outcome { completed.withLock { $0 += 1 } }
                        ended.withLock { $0 += 1 }
                    }
                }
                group.addTask {
                    for reset in resets {
                        // Bounded by the deadline around the group.
                        try? await eventually("\(completed.value) completed, \(ended.value) ended") {
                            completed.value >= reset.completed && ended.value >= reset.ended
                        }
                        await connection.reset(mode: reset.mode)
                    }
                }
            }
            return true
        }
        try #require(finished == true, "sequences were still running after the deadline (\(context))")

        // Each sequence returned exactly once: a continuation resumed twice traps, one never resumed keeps the run
        // past the deadline, and `consume` checks that each ended with all its elements or with one error.
        let all = outcomes.value
        #expect(all.count == consumerCount)
        var failures: [HTTPError.Code: Int] = [:]
        for (kind, outcome) in all {
            switch outcome {
            case .complete:
                if kind == .refused { Issue.record("a stream the request refuses completed (\(context))") }
            case .failed(let code):
                failures[code, default: 0] += 1
                if code == Self.refusal, kind != .refused { Issue.record("\(kind) refused (\(context))") }
            case .violation(let message):
                Issue.record("\(kind): \(message) (\(context))")
            }
        }
        #expect(
            Set(failures.keys).isSubset(of: [.cancelled, .resetInProgress, .cannotConnect, Self.refusal]),
            "\(failures), \(context)")
        #expect((failures[Self.refusal] ?? 0) > 0, "no head was refused with its typed error body (\(context))")
        #expect((failures[.cancelled] ?? 0) > 0, "nothing was cancelled: the test did not exercise it (\(context))")
        #expect((failures[.resetInProgress] ?? 0) > 0, "no reset ended anything (\(context))")
        #expect(
            all.contains { if case .complete = $0.outcome { true } else { false } },
            "nothing completed: \(failures), \(context)")

        // After the storm and its resets, the same connection reads every kind to its end (and refuses `refused`).
        server.isCalm.withLock { $0 = true }
        for kind in Kind.allCases {
            let outcome = try await Task {
                await Self.read(kind, through: connection, downloadingTo: folder)
            }.finished(within: 30)
            switch (kind, outcome) {
            case (.refused, .failed(Self.refusal)),
                (_, .complete) where kind != .refused:
                break
            default: Issue.record("after the resets, \(kind) ended with \(outcome) (\(context))")
            }
        }

        // Every transfer stopped: delivered whole, or cancelled once, never left producing for nobody.
        let producers = server.producers.value
        try await eventually("\(producers.filter { !$0.isFinished }.count) producers still running (\(context))") {
            producers.allSatisfy(\.isFinished)
        }
        #expect(producers.allSatisfy { $0.cancels <= 1 }, "a transfer was stopped twice (\(context))")
    }
}

import Foundation
import HTTP
import HTTPTestSupport
import Testing

// The code samples of HTTP.docc/Transfers.md ("Uploading, streaming and downloading"), kept identical to the
// article (the comparison ignores indentation, blank lines, `import` lines and a leading `private`). Samples that
// would reach the network are compiled and never run; the others run against MockLoader.

// "Overview". Loads over the network: compiled, never run.
private func overviewSample(chain: HTTPLoader, recording: URL, movies: URL) async throws {
    // Upload a file from disk: streamed, with its Content-Length.
    let upload = HTTPRequest(method: .put, path: "/videos/42.mp4", body: FileBody(recording, contentType: "video/mp4"))
    _ = await chain.load(upload)

    // Read a response as it arrives.
    if case .success(let streamed) = await chain.stream(HTTPRequest(path: "/events")) {
        for try await line in streamed.body.lines { print(line) }
    }

    // Save a response to disk, resuming if the connection drops.
    let saved = await chain.download(HTTPRequest(path: "/videos/42.mp4"), to: movies.appending(path: "42.mp4"))
    _ = saved
}

// "Server-Sent Events". Runs against a MockLoader in `serverSentEventsSampleRuns`.
func printNotifications(from chain: HTTPLoader) async throws {
    for try await event in chain.events(for: HTTPRequest(path: "/notifications")) {
        print(event.type, event.lastEventID, event.data)
    }
}

// "Streaming a response". Compiled, never run.
private func streamingSample(chain: HTTPLoader) async throws {
    switch await chain.stream(HTTPRequest(path: "/logs/today")) {
    case .success(let streamed) where streamed.head.status == .ok:
        var bytes = 0
        for try await chunk in streamed.body { bytes += chunk.count }
        print("\(bytes) bytes")
    case .success(let streamed):
        // Any status is a response: read an error's body, within a limit.
        let body = try await streamed.body.collect(upTo: 64 * 1024)
        print(streamed.head.status, String(decoding: body, as: UTF8.self))
    case .failure(let error):
        print(error)
    }
}

// "Downloading to a file". Compiled, never run.
private func downloadSample(chain: HTTPLoader, movies: URL) async {
    let destination = movies.appending(path: "42.mp4")
    switch await chain.download(HTTPRequest(path: "/videos/42.mp4"), to: destination, resumeAttempts: 5) {
    case .success(let response) where response.fileURL != nil:
        print("saved to", destination.path)
    case .success(let response):
        print("not saved:", response.status)  // a 404's body stays in memory; the destination is untouched
    case .failure(let error):
        print(error)  // cancelled, cannotConnect after every resumption, …
    }
}

/// "Progress", the stream of reports; run by a test over MockLoader.
private func progressStreamSample(chain: HTTPLoader, destination: URL) async -> HTTPResult {
    let result = await HTTPRequest(path: "/videos/42.mp4").reportingProgress { request in
        await chain.download(request, to: destination)
    } to: { progress in
        for await report in progress {
            print(report.bytesReceived, "of", report.totalBytesToReceive ?? -1)
        }
    }
    return result
}

@Suite(.noHang) struct TransfersDocumentationTests {
    @Test func serverSentEventsSampleRuns() async throws {
        let mock = MockLoader()
            .then(
                status: .ok, headers: ["Content-Type": "text/event-stream"],
                body: Data("retry: 0\nid: 1\ndata: hi\n\n".utf8)
            )  // retry 0: no wait before the reconnection
            .then(status: .noContent)
        let chain = ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com")) --> mock
        try await printNotifications(from: chain)
        #expect(mock.receivedRequests.map(\.path) == ["/notifications", "/notifications"])
        #expect(mock.receivedRequests.last?.headers["Last-Event-ID"] == "1")
    }

    @Test func streamBodiesAreReplayableOnlyWhenTheyCanMakeAFreshSequence() async throws {
        let events = AsyncStream<Data> { continuation in
            continuation.yield(Data("{}\n".utf8))
            continuation.finish()
        }

        // Sent once: the sequence is consumed.
        let live = StreamBody(contentType: "application/x-ndjson", events)

        // Sent as often as needed: each send makes a new sequence.
        let export = StreamBody(length: 3, contentType: "text/csv") {
            AsyncStream<Data> { continuation in
                continuation.yield(Data("a,b".utf8))
                continuation.finish()
            }
        }
        print(live.isReplayable, export.isReplayable)  // false true

        #expect(!live.isReplayable && export.isReplayable)
        for _ in 0..<2 {
            var sent = Data()
            for try await chunk in try export.makeSource().chunks() { sent.append(chunk) }
            #expect(sent == Data("a,b".utf8))
        }
    }

    @Test func aMultipartFormSendsItsFilePartFromDisk() async throws {
        let directory = TemporaryDirectory()
        let recording = directory.file("42.mp4")
        try Data("not really a video".utf8).write(to: recording)

        let form = MultipartFormBody(parts: [
            .init(name: "title", data: Data("Holiday".utf8)),
            .init(name: "video", filename: "42.mp4", contentType: "video/mp4", fileURL: recording),
        ])
        let post = HTTPRequest(method: .post, path: "/videos", body: form)

        let mock = MockLoader().then(status: .created)
        let response = try await mock.load(
            HTTPRequest(method: .post, host: "api.example.com", path: "/videos", body: form)
        ).get()
        #expect(response.status == .created)
        #expect(post.body.isReplayable)
        var sent = Data()
        for try await chunk in try form.makeSource().chunks() { sent.append(chunk) }
        #expect(String(decoding: sent, as: UTF8.self).contains("not really a video"))
    }

    @Test func aProgressHandlerSeesTheDownloadComplete() async throws {
        let seen = Locked<[Int]>([])
        var request = HTTPRequest(path: "/videos/42.mp4")
        request.progressHandler = { progress in
            if let fraction = progress.fractionCompleted {
                print("\(Int(fraction * 100))% of \(progress.totalBytesToReceive ?? 0) bytes")
            }
        }
        let articleHandler = request.progressHandler
        request.progressHandler = { progress in
            articleHandler?(progress)
            seen.withLock { $0.append(progress.fractionCompleted.map { Int($0 * 100) } ?? -1) }
        }
        request.host = "api.example.com"

        let directory = TemporaryDirectory()
        let mock = MockLoader().then(
            status: .ok, headers: ["Content-Length": "100000"], body: Data(repeating: 7, count: 100_000))
        let response = try await mock.download(request, to: directory.file("42.mp4")).get()
        #expect(response.fileURL == directory.file("42.mp4"))
        #expect(seen.value.last == 100)
    }

    @Test func reportingProgressFinishesWithTheTransfer() async throws {
        let directory = TemporaryDirectory()
        let body = Data(repeating: 1, count: 300_000)
        let chain =
            ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
            --> MockLoader().then(status: .ok, headers: ["Content-Length": "300000"], body: body)
        let result = await progressStreamSample(chain: chain, destination: directory.file("42.mp4"))
        #expect(try result.get().fileURL != nil)
        #expect(try Data(contentsOf: directory.file("42.mp4")) == body)
    }

    @Test func aMockLoaderStreamsItsAnswer() async throws {
        let mock = MockLoader().then(status: .ok, body: Data("one\ntwo\n".utf8))
        let streamed = try await mock.stream(HTTPRequest(host: "api.example.com", path: "/lines")).get()
        var lines: [String] = []
        for try await line in streamed.body.lines { lines.append(line) }
        // lines == ["one", "two"]

        #expect(lines == ["one", "two"])
        #expect(streamed.head.status == .ok && streamed.head.body.isEmpty)
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        let article = DocumentationSamples.catalog(of: "HTTP", fromTestFile: #filePath)
            .appendingPathComponent("Transfers.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(missing.isEmpty, "Transfers.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

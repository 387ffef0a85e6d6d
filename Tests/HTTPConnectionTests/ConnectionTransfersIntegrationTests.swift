import Foundation
import HTTP
import HTTPConnection
import Testing

/// Streams, downloads and uploads through `Connection` against the local servers of scripts/servers.sh.
@Suite(
    .noHang,
    .enabled(
        if: httpbinURL != nil && downloadsURL != nil && eventStreamURL != nil,
        "needs HTTPBIN_URL, DOWNLOADS_URL and EVENT_STREAM_URL: run through scripts/servers.sh"))
struct ConnectionTransfersIntegrationTests {
    let connection = Connection(loader: Retry() --> URLSessionLoader())

    private func httpbin(_ path: String, query: [URLQueryItem] = []) -> HTTPRequest {
        var url = httpbinURL!.appending(path: path)
        if !query.isEmpty { url.append(queryItems: query) }
        return HTTPRequest(url: url)
    }

    struct StreamedObject: Decodable, Sendable {
        var id: Int
        var url: String
    }

    @Test func httpbinStreamIsReadAsJSONLines() async throws {
        var ids: [Int] = []
        for try await object in connection.jsonLines(
            for: Request<StreamedObject>(underlyingRequest: httpbin("stream/25")))
        {
            ids.append(object.id)
            #expect(object.url.hasSuffix("/stream/25"))
        }
        #expect(ids == Array(0..<25))
    }

    @Test func dripAndStreamBytesArriveWhole() async throws {
        let drip = httpbin("drip", query: [.init(name: "numbytes", value: "8"), .init(name: "duration", value: "0.4")])
        var dripped = Data()
        for try await chunk in try await connection.stream(Request<Data>(underlyingRequest: drip)).chunks {
            dripped += chunk
        }
        #expect(dripped == Data(repeating: UInt8(ascii: "*"), count: 8))

        let bytes = httpbin("stream-bytes/20000", query: [.init(name: "chunk_size", value: "100")])
        let stream = try await connection.stream(Request<Data>(underlyingRequest: bytes))
        #expect(stream.status == .ok)
        var count = 0
        for try await chunk in stream.chunks { count += chunk.count }
        #expect(count == 20_000)
    }

    @Test func aStatusThatIsNotAcceptedThrowsBeforeTheBody() async throws {
        let error = await #expect(throws: ResponseError.self) {
            for try await _ in connection.lines(for: Request<String>(underlyingRequest: httpbin("status/418"))) {}
        }
        #expect(error?.status.rawValue == 418)
        #expect(error?.response.body.isEmpty == false, "the teapot's body is in the excerpt")
    }

    @Test func cancellingMidStreamEndsTheTransferAtOnce() async throws {
        // 64 KiB of the body, then nothing until the connection closes: only the cancel can end it.
        let held = HTTPRequest(url: URL(string: "\(downloadsURL!.absoluteString)/file/1000000?hold=65536")!)
        let received = Box(0)
        let reading = Task { [connection] in
            for try await chunk in try await connection.stream(Request<Data>(underlyingRequest: held)).chunks {
                received.withLock { $0 += chunk.count }
            }
        }
        try await eventually("\(received.value) bytes") { received.value >= 65_536 }
        reading.cancel()
        let outcome = try await Task { await reading.result }.finished(within: 10)
        #expect((outcome.error as? HTTPError)?.code == .cancelled, "\(outcome)")
    }

    @Test func aDownloadCutOffHalfWayIsResumedAndReportsProgress() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "conn-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let size = 1_000_000
        let url = URL(string: "\(downloadsURL!.absoluteString)/file/\(size)?drop=conn-\(UUID().uuidString)")!
        let last = Box<HTTPProgress?>(nil)
        // No Retry in this chain: it would send the cut-off request again from the start, below the download's own
        // resumption.
        let connection = Connection(loader: URLSessionLoader())
        let request = Request<Data>(underlyingRequest: HTTPRequest(url: url))
        let file = try await connection.download(request, to: folder.appending(path: "file.bin")) { progress in
            last.withLock { $0 = progress }
        }
        #expect(file.status == .partialContent, "the second half came as a range")
        #expect(file.response.request.headers["Range"] != nil)
        let data = try Data(contentsOf: file.fileURL)
        #expect(data.count == size)
        #expect(data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
        #expect(last.value?.bytesReceived == Int64(size))
    }

    struct Echo: Decodable, Sendable {
        var length: Int
        var chunked: Bool
        var contentType: String?
    }

    @Test func aSequenceAndAFileAreUploadedAndTheEchoDecoded() async throws {
        let echo = Request<Echo>(
            underlyingRequest: HTTPRequest(method: .post, url: downloadsURL!.appending(path: "echo")))
        let chunks = AsyncStream<Data> { continuation in
            for _ in 0..<20 { continuation.yield(Data(repeating: 7, count: 5_000)) }
            continuation.finish()
        }
        let streamed = try await connection.upload(echo, from: chunks, contentType: "application/x-ndjson")
        #expect(streamed.length == 100_000 && streamed.contentType == "application/x-ndjson")

        let file = FileManager.default.temporaryDirectory.appending(path: "conn-it-\(UUID().uuidString).bin")
        try Data(repeating: 9, count: 300_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let uploaded = try await connection.upload(echo, fromFile: file)
        #expect(uploaded.length == 300_000 && !uploaded.chunked)
    }

    struct Number: Decodable, Sendable, Equatable {
        var n: Int
    }

    @Test func eventsAreDecodedThroughTheConnection() async throws {
        let url = URL(string: "\(eventStreamURL!.absoluteString)/numbers?count=5&close_after=2&retry=10")!
        var numbers: [Int] = []
        let request = Request<Number>(underlyingRequest: HTTPRequest(url: url))
        for try await number in connection.events(for: request, eventType: "number") {
            numbers.append(number.n)
        }
        #expect(numbers == [1, 2, 3, 4, 5], "resumed after the server closed the connection")
    }
}

@Test func theServersAreThereWhenRequired() {
    guard serversAreRequired else { return }
    #expect(httpbinURL != nil, "HTTP_REQUIRE_SERVERS=1 but HTTPBIN_URL is not set")
    #expect(downloadsURL != nil, "HTTP_REQUIRE_SERVERS=1 but DOWNLOADS_URL is not set")
    #expect(eventStreamURL != nil, "HTTP_REQUIRE_SERVERS=1 but EVENT_STREAM_URL is not set")
}

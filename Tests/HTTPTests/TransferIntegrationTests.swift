import Foundation
import Testing

@testable import HTTP

/// Bytes `start..<end` of the servers' download pattern (byte i is i % 251).
func downloadPattern(_ range: Range<Int>) -> Data {
    Data(range.map { UInt8($0 % 251) })
}

/// Whether `url`'s contents are `size` bytes of the download pattern.
func holdsDownloadPattern(_ url: URL, size: Int) throws -> Bool {
    let data = try Data(contentsOf: url)
    guard data.count == size else { return false }
    var index = 0
    return data.allSatisfy { byte in
        defer { index += 1 }
        return byte == UInt8(index % 251)
    }
}

/// The SHA-256 of `data` in hex, from coreutils' `sha256sum` (the package's own SHA-256 is not in this module).
enum SHA256Digest {
    static func hex(of data: Data) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        guard (try? process.run()) != nil else { return "sha256sum did not run" }
        let writer = Thread {
            input.fileHandleForWriting.write(data)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }
}

/// A folder of its own for one test's files.
func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appending(path: "http-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// Uploads that stream and responses that stream, against the local httpbin and nginx.
@Suite(.noHang, .enabled(if: TestServers.httpbin != nil && TestServers.nginx != nil, "needs the local servers"))
struct StreamingIntegrationTests {
    let httpbin = TestServers.httpbin!
    let nginx = TestServers.nginx!
    let loader = URLSessionLoader()

    private func anything(_ body: any HTTPBody) -> HTTPRequest {
        HTTPRequest(method: .post, url: httpbin.appending(path: "anything"), body: body)
    }

    /// What the download server's `/echo` saw of a body: its length, SHA-256, coding and first bytes.
    private struct Echo: Decodable {
        var length: Int
        var sha256: String
        var chunked: Bool
        var contentLength: String?
        var contentType: String?
        var head: String
    }

    private func echo(_ body: any HTTPBody) async throws -> Echo {
        let url = try #require(TestServers.downloads).appending(path: "echo")
        let response = try await loader.load(HTTPRequest(method: .post, url: url, body: body)).get()
        return try JSONDecoder().decode(Echo.self, from: response.body)
    }

    @Test func aFileIsUploadedFromDiskWithItsLength() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "upload.txt")
        let text = String(repeating: "0123456789abcdef\n", count: 65_536)  // 1.1 MB
        try Data(text.utf8).write(to: file)
        let response = try await loader.load(anything(FileBody(file, contentType: "text/plain"))).get()
        let json = response.json
        #expect((json["data"] as? String) == text)
        let headers = json["headers"] as? [String: String] ?? [:]
        #expect(headers["Content-Length"] == String(text.utf8.count))
        #expect(headers["Content-Type"] == "text/plain")
    }

    @Test(arguments: [Int64?.none, 300_000])
    func aSequenceOfChunksIsSentAsItComes(length: Int64?) async throws {
        let chunks = AsyncStream<Data> { continuation in
            for index in 0..<30 {
                continuation.yield(Data(repeating: UInt8(ascii: "a") + UInt8(index % 26), count: 10_000))
            }
            continuation.finish()
        }
        let echo = try await echo(StreamBody(length: length, contentType: "text/plain", chunks))
        #expect(echo.length == 300_000)
        #expect(echo.head == String(repeating: "a", count: 64))
        #expect(echo.contentType == "text/plain")
        // Never both a length and chunked coding: a request with both is malformed (RFC 9112 §6.1).
        #expect(!(echo.chunked && echo.contentLength != nil))
    }

    @Test func aMultipartFormStreamsItsFileParts() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "notes.bin")
        let contents = downloadPattern(0..<1_000_000)
        try contents.write(to: file)
        var form = MultipartFormBody()
        form.addField(named: "title", value: "Notes")
        form.addFile(named: "attachment", filename: "notes.bin", contentsOf: file)
        let echo = try await echo(form)
        let expected = try form.encode()  // the same form, in memory
        #expect(echo.length == expected.count)
        #expect(echo.sha256 == SHA256Digest.hex(of: expected))
        #expect(echo.contentType?.hasPrefix("multipart/form-data; boundary=") == true)
    }

    @Test func aLargeFileGoesFromDiskWithItsLength() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "large.bin")
        let contents = downloadPattern(0..<8_000_000)
        try contents.write(to: file)
        let echo = try await echo(FileBody(file))
        #expect(echo.length == contents.count)
        #expect(echo.contentLength == String(contents.count))
        #expect(!echo.chunked)
        #expect(echo.sha256 == SHA256Digest.hex(of: contents))
    }

    @Test func aBodyThatCanBeSentOnceIsNotRetriedEmpty() async throws {
        let chain = Retry(strategy: .immediately(maximumNumberOfAttempts: 3), budget: nil) --> loader
        var request = HTTPRequest(method: .put, url: httpbin.appending(path: "status/503"))
        request.body = StreamBody(
            AsyncThrowingStream {
                $0.yield(Data("once".utf8)); $0.finish()
            })
        let error = await chain.load(request).error
        #expect(error?.code == .bodyNotReplayable)
        #expect(error?.response?.status == .serviceUnavailable)
        #expect(error?.message.contains("attempt 2") == true)
        // A body that makes its sequence anew is retried.
        request.body = StreamBody(makeChunks: {
            AsyncThrowingStream {
                $0.yield(Data("again".utf8)); $0.finish()
            }
        })
        let retried = try await chain.load(request).get()
        #expect(retried.status == .serviceUnavailable)
        #expect(retried.request.attemptNumber == 3)
    }

    @Test func aStreamedResponseArrivesHeadFirstThenInChunks() async throws {
        let streamed = try await loader.stream(HTTPRequest(url: httpbin.appending(path: "stream/20"))).get()
        #expect(streamed.head.status == .ok)
        #expect(streamed.head.body.isEmpty)
        var lines: [String] = []
        for try await line in streamed.body.lines { lines.append(line) }
        #expect(lines.count == 20)
        #expect(lines.allSatisfy { $0.hasPrefix("{") })
    }

    @Test func streamedBytesAreExact() async throws {
        let streamed = try await loader.stream(HTTPRequest(url: nginx.appending(path: "download/32M.bin"))).get()
        var received = 0
        var matches = true
        for try await chunk in streamed.body {
            if matches { matches = chunk == downloadPattern(received..<(received + chunk.count)) }
            received += chunk.count
        }
        #expect(received == 32 * 1024 * 1024)
        #expect(matches)
    }

    @Test func aSlowConsumerKeepsTheBufferBounded() async throws {
        let streamed = try await loader.stream(HTTPRequest(url: nginx.appending(path: "download/32M.bin"))).get()
        let body = streamed.body
        var largest = 0
        var received = 0
        for try await chunk in body {
            received += chunk.count
            largest = max(largest, body.bufferedByteCount)
            // For the first 4 MiB the consumer takes the next chunk only once the transfer has paused (or ended):
            // it lags as far as the stream lets it, however fast or slow the machine.
            if received < 4 * 1024 * 1024 {
                try await eventually("\(body.bufferedByteCount) bytes buffered") {
                    body.isProducerPaused || body.isFinished
                }
            }
        }
        #expect(received == 32 * 1024 * 1024)
        // The limit, plus what was already on its way when the transfer paused.
        #expect(largest <= body.bufferLimit + 1024 * 1024, "held \(largest) bytes for a consumer that lagged")
    }

    @Test func cancellingAStreamStopsTheTransfer() async throws {
        let streamed = try await loader.stream(HTTPRequest(url: nginx.appending(path: "download/32M.bin"))).get()
        var received = 0
        do {
            for try await chunk in streamed.body {
                received += chunk.count
                if received > 1_000_000 { streamed.body.cancel() }
            }
            Issue.record("the stream ended normally after a cancel")
        } catch {
            #expect(error.code == .cancelled)
        }
        #expect(received < 32 * 1024 * 1024)
        let reset: Void? = await withDeadline(seconds: 10) { [loader] in await loader.reset() }
        #expect(reset != nil, "the cancelled transfer kept the loader busy")
    }

    @Test func droppingAStreamStopsTheTransfer() async throws {
        var streamed: StreamedResponse? = try await loader.stream(
            HTTPRequest(url: nginx.appending(path: "download/32M.bin"))
        ).get()
        #expect(streamed?.head.status == .ok)
        streamed = nil
        let reset: Void? = await withDeadline(seconds: 10) { [loader] in await loader.reset() }
        #expect(reset != nil, "a dropped stream kept its transfer going")
    }

    @Test func cancellingTheConsumersTaskStopsTheStream() async throws {
        // 64 KiB, then nothing until the client closes the connection: only a cancel ends this stream early,
        // however late a loaded machine runs the test.
        let downloads = try #require(TestServers.downloads)
        let held = try #require(URL(string: "\(downloads.absoluteString)/file/1000000?hold=65536"))
        let streamed = try await loader.stream(HTTPRequest(url: held)).get()
        #expect(streamed.head.status == .ok)
        let received = Locked(0)
        let consumer = Task { () -> HTTPError.Code? in
            do {
                for try await chunk in streamed.body { received.withLock { $0 += chunk.count } }
                return nil
            } catch {
                return (error as? HTTPError)?.code
            }
        }
        // The consumer has what the server sends before it holds, and waits for more: cancel it there.
        try await eventually("\(received.value) bytes received") { received.value == 65_536 }
        consumer.cancel()
        let code = try await consumer.finished()
        #expect(code == .cancelled, "\(String(describing: code))")
    }
}

/// Downloads to a file, with progress and resumption, against nginx and the download server.
@Suite(.noHang, .enabled(if: TestServers.nginx != nil && TestServers.downloads != nil, "needs the local servers"))
struct DownloadIntegrationTests {
    let nginx = TestServers.nginx!
    let downloads = TestServers.downloads!
    let loader = URLSessionLoader()

    private func leftovers(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".download") }
    }

    @Test func aDownloadLandsInPlaceWithProgress() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "32M.bin")
        let reports = Locked<[HTTPProgress]>([])
        var request = HTTPRequest(url: nginx.appending(path: "download/32M.bin"))
        request.progressHandler = { progress in reports.withLock { $0.append(progress) } }
        let response = try await loader.download(request, to: destination).get()
        #expect(response.status == .ok)
        #expect(response.fileURL == destination)
        #expect(response.body.isEmpty)
        #expect(try holdsDownloadPattern(destination, size: 32 * 1024 * 1024))
        #expect(try leftovers(in: folder).isEmpty)
        let progress = reports.value
        #expect(progress.count > 2 && progress.count < 2_000, "\(progress.count) reports")
        let last = try #require(progress.last)
        #expect(last.bytesReceived == Int64(32 * 1024 * 1024), "\(last)")
        #expect(last.fractionCompleted == 1)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived })
    }

    @Test func aDownloadCutOffHalfWayResumesWhereItStopped() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        let size = 3_000_000
        let key = UUID().uuidString
        let attempts = Locked<[HTTPRequest]>([])
        let chain =
            ModifyRequest { request in
                attempts.withLock { $0.append(request) }
                return request
            } --> loader
        let url = URL(string: "\(downloads.absoluteString)/file/\(size)?drop=\(key)")!
        let reports = Locked<[HTTPProgress]>([])
        var request = HTTPRequest(url: url)
        request.progressHandler = { progress in reports.withLock { $0.append(progress) } }
        let response = try await chain.download(request, to: destination).get()
        #expect(response.status == .partialContent)
        #expect(try holdsDownloadPattern(destination, size: size))
        // The resumption counts what is on disk and the whole file as its total: the bar never jumps back.
        let resumed = reports.value.filter { $0.bytesReceived >= Int64(size / 2) && $0.totalBytesToReceive != nil }
        #expect(resumed.allSatisfy { $0.totalBytesToReceive == Int64(size) }, "\(resumed)")
        #expect(reports.value.last?.bytesReceived == Int64(size))
        #expect(reports.value.last?.fractionCompleted == 1)
        let sent = attempts.value
        #expect(sent.count == 2)
        #expect(sent.last?.headers["Range"] == "bytes=\(size / 2)-")
        #expect(sent.last?.headers["If-Range"] == "\"\(size)-1\"")
        #expect(try leftovers(in: folder).isEmpty)
    }

    @Test func aDownloadWhoseEntityChangedStartsOver() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        let size = 2_000_000
        let key = UUID().uuidString
        let url = URL(string: "\(downloads.absoluteString)/file/\(size)?drop=\(key)&change=\(key)")!
        let response = try await loader.download(HTTPRequest(url: url), to: destination).get()
        #expect(response.status == .ok)  // If-Range no longer matched: the whole, new entity
        #expect(response[header: "ETag"] == "\"\(size)-1-changed\"")
        #expect(try holdsDownloadPattern(destination, size: size))
    }

    @Test func aCancelledDownloadLeavesNothingBehind() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        try Data("the old file".utf8).write(to: destination)
        let received = Locked<Int64>(0)
        // The server sends a megabyte and then holds the rest back until the connection closes: the download
        // cannot finish before the cancel, however late this task wakes on a loaded machine.
        var request = HTTPRequest(url: URL(string: "\(downloads.absoluteString)/file/50000000?hold=1000000")!)
        request.progressHandler = { progress in received.withLock { $0 = max($0, progress.bytesReceived) } }
        let download = Task(priority: .high) { [loader] in await loader.download(request, to: destination) }
        try await eventually { received.value > 100_000 }
        #expect(try !leftovers(in: folder).isEmpty, "no temporary file while the download runs")
        download.cancel()
        #expect(try await download.finished().error?.code == .cancelled)
        #expect(try leftovers(in: folder).isEmpty)
        #expect(try Data(contentsOf: destination) == Data("the old file".utf8))
    }

    /// The transport refuses the body from the head's callback (the range does not continue what is on disk),
    /// which is where a cancel on Linux must not wait for the thread it runs on.
    @Test func aRangeThatDoesNotContinueTheFileFailsWithoutWriting() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let part = folder.appending(path: "part")
        try Data(count: 100).write(to: part)
        var request = HTTPRequest(url: nginx.appending(path: "download/32M.bin"))
        request.headers["Range"] = "bytes=50-"  // while the file holds 100 bytes
        request.responseDelivery = .file(part, resumingAt: 100)
        let result: HTTPResult? = await withDeadline(seconds: 30) { [loader, request] in await loader.load(request) }
        let error = try #require(result?.error, "\(String(describing: result))")
        #expect(error.message.contains("not one starting at byte 100"), "\(error)")
        #expect(try Data(contentsOf: part) == Data(count: 100))
    }

    @Test func aFailedStatusKeepsItsBodyAndTouchesNoFile() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "missing.bin")
        let response = try await loader.download(
            HTTPRequest(url: nginx.appending(path: "download/missing.bin")), to: destination
        ).get()
        #expect(response.status == .notFound)
        #expect(response.fileURL == nil)
        #expect(!response.body.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try leftovers(in: folder).isEmpty)
    }
}

import Foundation
import HTTP
import Testing

@testable import HTTPAsyncHTTPClient

/// Bodies that stream both ways and downloads to disk, against nginx, httpbin and the download server.
@Suite(
    .timeLimit(.minutes(3)), .enabled(if: TestServers.haveHTTP, "needs the local servers: run through scripts/test.sh"))
struct TransferTests {
    let httpbin = TestServers.httpbin!
    let nginx = TestServers.nginx!
    let downloads = TestServers.downloads!

    /// What the download server's `/echo` saw of a body.
    private struct Echo: Decodable {
        var length: Int
        var chunked: Bool
        var contentLength: String?
        var contentType: String?
        var head: String
    }

    private func echo(_ body: any HTTPBody, with loader: HTTPLoader) async throws -> Echo {
        let url = downloads.appending(path: "echo")
        let response = try await loader.load(HTTPRequest(method: .post, url: url, body: body)).get()
        return try JSONDecoder().decode(Echo.self, from: response.body)
    }

    private func leftovers(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".download") }
    }

    // MARK: - Request bodies

    @Test func aFileIsUploadedFromDiskWithItsLength() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Large enough to take several of the progress reporter's 1/30 s intervals on a fast machine (a 3 MB file
        // went out in one), and sparse: nothing to write first.
        let size = 64_000_000
        let file = folder.appending(path: "upload.bin")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        try FileHandle(forWritingTo: file).truncate(atOffset: UInt64(size))
        try await withLoader { loader async throws in
            let reports = Box<[HTTPProgress]>([])
            var request = HTTPRequest(
                method: .post, url: downloads.appending(path: "echo"), body: FileBody(file, contentType: "text/plain"))
            request.progressHandler = { progress in reports.withLock { $0.append(progress) } }
            let response = try await loader.load(request).get()
            let echo = try JSONDecoder().decode(Echo.self, from: response.body)
            #expect(echo.length == size)
            #expect(echo.contentLength == "\(size)")
            #expect(!echo.chunked)
            #expect(echo.contentType == "text/plain")
            #expect(reports.value.last?.bytesSent == Int64(size))
            #expect(reports.value.count > 2, "progress as the file goes out, not only at the end")
            #expect(response.metrics?.requestBodyBytesSent == Int64(size))
        }
    }

    @Test(arguments: [Int64?.none, 300_000])
    func aSequenceOfChunksIsSentAsItComes(length: Int64?) async throws {
        try await withLoader { loader async throws in
            let chunks = AsyncStream<Data> { continuation in
                for index in 0..<30 {
                    continuation.yield(Data(repeating: UInt8(ascii: "a") + UInt8(index % 26), count: 10_000))
                }
                continuation.finish()
            }
            let echo = try await echo(StreamBody(length: length, contentType: "text/plain", chunks), with: loader)
            #expect(echo.length == 300_000)
            #expect(echo.head == String(repeating: "a", count: 64))
            #expect(echo.chunked == (length == nil))
            #expect(!(echo.chunked && echo.contentLength != nil))
        }
    }

    @Test func aBodyThatFailsToProduceItsBytesFailsTheRequest() async throws {
        struct Broken: Error {}
        try await withLoader { loader async throws in
            let chunks = AsyncThrowingStream<Data, any Error> { continuation in
                continuation.yield(Data(count: 1000))
                continuation.finish(throwing: Broken())
            }
            let request = HTTPRequest(
                method: .post, url: downloads.appending(path: "echo"), body: StreamBody(length: nil, chunks))
            let error = try #require(await loader.load(request).error)
            #expect(error.code == .invalidRequest, "\(error)")
            #expect(error.message.contains("could not be read"), "\(error.message)")
        }
    }

    // MARK: - Streamed responses

    @Test func aStreamedResponseArrivesHeadFirstThenInLines() async throws {
        try await withLoader { loader async throws in
            let streamed = try await loader.stream(HTTPRequest(url: httpbin.appending(path: "stream/20"))).get()
            #expect(streamed.head.status == .ok)
            #expect(streamed.head.body.isEmpty)
            var lines = 0
            for try await line in streamed.body.lines where !line.isEmpty { lines += 1 }
            #expect(lines == 20)
        }
    }

    @Test func aSlowConsumerKeepsTheBufferBounded() async throws {
        try await withLoader { loader async throws in
            let streamed = try await loader.stream(HTTPRequest(url: nginx.appending(path: "download/32M.bin"))).get()
            let body = streamed.body
            var largest = 0
            var received = 0
            var matches = true
            for try await chunk in body {
                if matches { matches = chunk == downloadPattern(received..<received + chunk.count) }
                received += chunk.count
                largest = max(largest, body.bufferedByteCount)
                if received < 4 * 1024 * 1024 { try await Task.sleep(for: .milliseconds(2)) }
            }
            #expect(received == 32 * 1024 * 1024)
            #expect(matches, "the bytes arrive in order, unchanged")
            // The limit, plus what was already on its way when the transfer paused.
            #expect(largest <= body.bufferLimit + 1024 * 1024, "held \(largest) bytes for a consumer that lagged")
        }
    }

    @Test func cancellingAStreamStopsTheTransfer() async throws {
        try await withLoader { loader async throws in
            let streamed = try await loader.stream(HTTPRequest(url: nginx.appending(path: "download/32M.bin"))).get()
            var received = 0
            do {
                for try await chunk in streamed.body {
                    received += chunk.count
                    if received > 1_000_000 { streamed.body.cancel() }
                }
                Issue.record("the stream ended normally after a cancel")
            } catch {
                #expect((error as? HTTPError)?.code == .cancelled, "\(error)")
            }
            #expect(received < 32 * 1024 * 1024)
            try await eventually(seconds: 10) { loader.transfersUnderWay == 0 }
        }
    }

    @Test func droppingAStreamStopsTheTransfer() async throws {
        try await withLoader { loader async throws in
            var streamed: StreamedResponse? = try await loader.stream(
                HTTPRequest(url: nginx.appending(path: "download/32M.bin"))
            ).get()
            #expect(streamed?.head.status == .ok)
            #expect(loader.transfersUnderWay == 1)
            streamed = nil
            try await eventually(seconds: 10) { loader.transfersUnderWay == 0 }
        }
    }

    @Test func cancellingTheConsumersTaskStopsTheStream() async throws {
        try await withLoader { loader async throws in
            // 64 KiB, then nothing until the client closes the connection: only a cancel ends this stream early,
            // however late a loaded machine runs the test.
            let downloads = try #require(TestServers.downloads)
            let held = try #require(URL(string: "\(downloads.absoluteString)/file/1000000?hold=65536"))
            let streamed = try await loader.stream(HTTPRequest(url: held)).get()
            #expect(streamed.head.status == .ok)
            let started = Box(false)
            let consumer = Task(priority: .high) { () -> HTTPError.Code? in
                started.withLock { $0 = true }
                do {
                    for try await _ in streamed.body {}
                    return nil
                } catch {
                    return (error as? HTTPError)?.code
                }
            }
            try await eventually { started.value }
            consumer.cancel()
            let code = try await consumer.finished(within: 10)
            #expect(code == .cancelled, "\(String(describing: code))")
        }
    }

    @Test func aCancellingResetEndsAStreamInFlight() async throws {
        try await withLoader { loader async throws in
            // 64 KiB, then nothing until the client closes the connection: only a cancel ends this stream early,
            // however late a loaded machine runs the test.
            let downloads = try #require(TestServers.downloads)
            let held = try #require(URL(string: "\(downloads.absoluteString)/file/1000000?hold=65536"))
            let streamed = try await loader.stream(HTTPRequest(url: held)).get()
            await loader.reset(mode: .cancel)
            do {
                for try await _ in streamed.body {}
                Issue.record("the stream went on after a cancelling reset")
            } catch {
                #expect((error as? HTTPError)?.code == .cancelled, "\(error)")
            }
        }
    }

    // MARK: - Downloads

    @Test func aDownloadLandsInPlaceWithProgress() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "32M.bin")
        try await withLoader { loader async throws in
            let reports = Box<[HTTPProgress]>([])
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
    }

    @Test func aDownloadCutOffHalfWayResumesWhereItStopped() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        let size = 3_000_000
        let key = UUID().uuidString
        try await withLoader { loader async throws in
            let attempts = Box<[HTTPRequest]>([])
            let chain =
                ModifyRequest { request in
                    attempts.withLock { $0.append(request) }
                    return request
                } --> loader
            let url = URL(string: "\(downloads.absoluteString)/file/\(size)?drop=\(key)")!
            let reports = Box<[HTTPProgress]>([])
            var request = HTTPRequest(url: url)
            request.progressHandler = { progress in reports.withLock { $0.append(progress) } }
            let response = try await chain.download(request, to: destination).get()
            #expect(response.status == .partialContent)
            #expect(try holdsDownloadPattern(destination, size: size))
            let resumed = reports.value.filter { $0.bytesReceived >= Int64(size / 2) && $0.totalBytesToReceive != nil }
            #expect(resumed.allSatisfy { $0.totalBytesToReceive == Int64(size) }, "\(resumed)")
            #expect(reports.value.last?.bytesReceived == Int64(size))
            let sent = attempts.value
            #expect(sent.count == 2)
            // It resumes from what reached the disk: the server cut off at half, and AsyncHTTPClient drops the parts
            // it had read but not yet handed over when it sees the connection close.
            let range = try #require(sent.last?.headers["Range"])
            let resumedAt = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
            #expect(range.hasPrefix("bytes=") && range.hasSuffix("-"))
            #expect(resumedAt > 0 && resumedAt <= size / 2, "\(range)")
            #expect(sent.last?.headers["If-Range"] == "\"\(size)-1\"")
            #expect(try leftovers(in: folder).isEmpty)
        }
    }

    @Test func aDownloadWhoseEntityChangedStartsOver() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        let size = 2_000_000
        let key = UUID().uuidString
        try await withLoader { loader async throws in
            let url = URL(string: "\(downloads.absoluteString)/file/\(size)?drop=\(key)&change=\(key)")!
            let response = try await loader.download(HTTPRequest(url: url), to: destination).get()
            #expect(response.status == .ok)
            #expect(response[header: "ETag"] == "\"\(size)-1-changed\"")
            #expect(try holdsDownloadPattern(destination, size: size))
        }
    }

    @Test func aRangeOfNginxsFileIsAppendedAtItsOffset() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "part.bin")
        try downloadPattern(0..<1_000).write(to: file)
        try await withLoader { loader async throws in
            var request = HTTPRequest(url: nginx.appending(path: "download/32M.bin"))
            request.headers["Range"] = "bytes=1000-"
            request.responseDelivery = .file(file, resumingAt: 1_000)
            let response = try await loader.load(request).get()
            #expect(response.status == .partialContent)
            #expect(response.fileURL == file)
            #expect(try holdsDownloadPattern(file, size: 32 * 1024 * 1024))
        }
    }

    @Test func aRangeThatDoesNotContinueTheFileFailsWithoutWriting() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let part = folder.appending(path: "part")
        try Data(count: 100).write(to: part)
        try await withLoader { loader async throws in
            var request = HTTPRequest(url: nginx.appending(path: "download/32M.bin"))
            request.headers["Range"] = "bytes=50-"  // while the file holds 100 bytes
            request.responseDelivery = .file(part, resumingAt: 100)
            let error = try #require(await loader.load(request).error)
            #expect(error.message.contains("100"), "\(error)")
            #expect(try Data(contentsOf: part) == Data(count: 100))
        }
    }

    @Test func aCancelledDownloadLeavesNothingBehind() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        try Data("the old file".utf8).write(to: destination)
        try await withLoader { loader async throws in
            let received = Box<Int64>(0)
            // A megabyte, then nothing until the connection closes: the download cannot finish before the cancel.
            var request = HTTPRequest(url: URL(string: "\(downloads.absoluteString)/file/50000000?hold=1000000")!)
            request.progressHandler = { progress in received.withLock { $0 = max($0, progress.bytesReceived) } }
            let download = Task(priority: .high) { await loader.download(request, to: destination) }
            try await eventually { received.value > 100_000 }
            #expect(try !leftovers(in: folder).isEmpty, "no temporary file while the download runs")
            download.cancel()
            #expect(try await download.finished().error?.code == .cancelled)
            #expect(try leftovers(in: folder).isEmpty)
            #expect(try Data(contentsOf: destination) == Data("the old file".utf8))
        }
    }

    @Test func aFailedStatusKeepsItsBodyAndTouchesNoFile() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "missing.bin")
        try await withLoader { loader async throws in
            let response = try await loader.download(
                HTTPRequest(url: nginx.appending(path: "download/missing.bin")), to: destination
            ).get()
            #expect(response.status == .notFound)
            #expect(response.fileURL == nil)
            #expect(!response.body.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }
}

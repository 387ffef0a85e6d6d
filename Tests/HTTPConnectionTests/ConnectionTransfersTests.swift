import Foundation
import HTTP
import HTTPConnection
import Testing

/// Downloads to a file and uploads from a file or a sequence, through `Connection`.
@Suite(.noHang) struct ConnectionTransfersTests {
    struct Receipt: Decodable, Sendable, Equatable {
        var length: Int
    }

    static let receipt = Request<Receipt>(underlyingRequest: HTTPRequest(method: .put, host: "h", path: "/files/1"))

    /// A folder of its own for one test's files.
    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "conn-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static let file = Request<Data>(underlyingRequest: HTTPRequest(host: "h", path: "/f"))

    static let payload = Data((0..<100_000).map { UInt8($0 % 251) })

    @Test func aDownloadIsWrittenToTheDestinationWithItsResponseAndProgress() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        let mock = MockLoader().then(
            status: .ok, headers: ["Content-Length": "100000", "ETag": "\"v1\""], body: Self.payload)
        let reports = Box<[HTTPProgress]>([])
        let file = try await Connection(loader: mock).download(
            Request<Data>(underlyingRequest: HTTPRequest(host: "h", path: "/file.bin")), to: destination
        ) { progress in reports.withLock { $0.append(progress) } }
        #expect(file.fileURL == destination)
        #expect(file.status == .ok && file.headers["ETag"] == "\"v1\"")
        #expect(try Data(contentsOf: destination) == Self.payload)
        #expect(reports.value.last?.bytesReceived == 100_000)
        #expect(reports.value.last?.fractionCompleted == 1)
    }

    @Test func aDownloadCutOffHalfWayIsResumedWithARange() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        let half = Self.payload.count / 2
        let mock = MockLoader()
            .then { request in
                // Half the body reaches the file, then the connection is lost.
                guard case .file(let url, _) = request.responseDelivery else {
                    return .failure(HTTPError(.unknown, request: request))
                }
                try? Self.payload.prefix(half).write(to: url)
                let head = HTTPResponse(
                    request: request, status: .ok, headers: ["ETag": "\"v1\"", "Content-Length": "100000"])
                return .failure(HTTPError(.cannotConnect, request: request, response: head))
            }
            .then { request in
                let rest = Self.payload.suffix(from: half)
                return .success(
                    HTTPResponse(
                        request: request, status: .partialContent,
                        headers: ["Content-Range": "bytes \(half)-99999/100000", "ETag": "\"v1\""], body: Data(rest)))
            }
        let file = try await Connection(loader: mock).download(Self.file, to: destination)
        #expect(file.status == .partialContent)
        #expect(try Data(contentsOf: destination) == Self.payload)
        let resumed = try #require(mock.receivedRequests.last)
        #expect(resumed.headers["Range"] == "bytes=\(half)-")
        #expect(resumed.headers["If-Range"] == "\"v1\"")
        #expect(file.response.request.headers["Range"] == "bytes=\(half)-")
    }

    @Test func aStatusOtherThan200Or206ThrowsAndLeavesTheDestinationAlone() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        try Data("old".utf8).write(to: destination)
        let mock = MockLoader().then(status: .notFound, body: Data("no such file".utf8))
        let error = await #expect(throws: ResponseError.self) {
            try await Connection(loader: mock).download(Self.file, to: destination)
        }
        #expect(error?.kind == .unacceptableStatus && error?.status == .notFound)
        #expect(error?.response.body == Data("no such file".utf8))
        #expect(try Data(contentsOf: destination) == Data("old".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["file.bin"])
    }

    @Test func aDownloadThrowsTheRequestsTypedErrorBodyAndLeavesTheDestinationAlone() async throws {
        struct Problem: Decodable, Sendable { var reason: String }
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file.bin")
        let mock = MockLoader()
            .then(status: .forbidden, body: Data(#"{"reason":"quota"}"#.utf8))
            .then(status: .noContent)
            .then(status: .forbidden, body: Data(#"{"reason":"quota"}"#.utf8))
        let connection = Connection(loader: mock)
        let error = await #expect(throws: ServerError<Problem>.self) {
            try await connection.download(Self.file.decodingErrors(as: Problem.self), to: destination)
        }
        #expect(error?.body.reason == "quota" && error?.response.status == .forbidden)
        // A status the request accepts but that has no body to save.
        let empty = await #expect(throws: ResponseError.self) {
            try await connection.download(Self.file, to: destination)
        }
        #expect(empty?.kind == .unacceptableStatus && empty?.status == .noContent)
        let completed = Box<[Result<DownloadedFile, any Error>]>([])
        await withCheckedContinuation { continuation in
            connection.download(Self.file.decodingErrors(as: Problem.self), to: destination) { result in
                completed.withLock { $0.append(result) }
                continuation.resume()  // a second call would trap
            }
        }
        #expect((completed.value.first?.error as? ServerError<Problem>)?.body.reason == "quota")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func theCompletionFormOfADownloadCompletesOnceAndItsHandleCancels() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let connection = Connection(
            loader: MockLoader()
                .then(status: .ok, body: Self.payload)
                .then { request in
                    try? await Task.sleep(for: .seconds(60))
                    return .success(HTTPResponse(request: request, status: .ok, body: Self.payload))
                })
        let results = Box<[Result<DownloadedFile, any Error>]>([])
        await withCheckedContinuation { continuation in
            connection.download(
                Request<Data>(underlyingRequest: HTTPRequest(host: "h", path: "/a")), to: folder.appending(path: "a")
            ) { result in
                results.withLock { $0.append(result) }
                continuation.resume()  // a second call would trap
            }
        }
        #expect(try results.value.first?.get().fileURL == folder.appending(path: "a"))

        let cancelled = Box<[Result<DownloadedFile, any Error>]>([])
        let task = connection.download(
            Request<Data>(underlyingRequest: HTTPRequest(host: "h", path: "/b")), to: folder.appending(path: "b")
        ) { result in
            cancelled.withLock { $0.append(result) }
        }
        try await eventually { (connection.loader as? MockLoader)?.receivedRequests.count == 2 }
        task.cancel()
        #expect(cancelled.value.count == 1, "completed at once")
        #expect((cancelled.value.first?.error as? HTTPError)?.code == .cancelled)
        await connection.reset()  // returns once the download has ended
        #expect(cancelled.value.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "b").path))
    }

    @Test func aFileIsUploadedAndTheResponseDecoded() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "upload.bin")
        try Self.payload.write(to: file)
        let mock = MockLoader().then { request in
            let body = (try? request.body.encode()) ?? Data()
            let json = #"{"length":\#(body == Self.payload ? body.count : -1)}"#
            return .success(HTTPResponse(request: request, status: .created, body: Data(json.utf8)))
        }
        let sent = Box<Int64>(0)
        let receipt = try await Connection(loader: mock).upload(Self.receipt, fromFile: file, contentType: "video/mp4")
        {
            progress in sent.withLock { $0 = max($0, progress.bytesSent) }
        }
        #expect(receipt == Receipt(length: 100_000))
        #expect(
            mock.receivedRequests.first?.headers["Content-Type"]
                ?? mock.receivedRequests.first?.body.additionalHeaders["Content-Type"] == "video/mp4")
        #expect(sent.value == 100_000)
    }

    @Test func aSequenceOfChunksIsUploadedAndTheResponseDecoded() async throws {
        let mock = MockLoader().then { request in
            var body = Data()
            do {
                for try await chunk in try request.body.makeSource().chunks() { body += chunk }
            } catch {
                return .failure(HTTPError(.invalidRequest, request: request, underlyingError: error))
            }
            return .success(HTTPResponse(request: request, status: .ok, body: Data(#"{"length":\#(body.count)}"#.utf8)))
        }
        let chunks = AsyncStream<Data> { continuation in
            for _ in 0..<10 { continuation.yield(Data(repeating: 1, count: 1_000)) }
            continuation.finish()
        }
        let receipt = try await Connection(loader: mock).upload(Self.receipt, from: chunks, length: 10_000)
        #expect(receipt.length == 10_000)
        #expect(mock.receivedRequests.first?.body.additionalHeaders["Content-Type"] == nil)
    }

    @Test func anUploadThrowsAsRequestDoesAndItsCompletionFormCompletesOnce() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "upload.bin")
        try Self.payload.write(to: file)
        let connection = Connection(
            loader: MockLoader().then(status: .contentTooLarge).then(status: .ok, body: Data(#"{"length":1}"#.utf8)))
        let error = await #expect(throws: ResponseError.self) {
            try await connection.upload(Self.receipt, fromFile: file)
        }
        #expect(error?.status == .contentTooLarge)
        let results = Box<[Result<Receipt, any Error>]>([])
        await withCheckedContinuation { continuation in
            connection.upload(Self.receipt, fromFile: file) { result in
                results.withLock { $0.append(result) }
                continuation.resume()
            }
        }
        #expect(try results.value.first?.get() == Receipt(length: 1))
    }
}

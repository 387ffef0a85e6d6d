public import Foundation
public import HTTP

/// A response whose body was downloaded to a file: the file, with the response's status and header fields.
///
/// ```swift
/// let video = Request<Data>(underlyingRequest: HTTPRequest(path: "/videos/42.mp4"))
/// let file = try await connection.download(video, to: destination)
/// print(file.fileURL.path, file.headers["Content-Type"] ?? "")
/// ```
public struct DownloadedFile: Sendable {
    /// Where the body is: the destination the download was given.
    public var fileURL: URL
    /// The response, without its body: status, header fields, metrics, the request as sent (a resumed download's
    /// last attempt, with its `Range`).
    public var response: HTTPResponse

    public init(fileURL: URL, response: HTTPResponse) {
        self.fileURL = fileURL
        self.response = response
    }

    /// The response's status: `200`, or `206` when the download was resumed.
    public var status: HTTPStatus { response.status }
    /// The response's header fields.
    public var headers: HTTPHeaders { response.headers }
    /// What the transfer took, as the transport measured it, when it measured it.
    public var metrics: HTTPMetrics? { response.metrics }
}

extension Connection {
    /// Downloads `request`'s response body to `destination`, reporting progress, and resuming where it stopped when
    /// the connection is lost.
    ///
    /// ```swift
    /// let video = Request<Data>(underlyingRequest: HTTPRequest(path: "/videos/42.mp4"))
    /// let file = try await connection.download(video, to: destination) { progress in
    ///     print(progress.fractionCompleted ?? 0)
    /// }
    /// print(file.status, file.fileURL.path)
    /// ```
    ///
    /// The body goes to a temporary file beside `destination`, moved into place once complete; a failed or
    /// cancelled download leaves `destination` as it was. A transfer cut off half-way is sent again through the
    /// chain, up to `resumeAttempts` times, with `Range` and `If-Range`, and continues where it stopped (see
    /// `HTTPLoader.download(_:to:resumeAttempts:)`). For progress as an `AsyncSequence`, wrap the call in
    /// `HTTPRequest.reportingProgress(_:to:)`.
    ///
    /// It throws `HTTPError` when no response arrived (cancelled, cannot connect, the file could not be written).
    /// Any status but `200` and `206` is not written to `destination`: for one the request does not accept it throws
    /// what ``request(_:)`` throws — a ``ServerError`` when the request decodes error bodies and the body decodes, a
    /// ``ResponseError`` otherwise, with the body the server sent (a `404`'s page) —, and for one it accepts (a
    /// `204`) a ``ResponseError`` of kind ``ResponseError/Kind/unacceptableStatus``. The request's decode closure is
    /// not used: the body is the file.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - destination: The file to write; replaced when the download completes.
    ///   - resumeAttempts: How many times a download cut off is resumed; 3 by default.
    ///   - progress: Called as bytes arrive, at most about 30 times a second, and once more at the end (see
    ///     `HTTPRequest.progressHandler`); on the transport's thread.
    public func download(
        _ request: Request<some Any>,
        to destination: URL,
        resumeAttempts: Int = 3,
        progress: (@Sendable (HTTPProgress) -> Void)? = nil
    ) async throws -> DownloadedFile {
        let result = await loader.download(
            Self.reporting(progress, of: request.underlyingRequest), to: destination, resumeAttempts: resumeAttempts)
        return try Self.downloadedFile(from: result, of: request, at: destination)
    }

    /// Downloads `request`'s response body to `destination` as ``download(_:to:resumeAttempts:progress:)`` does, and
    /// calls `completion` exactly once with the file or the error.
    ///
    /// - Returns: A handle whose `cancel()` completes the download at once with `HTTPError.Code.cancelled`, and
    ///   removes what was written.
    @discardableResult
    public func download(
        _ request: Request<some Any>,
        to destination: URL,
        resumeAttempts: Int = 3,
        progress: (@Sendable (HTTPProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<DownloadedFile, any Error>) -> Void
    ) -> HTTPTask {
        let reporting = Self.reporting(progress, of: request.underlyingRequest)
        return Self.task(for: reporting, completion: completion) { [loader] in
            let result = await loader.download(reporting, to: destination, resumeAttempts: resumeAttempts)
            return Result { try Self.downloadedFile(from: result, of: request, at: destination) }
        }
    }

    /// Sends `request` with the contents of `file` as its body, read from disk as it is sent, and returns its decoded
    /// value; it throws as ``request(_:)`` does.
    ///
    /// ```swift
    /// let receipt = try await connection.upload(.uploadVideo, fromFile: movieURL, contentType: "video/mp4")
    /// ```
    ///
    /// The file is never read into memory whole, and is read again for a retry or a replay after a `401`. A file
    /// that cannot be read fails with `HTTPError.Code.invalidRequest`.
    ///
    /// - Parameters:
    ///   - request: The request; its body is replaced by the file.
    ///   - file: A file URL of a regular file.
    ///   - contentType: The `Content-Type` to send; `application/octet-stream` by default.
    ///   - progress: Called as the body is sent and the response received (see `HTTPRequest.progressHandler`).
    public func upload<Response>(
        _ request: Request<Response>,
        fromFile file: URL,
        contentType: String = "application/octet-stream",
        progress: (@Sendable (HTTPProgress) -> Void)? = nil
    ) async throws -> sending Response {
        var upload = request
        upload.underlyingRequest.body = FileBody(file, contentType: contentType)
        upload.underlyingRequest = Self.reporting(progress, of: upload.underlyingRequest)
        return try await self.request(upload)
    }

    /// Sends `request` with the chunks `bytes` produces as its body, sent as they come, and returns its decoded value;
    /// it throws as ``request(_:)`` does.
    ///
    /// ```swift
    /// let recording = AsyncStream<Data> { continuation in … }
    /// let saved = try await connection.upload(.saveRecording, from: recording, contentType: "audio/aac")
    /// ```
    ///
    /// The sequence is iterated once: a retry, or a replay after a `401` or a `307`, fails with
    /// `HTTPError.Code.bodyNotReplayable` rather than send the body empty. (Give the request a `StreamBody` made with
    /// `makeChunks:` for a body that can be sent again.)
    ///
    /// - Parameters:
    ///   - request: The request; its body is replaced by the chunks.
    ///   - bytes: The body's chunks.
    ///   - length: The number of bytes, when known (it becomes `Content-Length`); otherwise the body is sent with
    ///     chunked transfer coding.
    ///   - contentType: The `Content-Type` to send, if any.
    ///   - progress: Called as the body is sent and the response received (see `HTTPRequest.progressHandler`).
    public func upload<Response, Bytes: AsyncSequence & Sendable>(
        _ request: Request<Response>,
        from bytes: Bytes,
        length: Int64? = nil,
        contentType: String? = nil,
        progress: (@Sendable (HTTPProgress) -> Void)? = nil
    ) async throws -> sending Response where Bytes.Element == Data {
        var upload = request
        upload.underlyingRequest.body = StreamBody(length: length, contentType: contentType, bytes)
        upload.underlyingRequest = Self.reporting(progress, of: upload.underlyingRequest)
        return try await self.request(upload)
    }

    /// Sends `request` with the contents of `file` as ``upload(_:fromFile:contentType:progress:)`` does, and calls
    /// `completion` exactly once with the decoded value or the error.
    ///
    /// - Returns: A handle whose `cancel()` completes the upload at once with `HTTPError.Code.cancelled`.
    @discardableResult
    public func upload<Response: Sendable>(
        _ request: Request<Response>,
        fromFile file: URL,
        contentType: String = "application/octet-stream",
        progress: (@Sendable (HTTPProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Response, any Error>) -> Void
    ) -> HTTPTask {
        var upload = request
        upload.underlyingRequest.body = FileBody(file, contentType: contentType)
        upload.underlyingRequest = Self.reporting(progress, of: upload.underlyingRequest)
        return self.request(upload, completion: completion)
    }

    /// `request` with `progress` called besides any progress handler it has.
    private static func reporting(
        _ progress: (@Sendable (HTTPProgress) -> Void)?, of request: HTTPRequest
    ) -> HTTPRequest {
        guard let progress else { return request }
        var reporting = request
        let previous = request.progressHandler
        reporting.progressHandler = { report in
            previous?(report)
            progress(report)
        }
        return reporting
    }

    /// The downloaded file of `request`'s download result, or the error it throws.
    private static func downloadedFile<Response>(
        from result: HTTPResult, of request: Request<Response>, at destination: URL
    ) throws -> DownloadedFile {
        let response = try result.get()
        guard response.fileURL != nil else {
            // A status not written to the file: the request's error for it, or, when it accepts it, this one.
            try request.checkStatus(of: response)
            throw ResponseError(kind: .unacceptableStatus, response: response, expectedType: DownloadedFile.self)
        }
        return DownloadedFile(fileURL: destination, response: response)
    }

    /// A handle for `work`, which runs in a task of its own: `completion` gets its outcome, or
    /// `HTTPError.Code.cancelled` at once when the handle is cancelled (the task is cancelled too) — exactly once.
    private static func task<Value: Sendable>(
        for request: HTTPRequest,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void,
        _ work: @escaping @Sendable () async -> Result<Value, any Error>
    ) -> HTTPTask {
        // The handle carries an `HTTPResult`: it completes with a placeholder response once `outcome` is set, or
        // with the cancellation.
        let outcome = Locked<Result<Value, any Error>?>(nil)
        let task = HTTPTask(request: request) { result in
            switch result {
            case .failure(let cancellation): completion(.failure(cancellation))
            case .success: completion(outcome.withLock { $0 } ?? .failure(HTTPError(.unknown, request: request)))
            }
        }
        let running = Task {
            let result = await work()
            outcome.withLock { $0 = result }
            task.complete(with: .success(HTTPResponse(request: request)))
        }
        task.onCancel { running.cancel() }
        return task
    }
}

public import Foundation

extension HTTPLoader {
    /// Sends `request` through the chain and returns as soon as the response's head arrives; the body follows
    /// as a stream, with backpressure.
    ///
    /// ```swift
    /// switch await chain.stream(HTTPRequest(path: "/stream/100")) {
    /// case .success(let streamed):
    ///     print(streamed.head.status)
    ///     for try await line in streamed.body.lines { print(line) }
    /// case .failure(let error):
    ///     print(error)
    /// }
    /// ```
    ///
    /// The loaders in the chain see the response when its head arrives and decide on it as usual: `Retry`
    /// retries a `503` (stopping its body), `OAuth` and `BasicAuth` replay a `401`. A terminal that cannot
    /// stream hands the body over in memory, and it is streamed from there.
    public func stream(_ request: HTTPRequest) async -> Result<StreamedResponse, HTTPError> {
        var streamed = request
        streamed.responseDelivery = .stream
        switch await load(streamed) {
        case .success(var response):
            let body = response.bodyStream ?? HTTPBodyStream(request: response.request, completeBody: response.body)
            response.bodyStream = nil
            response.body = Data()
            return .success(StreamedResponse(head: response, body: body))
        case .failure(let error):
            return .failure(error)
        }
    }

    /// Downloads the body of `request`'s response to `destination`, through a temporary file in the same folder
    /// that is moved into place only when the body is complete; on failure or cancellation the temporary file is
    /// removed and `destination` is left as it was.
    ///
    /// A download cut off half-way — the connection lost, a timeout — continues where it stopped, up to
    /// `resumeAttempts` times: the request is sent again through the chain with `Range: bytes=<received>-` and
    /// `If-Range` set to the first response's `ETag` (or `Last-Modified`). A `206` is appended to what the file has;
    /// a `200` means the entity changed (or the server does not do ranges), and the download starts over. Without
    /// a validator the download starts over too.
    ///
    /// ```swift
    /// let result = await chain.download(HTTPRequest(path: "/videos/42.mp4"), to: moviesFolder.appending(path: "42.mp4"))
    /// if case .success(let response) = result { print("saved to", response.fileURL!) }
    /// ```
    ///
    /// - Returns: The last response, its ``HTTPResponse/fileURL`` set to `destination` for a `200` or `206`; the
    ///   body of any other status (a `404`) stays in memory and `destination` is not touched.
    public func download(
        _ request: HTTPRequest, to destination: URL, resumeAttempts: Int = 3
    ) async -> HTTPResult {
        let folder = destination.deletingLastPathComponent()
        let temporary = folder.appending(path: ".\(destination.lastPathComponent).\(UUID().uuidString).download")
        defer { try? FileManager.default.removeItem(at: temporary) }
        var validator: String?
        var resumesLeft = max(0, resumeAttempts)
        var offset: Int64 = 0
        while true {
            var attempt = request
            attempt.responseDelivery = .file(temporary, resumingAt: offset)
            if offset > 0, let validator {
                attempt.headers["Range"] = "bytes=\(offset)-"
                attempt.headers["If-Range"] = validator
            }
            let result = await load(attempt)
            switch result {
            case .success(var response):
                guard response.fileURL != nil else { return .success(response) }  // a status not written to a file
                do {
                    try Self.move(temporary, over: destination)
                } catch {
                    return .failure(
                        HTTPError(
                            .unknown, request: attempt, message: "could not move the download to \(destination.path)",
                            response: response, underlyingError: error))
                }
                response.fileURL = destination
                return .success(response)
            case .failure(let error):
                let head = error.response
                validator = validator ?? head.flatMap(Self.validator(of:))
                let received =
                    (try? FileManager.default.attributesOfItem(atPath: temporary.path)[.size] as? NSNumber)??
                    .int64Value ?? 0
                let resumable: Set<HTTPError.Code> = [.cannotConnect, .timedOut, .invalidResponse]
                guard resumesLeft > 0, resumable.contains(error.code), !Task.isCancelled else { return result }
                resumesLeft -= 1
                // Without a validator a range could splice two different entities together: start over instead.
                offset = validator != nil && (head?.status == .ok || head?.status == .partialContent) ? received : 0
            }
        }
    }

    /// Moves the finished download into place in one step, `rename(2)`: a reader of `destination` sees the old
    /// file or the new one, never neither and never a part. A folder at `destination` is left alone (the rename
    /// fails). (`FileManager.replaceItemAt` is not used: on Linux it fails when the destination exists and
    /// replaces a folder with the file.)
    private static func move(_ source: URL, over destination: URL) throws {
        guard rename(source.path, destination.path) == 0 else {
            let code = errno
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSFilePathErrorKey: destination.path,
                    NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO),
                    NSLocalizedDescriptionKey: String(cString: strerror(code)),
                ])
        }
    }

    /// The validator a resumed download sends in `If-Range`: a strong `ETag`, else `Last-Modified`.
    private static func validator(of response: HTTPResponse) -> String? {
        if let etag = response.headers["ETag"], !etag.hasPrefix("W/") { return etag }
        return response.headers["Last-Modified"]
    }
}

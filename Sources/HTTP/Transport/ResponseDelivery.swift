public import Foundation

/// How a transport hands over a response's body, set per request.
///
/// Apps seldom set it themselves: ``HTTPLoader/stream(_:)`` asks for ``stream`` and
/// ``HTTPLoader/download(_:to:resumeAttempts:)`` for ``file(_:resumingAt:)``. A transport of your own reads it
/// to honour them; one that cannot leaves the body in memory, and ``HTTPLoader/stream(_:)`` then streams it from
/// there.
public enum ResponseDelivery: Sendable, Hashable, HTTPRequestOption {
    /// The whole body in memory, as ``HTTPResponse/body`` (the default).
    case buffered
    /// The response is handed over when its head arrives; the body follows as ``HTTPResponse/bodyStream``.
    case stream
    /// The body of a `200` or `206` response is written to a file (``HTTPResponse/fileURL``): a `200`'s from the
    /// file's start, a `206`'s at `offset`, after the bytes the file already has (a resumed download). Bodies of
    /// other statuses stay in memory.
    case file(URL, resumingAt: Int64 = 0)

    public static let defaultOptionValue: ResponseDelivery = .buffered
}

extension HTTPRequest {
    /// How the transport hands over the response's body; ``ResponseDelivery/buffered`` by default.
    public var responseDelivery: ResponseDelivery {
        get { self[option: ResponseDelivery.self] }
        set { self[option: ResponseDelivery.self] = newValue }
    }
}

/// A response whose body arrives as a stream: the head (status and header fields, with an empty ``body``),
/// and the body's chunks.
public struct StreamedResponse: Sendable {
    /// The response's head: its status, header fields, URL and request. Its ``HTTPResponse/body`` is empty.
    public var head: HTTPResponse
    /// The body as it arrives.
    public var body: HTTPBodyStream
}

extension HTTPResponse {
    /// This response as `request`'s delivery asks for it, made from a body in memory: streamed from memory, or
    /// written to the file. For terminals that produce whole bodies (``MockLoader``, replays).
    package func delivered(for request: HTTPRequest) -> HTTPResult {
        switch request.responseDelivery {
        case .buffered:
            return .success(self)
        case .stream:
            var streamed = self
            streamed.bodyStream = HTTPBodyStream(request: request, completeBody: body)
            streamed.body = Data()
            return .success(streamed)
        case .file(let url, let offset):
            guard status == .ok || status == .partialContent else { return .success(self) }
            do {
                let handle = try FileWriter(url: url, startingAt: status == .partialContent ? offset : 0)
                try handle.write(body)
                try handle.close()
            } catch {
                return .failure(
                    HTTPError(
                        .unknown, request: request, message: "could not write the body to \(url.path): \(error)",
                        response: self, underlyingError: error))
            }
            var written = self
            written.fileURL = url
            written.body = Data()
            return .success(written)
        }
    }
}

/// Writes a body to a file: from its start (truncating it), or after its first `offset` bytes. Chunks are
/// gathered into writes of about a mebibyte, so a download costs a system call per mebibyte rather than one per
/// chunk the transport delivers; ``close()`` writes the rest.
package final class FileWriter {
    private let handle: FileHandle
    private var pending = Data()
    private static let writeSize = 1 << 20
    package private(set) var bytesWritten: Int64 = 0

    package init(url: URL, startingAt offset: Int64) throws {
        if !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw BodyError("could not create \(url.path)")
            }
        }
        handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(max(0, offset)))
        try handle.seekToEnd()
    }

    package func write(_ data: Data) throws {
        bytesWritten += Int64(data.count)
        if pending.isEmpty, data.count >= Self.writeSize {
            try handle.write(contentsOf: data)
            return
        }
        if pending.isEmpty { pending.reserveCapacity(Self.writeSize + data.count) }
        pending.append(data)
        if pending.count >= Self.writeSize { try flush() }
    }

    /// Writes what is gathered, then closes the file; call it however the transfer ended, so that a resumed
    /// download continues after every byte received.
    package func close() throws {
        do {
            try flush()
        } catch {
            try? handle.close()
            throw error
        }
        try handle.close()
    }

    private func flush() throws {
        guard !pending.isEmpty else { return }
        try handle.write(contentsOf: pending)
        pending.removeAll(keepingCapacity: true)
    }
}

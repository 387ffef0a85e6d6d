public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// How a transport hands over a response's body, set per request.
///
/// Apps seldom set it themselves: ``HTTPLoader/stream(_:)`` asks for ``stream`` and
/// ``HTTPLoader/download(_:to:resumeAttempts:)`` for ``file(_:resumingAt:)``. A transport of your own reads it
/// to honour them; one that cannot leaves the body in memory, and ``HTTPLoader/stream(_:)`` then streams it from
/// there.
@frozen
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

extension ResponseDelivery {
    /// Opens the file of a ``file(_:resumingAt:)`` delivery to write a body after the file's first `offset` bytes,
    /// as the package's transports do: creates it if it does not exist, cuts it to `offset` bytes if it has more
    /// (and extends it with zeros to `offset` if it has fewer), and positions the handle at its end.
    ///
    /// A new or empty file is never truncated: emptying a file (`ftruncate(2)` to zero, `O_TRUNC`) makes ext4
    /// write the whole file back when it is closed (its `auto_da_alloc`), which stalls the end of a large
    /// download for as long as the disk takes to take it.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - offset: The number of bytes of the file to keep; the body is written after them.
    /// - Returns: A handle positioned at the end of the file's first `offset` bytes.
    /// - Throws: The file system's error when the file cannot be created, opened or cut.
    @_spi(Transport) public static func openFile(_ url: URL, resumingAt offset: Int64) throws -> FileHandle {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(code),
                    NSLocalizedDescriptionKey:
                        "could not open \(url.path) for writing: \(String(cString: strerror(code.rawValue)))",
                ])
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let kept = UInt64(max(0, offset))
        // `truncate(atOffset:)` leaves the handle at `kept` too.
        if try handle.seekToEnd() != kept { try handle.truncate(atOffset: kept) }
        return handle
    }
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
            // A body that is already a stream (a test double's, delivered in chunks of its choosing) stays one.
            if bodyStream != nil { return .success(self) }
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

/// Writes a body to a file (opened by `ResponseDelivery.openFile(_:resumingAt:)`): from its start, or after its
/// first `offset` bytes. Chunks are gathered into writes of about a mebibyte, so a download costs a system call per
/// mebibyte rather than one per chunk the transport delivers; ``close()`` writes the rest.
package final class FileWriter {
    private let handle: FileHandle
    private var pending = Data()
    private static let writeSize = 1 << 20
    package private(set) var bytesWritten: Int64 = 0

    package init(url: URL, startingAt offset: Int64) throws {
        handle = try ResponseDelivery.openFile(url, resumingAt: offset)
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

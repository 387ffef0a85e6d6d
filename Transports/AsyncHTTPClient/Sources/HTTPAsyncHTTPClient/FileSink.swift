import Foundation
@_spi(Transport) import HTTP
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A download's file: each part written by NIO's thread pool, never on the event loop, straight from the
/// `ByteBuffer` it arrived in; AsyncHTTPClient hands over the next part only once the write is done, so writes never
/// overlap. Closed once the write under way, if any, is done.
final class FileSink: Sendable {
    /// A problem with the download's file, naming it.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private struct State {
        var isWriting = false
        var isCloseRequested = false
        var isClosed = false
    }

    private let url: URL
    private let handle: FileHandle
    private let state = NIOLockedValueBox(State())

    /// Opens `url` for writing after its first `offset` bytes, creating it if needed.
    init(url: URL, truncatingAt offset: Int64) throws {
        self.url = url
        do {
            handle = try ResponseDelivery.openFile(url, resumingAt: offset)
        } catch {
            throw Failure(description: "could not open \(url.path) for writing: \(error)")
        }
    }

    /// Appends `buffer`; the future fails with a ``Failure`` when the write fails.
    func write(_ buffer: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let descriptor = handle.fileDescriptor
        let path = url.path
        state.withLockedValue { $0.isWriting = true }
        let written = NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            try buffer.withUnsafeReadableBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        throw Failure(
                            description: "could not write the response to \(path): \(String(cString: strerror(errno)))")
                    }
                    offset += count
                }
            }
        }
        written.whenComplete { [self] _ in
            let close = state.withLockedValue { state -> Bool in
                state.isWriting = false
                return state.isCloseRequested && !state.isClosed
            }
            if close { try? closeNow() }
        }
        return written
    }

    /// Closes the file: at once, or once the write under way is done (its error is then not reported).
    func close() throws {
        let now = state.withLockedValue { state -> Bool in
            state.isCloseRequested = true
            return !state.isWriting && !state.isClosed
        }
        if now { try closeNow() }
    }

    private func closeNow() throws {
        let first = state.withLockedValue { state -> Bool in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard first else { return }
        do {
            try handle.close()
        } catch {
            throw Failure(description: "could not write the response to \(url.path): \(error)")
        }
    }
}

/// `write(2)`, under a name that does not clash with the methods called `write`.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #elseif canImport(Musl)
    Musl.write(descriptor, bytes, count)
    #else
    Darwin.write(descriptor, bytes, count)
    #endif
}

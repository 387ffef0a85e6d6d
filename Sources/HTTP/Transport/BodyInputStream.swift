import Foundation

/// The `InputStream` URLSession reads a body made of parts from (`URLRequest.httpBodyStream`): bytes in
/// memory and files, read one after the other as URLSession asks, a file a chunk at a time.
///
/// Every read is answered at once, from memory or from disk: URLSession on Linux reads on the one queue all of
/// its sessions share, so a read must never wait for other work. (A body made from an `AsyncSequence` is first
/// collected into a temporary file for that reason; see ``URLSessionLoader``.)
final class BodyInputStream: InputStream {
    private let reader: SegmentReader

    /// - Parameter segments: The parts, each bytes in memory or a file.
    init(segments: [HTTPBodySource.Segment]) {
        reader = SegmentReader(segments: segments)
        super.init(data: Data())
    }

    override func open() { reader.open() }
    override func close() { reader.close() }
    override var streamStatus: Stream.Status { reader.status }
    override var streamError: (any Error)? { reader.error }
    override var hasBytesAvailable: Bool { reader.status == .open }

    override func read(_ destination: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        reader.read(into: destination, maxLength: length)
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }

    #if !canImport(FoundationNetworking)
    // Apple's URLSession reads a body stream through CFReadStream, which sends these private messages to an
    // InputStream subclass; without them it raises "unrecognized selector". The stream needs no run loop: every
    // read is answered at once.
    @objc(_scheduleInCFRunLoop:forMode:)
    func scheduleInCFRunLoop(_ runLoop: CFRunLoop, forMode mode: CFString) {}

    @objc(_unscheduleFromCFRunLoop:forMode:)
    func unscheduleFromCFRunLoop(_ runLoop: CFRunLoop, forMode mode: CFString) {}

    @objc(_setCFClientFlags:callback:context:)
    func setCFClientFlags(
        _ flags: CFOptionFlags, callback: CFReadStreamClientCallBack?, context: UnsafeMutableRawPointer?
    ) -> Bool {
        false
    }
    #endif
}

/// Reads bytes in memory and files one after the other.
final class SegmentReader: Sendable {
    private struct State {
        var segments: [HTTPBodySource.Segment]
        var index = 0
        var offset = 0
        var file: FileHandle?
        var status: Stream.Status = .notOpen
        var error: (any Error)?
    }

    private let state: Locked<State>

    init(segments: [HTTPBodySource.Segment]) {
        state = Locked(State(segments: segments))
    }

    var status: Stream.Status { state.withLock { $0.status } }
    var error: (any Error)? { state.withLock { $0.error } }

    func open() {
        state.withLock { if $0.status == .notOpen { $0.status = .open } }
    }

    func close() {
        state.withLock { state in
            try? state.file?.close()
            state.file = nil
            state.status = .closed
        }
    }

    /// Copies up to `length` bytes into `destination`: the count, 0 at the end, -1 when a file could not be read.
    func read(into destination: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        state.withLock { state -> Int in
            guard state.status == .open else { return state.status == .error ? -1 : 0 }
            while state.index < state.segments.count {
                do {
                    switch state.segments[state.index] {
                    case .bytes(let data):
                        if state.offset < data.count {
                            let count = min(length, data.count - state.offset)
                            data.withUnsafeBytes { bytes in
                                let start = bytes.baseAddress!.advanced(by: state.offset)
                                destination.update(from: start.assumingMemoryBound(to: UInt8.self), count: count)
                            }
                            state.offset += count
                            return count
                        }
                    case .file(let url):
                        if state.file == nil { state.file = try FileHandle(forReadingFrom: url) }
                        if let chunk = try state.file?.read(upToCount: length), !chunk.isEmpty {
                            chunk.copyBytes(to: destination, count: chunk.count)
                            return chunk.count
                        }
                        try state.file?.close()
                        state.file = nil
                    }
                } catch {
                    state.error = error
                    state.status = .error
                    return -1
                }
                state.index += 1
                state.offset = 0
            }
            state.status = .atEnd
            return 0
        }
    }
}

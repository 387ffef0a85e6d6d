public import Foundation

/// Where a transport reads a body's bytes from as it sends them: memory, a file, a sequence of chunks, or
/// several of these one after the other.
///
/// Only bodies that stream need to make one (see ``HTTPBody/makeSource()``); a file is sent from disk and a
/// sequence as it produces chunks, so neither is ever held in memory whole.
public struct HTTPBodySource: Sendable {
    enum Storage: Sendable {
        case data(Data)
        case file(URL, length: Int64)
        case chunks(any AsyncSequence<Data, any Error> & Sendable, length: Int64?)
        case concatenation([HTTPBodySource])
    }

    let storage: Storage

    /// Bytes in memory.
    public static func data(_ data: Data) -> HTTPBodySource {
        HTTPBodySource(storage: .data(data))
    }

    /// The contents of a file, read as they are sent.
    ///
    /// - Throws: When the file cannot be read or is not a regular file.
    public static func file(_ url: URL) throws -> HTTPBodySource {
        HTTPBodySource(storage: .file(url, length: try FileBody.length(of: url)))
    }

    /// The chunks an `AsyncSequence` produces, sent as they come.
    ///
    /// - Parameters:
    ///   - length: The number of bytes the sequence produces, if known (it becomes `Content-Length`); `nil`
    ///     sends the body with chunked transfer coding.
    ///   - chunks: The sequence; it is iterated once per send.
    public static func chunks<Chunks: AsyncSequence & Sendable>(
        length: Int64? = nil, _ chunks: Chunks
    ) -> HTTPBodySource where Chunks.Element == Data {
        HTTPBodySource(storage: .chunks(ErasedChunks(base: chunks), length: length))
    }

    /// Several sources, sent one after the other.
    public static func concatenating(_ sources: [HTTPBodySource]) -> HTTPBodySource {
        HTTPBodySource(storage: .concatenation(sources))
    }

    /// The number of bytes, when it is known before sending.
    public var length: Int64? {
        switch storage {
        case .data(let data): Int64(data.count)
        case .file(_, let length): length
        case .chunks(_, let length): length
        case .concatenation(let sources):
            sources.reduce(Int64(0) as Int64?) { total, source in
                guard let total, let length = source.length else { return nil }
                return total + length
            }
        }
    }

    /// The bytes, when the source is one block in memory; `nil` for a source that streams (a file, a sequence, a
    /// concatenation). A transport sends these at once and reads any other source with ``chunks(ofSize:)``.
    public var inMemory: Data? {
        if case .data(let data) = storage { return data }
        return nil
    }

    /// The file, when the source is one whole file.
    var wholeFile: URL? {
        if case .file(let url, _) = storage { return url }
        return nil
    }

    /// Every byte, as a sequence of chunks of at most `chunkSize` bytes, read as the consumer asks for them: a file
    /// is read a chunk at a time and a sequence of chunks iterated one at a time, nothing ahead of the consumer, so
    /// a transport that sends each chunk before it asks for the next holds one chunk in memory.
    public func chunks(ofSize chunkSize: Int = 64 * 1024) -> AsyncThrowingStream<Data, any Error> {
        let cursor = ChunkCursor(source: self, chunkSize: Swift.max(1, chunkSize))
        return AsyncThrowingStream { try await cursor.next() }
    }

    /// Calls `body` with every chunk in order.
    func forEachChunk(ofSize chunkSize: Int, _ body: (Data) async throws -> Void) async throws {
        switch storage {
        case .data(let data):
            var offset = 0
            while offset < data.count {
                try Task.checkCancellation()
                let end = min(data.count, offset + chunkSize)
                try await body(data.subdata(in: offset..<end))
                offset = end
            }
        case .file(let url, _):
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty {
                try Task.checkCancellation()
                try await body(chunk)
            }
        case .chunks(let sequence, _):
            for try await chunk in sequence where !chunk.isEmpty {
                try Task.checkCancellation()
                try await body(chunk)
            }
        case .concatenation(let sources):
            for source in sources { try await source.forEachChunk(ofSize: chunkSize, body) }
        }
    }

    /// A part of a body that can be read without waiting: bytes in memory, or a file.
    enum Segment {
        case bytes(Data)
        case file(URL)
    }

    /// The body as parts to read without waiting, or `nil` when some part is an `AsyncSequence`.
    var segments: [Segment]? {
        switch storage {
        case .data(let data): return [.bytes(data)]
        case .file(let url, _): return [.file(url)]
        case .chunks: return nil
        case .concatenation(let sources):
            var segments: [Segment] = []
            for source in sources {
                guard let parts = source.segments else { return nil }
                segments += parts
            }
            return segments
        }
    }

    /// Writes every byte to a new file at `url`, a chunk at a time; for a body whose `AsyncSequence` must be
    /// consumed before URLSession can send it.
    func spool(to url: URL) async throws {
        let writer = try FileWriter(url: url, startingAt: 0)
        defer { try? writer.close() }
        try await forEachChunk(ofSize: 64 * 1024) { try writer.write($0) }
    }

    /// All the bytes in memory; for logs, cURL renderings and tests.
    func collect() async throws -> Data {
        var data = Data()
        try await forEachChunk(ofSize: 64 * 1024) { data.append($0) }
        return data
    }
}

/// Any sequence of chunks as one that throws `any Error`, whatever its own failure type (an `AsyncStream` throws
/// nothing).
struct ErasedChunks<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == Data {
    typealias Element = Data
    typealias Failure = any Error

    let base: Base

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator

        mutating func next() async throws -> Data? {
            try await base.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }
}

/// Where ``HTTPBodySource/chunks(ofSize:)`` has got to: the sources still to read (the next one last), and the one
/// being read. An actor, as the stream may ask for the next chunk from any thread, one request at a time.
private actor ChunkCursor {
    private let chunkSize: Int
    private var pending: [HTTPBodySource]
    private var data: (bytes: Data, offset: Int)?
    private var file: FileHandle?
    private var iterator: (any AsyncIteratorProtocol<Data, any Error>)?

    init(source: HTTPBodySource, chunkSize: Int) {
        self.chunkSize = chunkSize
        pending = [source]
    }

    deinit {
        try? file?.close()
    }

    /// The next chunk, or `nil` once every source has been read.
    func next() async throws -> Data? {
        while true {
            try Task.checkCancellation()
            if let (bytes, offset) = data {
                guard offset < bytes.count else {
                    data = nil
                    continue
                }
                let end = Swift.min(bytes.count, offset + chunkSize)
                data = (bytes, end)
                return bytes.subdata(in: offset..<end)
            }
            if let handle = file {
                if let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty { return chunk }
                try? handle.close()
                file = nil
                continue
            }
            if var current = iterator {
                iterator = nil
                guard let chunk = try await current.next(isolation: self) else { continue }
                iterator = current
                if chunk.isEmpty { continue }
                return chunk
            }
            guard let source = pending.popLast() else { return nil }
            switch source.storage {
            case .data(let bytes): data = (bytes, 0)
            case .file(let url, _): file = try FileHandle(forReadingFrom: url)
            case .chunks(let sequence, _): iterator = sequence.makeAsyncIterator()
            case .concatenation(let sources): pending += sources.reversed()
            }
        }
    }
}

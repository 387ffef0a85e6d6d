public import Foundation

/// Bytes an `AsyncSequence` produces, sent as they come: a recording in progress, a generated export, a
/// proxied upload.
///
/// ```swift
/// let lines = AsyncStream<Data> { continuation in … }
/// upload.body = StreamBody(contentType: "application/x-ndjson", lines)
/// ```
///
/// A body made from a sequence can be sent once: a retry, a replay after a `401` or a `307` redirect fail with
/// ``HTTPError/Code/bodyNotReplayable`` instead of sending it empty. Give it a closure that makes a new
/// sequence each time, and it can be sent again.
public struct StreamBody: HTTPBody {
    /// The number of bytes the sequence produces, if known; it becomes `Content-Length`.
    public var length: Int64?
    /// Header fields to send with the bytes, typically `Content-Type`.
    public var additionalHeaders: [String: String]
    private let chunks: Chunks

    private enum Chunks: Sendable {
        case once(OneShot)
        case fresh(@Sendable () -> any AsyncSequence<Data, any Error> & Sendable)
    }

    /// The sequence of a body that can be sent once, handed out once.
    private final class OneShot: Sendable {
        private let sequence: Locked<(any AsyncSequence<Data, any Error> & Sendable)?>
        init(_ sequence: any AsyncSequence<Data, any Error> & Sendable) { self.sequence = Locked(sequence) }
        func take() -> (any AsyncSequence<Data, any Error> & Sendable)? {
            sequence.withLock { sequence in
                defer { sequence = nil }
                return sequence
            }
        }
    }

    /// A body sent once, from `chunks`.
    ///
    /// - Parameters:
    ///   - length: The number of bytes, if known; without it the body goes with chunked transfer coding.
    ///   - contentType: The `Content-Type` to send, if any.
    ///   - chunks: The sequence of chunks.
    public init<Chunks: AsyncSequence & Sendable>(
        length: Int64? = nil, contentType: String? = nil, _ chunks: Chunks
    ) where Chunks.Element == Data {
        self.length = length
        self.additionalHeaders = contentType.map { ["Content-Type": $0] } ?? [:]
        self.chunks = .once(OneShot(ErasedChunks(base: chunks)))
    }

    /// A body that can be sent again: `makeChunks` makes a fresh sequence for each send.
    public init<Chunks: AsyncSequence & Sendable>(
        length: Int64? = nil,
        contentType: String? = nil,
        makeChunks: @escaping @Sendable () -> Chunks
    ) where Chunks.Element == Data {
        self.length = length
        self.additionalHeaders = contentType.map { ["Content-Type": $0] } ?? [:]
        self.chunks = .fresh { ErasedChunks(base: makeChunks()) }
    }

    public var isEmpty: Bool { length == 0 }

    public var isReplayable: Bool {
        if case .fresh = chunks { return true }
        return false
    }

    /// Always throws: a streamed body is not held in memory.
    public func encode() throws -> Data {
        throw BodyError("a StreamBody is sent as its sequence produces it, and cannot be encoded in memory")
    }

    public func makeSource() throws -> HTTPBodySource {
        switch chunks {
        case .fresh(let make):
            return HTTPBodySource(storage: .chunks(make(), length: length))
        case .once(let oneShot):
            guard let sequence = oneShot.take() else {
                throw BodyError("this StreamBody was sent already, and its sequence can be iterated only once")
            }
            return HTTPBodySource(storage: .chunks(sequence, length: length))
        }
    }
}

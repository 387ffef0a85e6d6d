public import Foundation

/// The content sent with a request, and the header fields that describe it.
///
/// A body is encoded when the request is sent, not when it is built; a body that fails to encode fails the
/// request with ``HTTPError/Code/invalidRequest`` and the encoding error as its underlying error.
///
/// A body held in memory implements ``encode()``. A body that streams — from a file (``FileBody``), from an
/// `AsyncSequence` of chunks (``StreamBody``), or in parts (``MultipartFormBody`` with file parts) — also
/// implements ``makeSource()``, which the transport reads as it sends, and says whether it can be sent more
/// than once (``isReplayable``).
///
/// ## Writing a body
///
/// ```swift
/// struct TextBody: HTTPBody {
///     var text: String
///     var isEmpty: Bool { text.isEmpty }
///     var additionalHeaders: [String: String] { ["Content-Type": "text/plain; charset=utf-8"] }
///     func encode() throws -> Data { Data(text.utf8) }
/// }
/// ```
public protocol HTTPBody: Sendable {
    /// Whether there is nothing to send. An empty body sends no `Content-Type`.
    var isEmpty: Bool { get }

    /// Header fields describing the content, such as `Content-Type`. A field the request already sets
    /// wins over the body's.
    var additionalHeaders: [String: String] { get }

    /// The bytes to send, all in memory.
    ///
    /// Transports call ``makeSource()`` instead; this is what logs, cURL renderings and caches read. A body too
    /// large for memory may throw here.
    func encode() throws -> Data

    /// Where the transport reads the bytes from as it sends them. The default is ``encode()``'s bytes.
    func makeSource() throws -> HTTPBodySource

    /// Whether the body can be sent again: a retry, a replay after a `401`, a `307` redirect. A body read from
    /// a sequence that can be iterated only once cannot, and the loaders that resend fail with
    /// ``HTTPError/Code/bodyNotReplayable`` rather than send it empty. `true` by default.
    var isReplayable: Bool { get }
}

extension HTTPBody {
    public var isEmpty: Bool { false }
    public var additionalHeaders: [String: String] { [:] }
    public func makeSource() throws -> HTTPBodySource { .data(try encode()) }
    public var isReplayable: Bool { true }
}

/// No body at all; the default for every request.
public struct EmptyBody: HTTPBody {
    public init() {}
    public var isEmpty: Bool { true }
    public func encode() throws -> Data { Data() }
}

/// Bytes sent as they are, with an optional content type.
public struct DataBody: HTTPBody {
    /// The bytes.
    public var data: Data
    /// Header fields to send with the bytes, typically `Content-Type`.
    public var additionalHeaders: [String: String]

    /// - Parameters:
    ///   - data: The bytes to send.
    ///   - contentType: The `Content-Type` to send, if any.
    public init(_ data: Data, contentType: String? = nil) {
        self.data = data
        self.additionalHeaders = contentType.map { ["Content-Type": $0] } ?? [:]
    }

    public var isEmpty: Bool { data.isEmpty }
    public func encode() throws -> Data { data }
}

/// An `Encodable` value sent as JSON, with `Content-Type: application/json; charset=utf-8`.
///
/// ```swift
/// request.body = JSONBody(NewPerson(name: "Zoë"))
/// ```
public struct JSONBody: HTTPBody {
    private let encoder: @Sendable () throws -> Data

    /// - Parameters:
    ///   - value: The value to encode.
    ///   - makeEncoder: Makes the encoder to use, configured as you like; a plain `JSONEncoder` by default.
    ///     It is called each time the body is encoded, so no encoder is shared between threads.
    public init<Value: Encodable & Sendable>(
        _ value: Value,
        encoder makeEncoder: @escaping @Sendable () -> JSONEncoder = { JSONEncoder() }
    ) {
        self.encoder = { try makeEncoder().encode(value) }
    }

    public var additionalHeaders: [String: String] { ["Content-Type": "application/json; charset=utf-8"] }
    public func encode() throws -> Data { try encoder() }
}

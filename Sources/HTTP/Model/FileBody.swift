public import Foundation

/// The contents of a file, sent from disk as the request goes out: never read into memory whole.
///
/// ```swift
/// var upload = HTTPRequest(method: .put, path: "/videos/42")
/// upload.body = FileBody(videoURL, contentType: "video/mp4")
/// ```
///
/// The file is read when the request is sent, and again for a retry or a replay: change it meanwhile and
/// the server gets the new contents. A file that cannot be read fails the request with
/// ``HTTPError/Code/invalidRequest``.
public struct FileBody: HTTPBody {
    /// The file.
    public var url: URL
    /// Header fields to send with the file, typically `Content-Type`.
    public var additionalHeaders: [String: String]

    /// - Parameters:
    ///   - url: A file URL of a regular file.
    ///   - contentType: The `Content-Type` to send; `application/octet-stream` by default.
    public init(_ url: URL, contentType: String = "application/octet-stream") {
        self.url = url
        self.additionalHeaders = ["Content-Type": contentType]
    }

    /// Whether the file is empty (or cannot be read: sending it then fails).
    public var isEmpty: Bool { (try? Self.length(of: url)) == 0 }

    /// The whole file in memory: for logs and tests. Transports read it with ``makeSource()``, a chunk at a time.
    public func encode() throws -> Data {
        try Data(contentsOf: url)
    }

    public func makeSource() throws -> HTTPBodySource {
        try .file(url)
    }

    /// The size of the regular file at `url`.
    static func length(of url: URL) throws -> Int64 {
        guard url.isFileURL else { throw BodyError("\(url.absoluteString) is not a file URL") }
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw BodyError("\(url.path) is not a regular file")
        }
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// Why a body could not be produced, for the underlying error of an `.invalidRequest`.
struct BodyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

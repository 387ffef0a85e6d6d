public import Foundation

/// Fields and files sent as `multipart/form-data` (RFC 7578), as an HTML form with a file input would.
///
/// ```swift
/// var form = MultipartFormBody()
/// form.addField(named: "title", value: "Holiday")
/// form.addFile(named: "photo", filename: "beach.jpg", contentType: "image/jpeg", data: jpeg)
/// request.method = .post
/// request.body = form
/// ```
///
/// The boundary is chosen so that it never occurs inside any part: if the random boundary happens to
/// appear in the content, a different one is derived until it does not. A file part added with
/// ``addFile(named:filename:contentType:contentsOf:)`` is streamed from disk when the request is sent, never
/// read into memory whole; it is not searched for the boundary, whose 128 random bits make a collision
/// negligible.
public struct MultipartFormBody: HTTPBody {
    /// One part of the form.
    public struct Part: Sendable, Hashable {
        /// The form field name.
        public var name: String
        /// The file name, for file parts.
        public var filename: String?
        /// The part's content type; `nil` for plain text fields.
        public var contentType: String?
        /// The part's content, when it is in memory.
        public var data: Data
        /// The file the part's content is read from when the request is sent, if it is a file on disk; ``data``
        /// is then not sent.
        public var fileURL: URL?

        public init(name: String, filename: String? = nil, contentType: String? = nil, data: Data) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.data = data
        }

        /// A part whose content is the file at `fileURL`, read as the request is sent.
        public init(name: String, filename: String, contentType: String, fileURL: URL) {
            self.init(name: name, filename: filename, contentType: contentType, data: Data())
            self.fileURL = fileURL
        }
    }

    /// The parts, in the order they are sent.
    public var parts: [Part]

    private let boundarySeed: String

    /// Creates a form.
    ///
    /// - Parameters:
    ///   - parts: The parts to start with.
    ///   - boundary: The preferred boundary; a random one by default. It is changed only if the content contains it.
    public init(parts: [Part] = [], boundary: String? = nil) {
        self.parts = parts
        self.boundarySeed = boundary ?? "HTTPFormBoundary" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    }

    /// Appends a text field.
    public mutating func addField(named name: String, value: String) {
        parts.append(Part(name: name, data: Data(value.utf8)))
    }

    /// Appends a file.
    public mutating func addFile(
        named name: String,
        filename: String,
        contentType: String = "application/octet-stream",
        data: Data
    ) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, data: data))
    }

    /// Appends a file whose content is read from disk as the request is sent.
    public mutating func addFile(
        named name: String,
        filename: String,
        contentType: String = "application/octet-stream",
        contentsOf fileURL: URL
    ) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, fileURL: fileURL))
    }

    public var isEmpty: Bool { parts.isEmpty }

    /// The boundary that ``encode()`` uses: the seed, or the first variant of it found nowhere in the content.
    public var boundary: String {
        var candidate = boundarySeed
        var attempt = 0
        while parts.contains(where: { $0.fileURL == nil && $0.data.range(of: Data(candidate.utf8)) != nil }) {
            attempt += 1
            candidate = boundarySeed + "x\(attempt)"
        }
        return candidate
    }

    public var additionalHeaders: [String: String] {
        ["Content-Type": "multipart/form-data; boundary=\(boundary)"]
    }

    /// The whole form in memory, files read: for logs and tests. Transports read ``makeSource()``.
    public func encode() throws -> Data {
        var data = Data()
        for segment in try segments() {
            switch segment {
            case .bytes(let bytes): data.append(bytes)
            case .file(let url): data.append(try Data(contentsOf: url))
            }
        }
        return data
    }

    /// The form as it is sent: the parts' heads and in-memory contents, and each file read from disk.
    public func makeSource() throws -> HTTPBodySource {
        .concatenating(
            try segments().map { segment in
                switch segment {
                case .bytes(let bytes): .data(bytes)
                case .file(let url): try .file(url)
                }
            })
    }

    private enum Segment {
        case bytes(Data)
        case file(URL)
    }

    /// The form as runs of bytes in memory and files, adjacent bytes merged.
    private func segments() throws -> [Segment] {
        let boundary = self.boundary
        var segments: [Segment] = []
        var pending = Data()
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quote(part.name))\""
            if let filename = part.filename { head += "; filename=\"\(Self.quote(filename))\"" }
            head += "\r\n"
            if let contentType = part.contentType { head += "Content-Type: \(Self.quote(contentType))\r\n" }
            head += "\r\n"
            pending.append(contentsOf: head.utf8)
            if let fileURL = part.fileURL {
                segments.append(.bytes(pending))
                segments.append(.file(fileURL))
                pending = Data()
            } else {
                pending.append(part.data)
            }
            pending.append(contentsOf: "\r\n".utf8)
        }
        pending.append(contentsOf: "--\(boundary)--\r\n".utf8)
        segments.append(.bytes(pending))
        return segments
    }

    /// Escapes a name for a quoted header parameter the way browsers do (WHATWG HTML form submission):
    /// `"` → `%22`, CR → `%0D`, LF → `%0A`, so a name can never break out of its header line.
    private static func quote(_ value: String) -> String {
        var result = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

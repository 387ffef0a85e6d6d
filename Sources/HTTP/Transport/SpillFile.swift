import Foundation

/// A stream's bytes beyond its limit, in a temporary file: appended at the end, read from the front.
final class SpillFile: @unchecked Sendable {  // Sendable: used only inside its stream's lock
    private let url: URL
    private let writer: FileHandle
    private let reader: FileHandle
    private var written: UInt64 = 0
    private var read: UInt64 = 0

    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "http-stream-\(UUID().uuidString).spill")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw BodyError("could not create \(url.path)")
        }
        writer = try FileHandle(forWritingTo: url)
        reader = try FileHandle(forReadingFrom: url)
    }

    var hasUnreadBytes: Bool { read < written }

    func append(_ data: Data) throws {
        try writer.write(contentsOf: data)
        written += UInt64(data.count)
    }

    func read(upTo count: Int) throws -> Data {
        try reader.seek(toOffset: read)
        let data = try reader.read(upToCount: Int(min(UInt64(count), written - read))) ?? Data()
        read += UInt64(data.count)
        return data
    }

    func remove() {
        try? writer.close()
        try? reader.close()
        try? FileManager.default.removeItem(at: url)
    }
}

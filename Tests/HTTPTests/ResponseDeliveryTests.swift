import Foundation
@_spi(Transport) import HTTP
import Testing

@Suite(.noHang) struct ResponseDeliveryTests {
    /// A folder of the test's own, removed afterwards.
    private static func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "response-delivery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    private static func write(_ handle: FileHandle, _ text: String) throws {
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    private static func contents(_ url: URL) throws -> String {
        String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    @Test func openingAFileThatDoesNotExistCreatesIt() throws {
        try Self.withFolder { folder in
            let url = folder.appending(path: "new.bin")
            try Self.write(try ResponseDelivery.openFile(url, resumingAt: 0), "body")
            #expect(try Self.contents(url) == "body")
        }
    }

    @Test func openingAtZeroReplacesWhatTheFileHeld() throws {
        try Self.withFolder { folder in
            let url = folder.appending(path: "old.bin")
            try Data("an older and longer body".utf8).write(to: url)
            try Self.write(try ResponseDelivery.openFile(url, resumingAt: 0), "new")
            #expect(try Self.contents(url) == "new")
        }
    }

    /// A file holding `held`, reopened to resume at `offset`, then `written`: what it holds afterwards.
    @Test(arguments: [
        // A longer file keeps its first bytes and loses the rest.
        (held: "0123456789", offset: Int64(4), written: "abc", expected: Data("0123abc".utf8)),
        // At the file's length, the body is appended.
        (held: "0123", offset: Int64(4), written: "45", expected: Data("012345".utf8)),
        // Beyond it, the gap is filled with zeros.
        (held: "01", offset: Int64(4), written: "x", expected: Data("01".utf8) + Data([0, 0]) + Data("x".utf8)),
    ])
    func resumingKeepsTheFilesFirstBytesAndWritesAfterThem(
        held: String, offset: Int64, written: String, expected: Data
    ) throws {
        try Self.withFolder { folder in
            let url = folder.appending(path: "partial.bin")
            try Data(held.utf8).write(to: url)
            try Self.write(try ResponseDelivery.openFile(url, resumingAt: offset), written)
            #expect(try Data(contentsOf: url) == expected)
        }
    }

    @Test func aFolderThatDoesNotExistIsAnErrorNamingThePath() throws {
        try Self.withFolder { folder in
            let url = folder.appending(path: "missing/file.bin")
            #expect {
                _ = try ResponseDelivery.openFile(url, resumingAt: 0)
            } throws: { error in
                "\(error)".contains(url.path)
            }
        }
    }
}

import Foundation
import HTTP
import Testing

@Suite struct ResponseDeliveryTests {
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

    @Test func resumingKeepsTheFirstBytesAndCutsTheRest() throws {
        try Self.withFolder { folder in
            let url = folder.appending(path: "partial.bin")
            try Data("0123456789".utf8).write(to: url)
            try Self.write(try ResponseDelivery.openFile(url, resumingAt: 4), "abc")
            #expect(try Self.contents(url) == "0123abc")
        }
    }

    @Test func resumingAtTheFilesLengthAppends() throws {
        try Self.withFolder { folder in
            let url = folder.appending(path: "partial.bin")
            try Data("0123".utf8).write(to: url)
            try Self.write(try ResponseDelivery.openFile(url, resumingAt: 4), "45")
            #expect(try Self.contents(url) == "012345")
        }
    }

    @Test func resumingBeyondTheFilesLengthFillsTheGapWithZeros() throws {
        try Self.withFolder { folder in
            let url = folder.appending(path: "short.bin")
            try Data("01".utf8).write(to: url)
            try Self.write(try ResponseDelivery.openFile(url, resumingAt: 4), "x")
            #expect(try Data(contentsOf: url) == Data("01".utf8) + Data([0, 0]) + Data("x".utf8))
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

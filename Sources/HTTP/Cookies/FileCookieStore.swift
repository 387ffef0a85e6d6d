public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// A ``CookieStore`` in one file: JSON, written atomically to an owner-only file (mode 0600) in a directory it
/// creates owner-only (0700).
///
/// ```swift
/// let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
/// let cookies = Cookies(store: FileCookieStore(file: support.appending(path: "cookies.json")))
/// ```
///
/// A file that cannot be read — missing, damaged, of another format version, or not a plain file — holds no
/// cookies; the next save replaces it.
public final class FileCookieStore: CookieStore {
    /// The file's path.
    public let file: URL

    /// The format written; a file of another version holds no cookies.
    static let formatVersion = 1
    /// The largest file read: 3,000 cookies of 4 KiB and their attributes fit in it.
    static let maximumFileSize = 32 << 20

    private struct Contents: Codable {
        var version: Int
        var cookies: [Cookie]
    }

    /// A store in `file`.
    ///
    /// - Parameter file: The file; its directory is created when the first cookies are saved.
    public init(file: URL) {
        self.file = file
    }

    public func savedCookies() async -> [Cookie] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let data = Self.readPlainFile(at: file.path),
            let contents = try? decoder.decode(Contents.self, from: data),
            contents.version == Self.formatVersion
        else { return [] }
        return contents.cookies
    }

    public func save(_ cookies: [Cookie]) async {
        guard !cookies.isEmpty else {
            await removeAll()
            return
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        guard let data = try? encoder.encode(Contents(version: Self.formatVersion, cookies: cookies)) else { return }
        Self.writeAtomically(data, to: file.path)
    }

    public func removeAll() async {
        unlink(file.path)
    }

    // MARK: Files

    /// The contents of a plain file no larger than ``maximumFileSize``; `nil` otherwise.
    private static func readPlainFile(at path: String) -> Data? {
        (try? OwnerOnlyFiles.contents(of: path, maximumSize: maximumFileSize)) ?? nil
    }

    /// Writes `data` over `path` atomically, owner-only, in a directory created owner-only; leaves `path` as it was
    /// on any failure.
    private static func writeAtomically(_ data: Data, to path: String) {
        if let directory = OwnerOnlyFiles.parent(of: path) { try? OwnerOnlyFiles.makeDirectory(at: directory) }
        try? OwnerOnlyFiles.writeAtomically(data, to: path)
    }
}

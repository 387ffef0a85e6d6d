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
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG),
            info.st_size <= maximumFileSize
        else { return nil }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
                guard data.count <= maximumFileSize else { return nil }
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                return nil
            }
        }
    }

    /// Writes `data` to a new owner-only file beside `path`, then renames it over `path`; leaves `path` as it was on
    /// any failure.
    private static func writeAtomically(_ data: Data, to path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let temporary = path + ".\(String(UInt64.random(in: .min ... .max), radix: 16)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        let complete = data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
        guard close(descriptor) == 0, complete, rename(temporary, path) == 0 else {
            unlink(temporary)
            return
        }
    }
}

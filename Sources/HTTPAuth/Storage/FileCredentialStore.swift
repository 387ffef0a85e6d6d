public import Foundation
import HTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// A ``CredentialStore`` that keeps each value in an owner-only JSON file, for Linux and other platforms
/// without a Keychain.
///
/// ```swift
/// let directory = URL(fileURLWithPath: NSHomeDirectory()).appending(path: ".config/example/credentials")
/// let store = FileCredentialStore(directory: directory)
/// try await store.save(tokens, for: "tokens")  // writes <directory>/746f6b656e73.json, mode 0600
/// ```
///
/// ## Files
///
/// - **One file per key**, named after the key's UTF-8 bytes in lowercase hexadecimal plus `.json`
///   (`"tokens"` → `746f6b656e73.json`), so no key — `"../x"`, `"a/b"`, `".."` — can name a file outside
///   the directory, and keys differing only in case stay apart on case-insensitive file systems. Keys are
///   compared as Swift compares strings (canonically equivalent spellings are the same key), must not be
///   empty, and may be at most ``maximumKeyLength`` bytes of UTF-8.
/// - **Owner-only.** A save creates the directory, and any missing parents, with mode `0700`. It writes a
///   temporary file in the same directory, created with `O_CREAT | O_EXCL` and mode `0600`, flushes it
///   to disk and renames it over the key's file, so a reader sees the old file or the new one, never a
///   partial write, and the saved file is `0600` whatever the old one was. A failed save removes its
///   temporary file and leaves the old value in place; a process killed mid-save can leave one behind
///   (`.<hex>.<random>.tmp`, owner-only), which loads ignore.
/// - **Distrust, like ssh.** A load refuses a file that group or others may read or write, that another
///   user owns, or that is not a plain file (a symbolic link, say) with
///   ``CredentialStoreError/insecurePermissions(key:path:reason:)``, rather than using a secret others
///   could have read or planted. Saving the credential again replaces the file with an owner-only one. A
///   save refuses a directory that another user owns or that group or others may write to; an existing
///   directory others may only read (`0755`) is used as it is.
/// - A missing file loads as `nil`; a file that is not the requested type's JSON throws
///   ``CredentialStoreError/corrupted(key:path:underlying:)`` naming the key and the file.
///
/// Several stores, tasks or processes may use one directory at once; the last save of a key wins. The
/// blocking file I/O (including `fsync`) runs on the store's own serial dispatch queue, never on the
/// caller's thread: Swift's cooperative thread pool has one thread per core, and blocking it stalls every
/// other task in the process.
public final class FileCredentialStore: CredentialStore {
    /// The longest key, in bytes of UTF-8, that fits in a file name.
    public static let maximumKeyLength = 120

    /// The directory that holds the files.
    public let directory: URL

    /// `directory` as a file system path, without a trailing slash.
    private let directoryPath: String

    /// Where the blocking file I/O runs, one operation at a time.
    private let ioQueue = DispatchQueue(label: "FileCredentialStore.io")

    /// Creates a store that keeps its files in `directory`.
    ///
    /// Nothing is created until the first save.
    ///
    /// - Parameter directory: A file URL (a precondition) for a directory that only this user can write
    ///   to, such as one under the home directory; it need not exist yet.
    public init(directory: URL) {
        precondition(directory.isFileURL, "FileCredentialStore needs a file URL, not \(directory)")
        self.directory = directory
        var path =
            directory.withUnsafeFileSystemRepresentation { $0.map { String(cString: $0) } }
            ?? directory.path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        directoryPath = path
    }

    public func load<Value: Decodable>(_ type: Value.Type, for key: String) async throws -> Value? {
        let path = filePath(named: try fileStem(for: key) + ".json")
        guard let data = try await onIOQueue({ try self.readOwnerOnlyFile(at: path, key: key) }) else { return nil }
        return try CredentialCoding.decode(type, from: data, for: key, path: path)
    }

    public func save<Value: Encodable & Sendable>(_ value: Value, for key: String) async throws {
        let stem = try fileStem(for: key)
        let data = try CredentialCoding.encode(value, for: key)
        try await onIOQueue {
            try self.prepareDirectory(for: key)
            let path = self.filePath(named: stem + ".json")
            do throws(FileSystemFailure) {
                try OwnerOnlyFiles.writeAtomically(data, to: path, temporaryStem: stem, durable: true)
            } catch {
                throw CredentialStoreError.io(key: key, path: error.path, operation: error.operation, errno: error.code)
            }
        }
    }

    public func delete(for key: String) async throws {
        let path = filePath(named: try fileStem(for: key) + ".json")
        try await onIOQueue {
            guard unlink(path) == 0 else {
                let code = errno
                if code == ENOENT { return }
                throw CredentialStoreError.io(key: key, path: path, operation: "unlink", errno: code)
            }
            OwnerOnlyFiles.syncDirectory(self.directoryPath)
        }
    }

    /// Runs blocking file I/O on the store's queue and resumes the caller with its outcome.
    private func onIOQueue<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            ioQueue.async { continuation.resume(with: Swift.Result { try work() }) }
        }
    }
}

// MARK: - Names

extension FileCredentialStore {
    /// The key's UTF-8 in lowercase hexadecimal, or ``CredentialStoreError/invalidKey(_:reason:)``.
    ///
    /// The key's file is `<stem>.json`; a save's temporary file is `.<stem>.<8 random hex digits>.tmp`,
    /// at most 254 bytes for the longest key.
    private func fileStem(for key: String) throws -> String {
        let bytes = Array(key.precomposedStringWithCanonicalMapping.utf8)
        guard !bytes.isEmpty else { throw CredentialStoreError.invalidKey(key, reason: "it is empty") }
        guard bytes.count <= Self.maximumKeyLength else {
            throw CredentialStoreError.invalidKey(
                key,
                reason: "it is \(bytes.count) bytes of UTF-8; a file name fits \(Self.maximumKeyLength) at most"
            )
        }
        return Self.hex(bytes)
    }

    private func filePath(named name: String) -> String {
        directoryPath == "/" ? "/" + name : directoryPath + "/" + name
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var characters: [UInt8] = []
        for byte in bytes {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: characters, as: UTF8.self)
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(UInt32(mode) & 0o777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

// MARK: - Reading

extension FileCredentialStore {
    /// The file's contents, `nil` when it does not exist, or an error when it cannot be read or is not
    /// owner-only.
    private func readOwnerOnlyFile(at path: String, key: String) throws -> Data? {
        do {
            return try OwnerOnlyFiles.contents(of: path) { info in
                if let problem = Self.trustProblem(with: info, expectedType: mode_t(S_IFREG), forbiddenBits: 0o077) {
                    throw CredentialStoreError.insecurePermissions(key: key, path: path, reason: problem)
                }
            }
        } catch let failure as FileSystemFailure {
            if failure.operation == "open", failure.code == ELOOP {
                throw CredentialStoreError.insecurePermissions(
                    key: key, path: path, reason: "it is a symbolic link; credential files must be plain files")
            }
            throw CredentialStoreError.io(key: key, path: path, operation: failure.operation, errno: failure.code)
        }
    }

    /// Why a file or directory with this status cannot be trusted with secrets, or `nil` when it can.
    private static func trustProblem(with info: stat, expectedType: mode_t, forbiddenBits: mode_t) -> String? {
        let kind = expectedType == mode_t(S_IFDIR) ? "directory" : "file"
        if info.st_mode & mode_t(S_IFMT) != expectedType {
            return "it is not a plain \(kind)"
        }
        if info.st_uid != geteuid() {
            return "it is owned by user ID \(info.st_uid), not by this process's user ID \(geteuid())"
        }
        guard info.st_mode & forbiddenBits == 0 else {
            let access = forbiddenBits == 0o077 ? "read or write" : "write to"
            let fix = expectedType == mode_t(S_IFDIR) ? "chmod 700" : "chmod 600, or save the credential again"
            return "its mode is \(octal(info.st_mode)), which lets group or others \(access) it; "
                + "it must be owner-only (\(fix))"
        }
        return nil
    }
}

// MARK: - Writing

extension FileCredentialStore {
    /// Creates the directory (mode 0700) if it is missing, and checks that only this user can write to it.
    private func prepareDirectory(for key: String) throws {
        do throws(FileSystemFailure) {
            try OwnerOnlyFiles.makeDirectory(at: directoryPath)
        } catch {
            throw CredentialStoreError.io(key: key, path: error.path, operation: error.operation, errno: error.code)
        }
        var info = stat()
        guard stat(directoryPath, &info) == 0 else {
            throw CredentialStoreError.io(key: key, path: directoryPath, operation: "stat", errno: errno)
        }
        if info.st_mode & mode_t(S_IFMT) != mode_t(S_IFDIR) {
            throw CredentialStoreError.io(key: key, path: directoryPath, operation: "mkdir", errno: ENOTDIR)
        }
        if let problem = Self.trustProblem(with: info, expectedType: mode_t(S_IFDIR), forbiddenBits: 0o022) {
            throw CredentialStoreError.insecurePermissions(key: nil, path: directoryPath, reason: problem)
        }
    }
}

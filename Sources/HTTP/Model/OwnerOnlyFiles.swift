package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// A file-system call that failed: which, on what path, and the `errno` it set.
package struct FileSystemFailure: Error, Sendable, Equatable {
    /// The call: `open`, `read`, `write`, `fsync`, `rename`, `mkdir`, …
    package let operation: String
    /// The path it was called on.
    package let path: String
    /// The `errno` it set.
    package let code: Int32

    package init(_ operation: String, _ path: String, _ code: Int32) {
        (self.operation, self.path, self.code) = (operation, path, code)
    }
}

/// The file handling the package's stores share — the disk cache, the cookie file, the credential files: plain files
/// read without following links, and written owner-only and atomically (a temporary file created exclusively with
/// mode 0600 beside the target, then renamed over it), in directories created owner-only (0700).
package enum OwnerOnlyFiles {
    /// `mkdir -p` with mode 0700 for each directory it creates (whatever the umask); an existing directory is left
    /// as it is.
    package static func makeDirectory(at path: String) throws(FileSystemFailure) {
        var createdParent = false
        while true {
            if mkdir(path, 0o700) == 0 {
                chmod(path, 0o700)
                return
            }
            let code = errno
            if code == EEXIST { return }
            if code == ENOENT, !createdParent, let parent = parent(of: path) {
                try makeDirectory(at: parent)
                createdParent = true
                continue
            }
            throw FileSystemFailure("mkdir", path, code)
        }
    }

    /// The directory `path` is in, or `nil` for the root or a bare name.
    package static func parent(of path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let parent = String(path[..<slash])
        return parent.isEmpty ? (path == "/" ? nil : "/") : parent
    }

    /// A plain file's contents and status, read without following a symbolic link (`ELOOP`) and without blocking
    /// on a FIFO; `nil` when there is no file. A file larger than `maximumSize` fails with `EFBIG` before it is read.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - maximumSize: The largest file read.
    ///   - check: Looks at the open file's status before anything is read, and throws to refuse it.
    package static func contents(
        of path: String, maximumSize: Int = .max, check: (stat) throws -> Void = { _ in }
    ) throws -> Data? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw FileSystemFailure("open", path, code)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileSystemFailure("fstat", path, errno) }
        try check(info)
        guard info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { throw FileSystemFailure("open", path, EISDIR) }
        guard info.st_size <= maximumSize else { throw FileSystemFailure("read", path, EFBIG) }
        var data = Data(capacity: Int(max(0, info.st_size)))
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let (count, code) = buffer.withUnsafeMutableBytes { bytes in
                let count = read(descriptor, bytes.baseAddress, bytes.count)
                return (count, count < 0 ? errno : 0)
            }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
                guard data.count <= maximumSize else { throw FileSystemFailure("read", path, EFBIG) }
            } else if count == 0 {
                return data
            } else if code != EINTR {
                throw FileSystemFailure("read", path, code)
            }
        }
    }

    /// Writes `data` to `path` atomically: to a new owner-only file beside it, named `.<stem>.<random>.tmp`, then
    /// renamed over it. On any failure `path` is as it was and the temporary file is gone.
    ///
    /// - Parameters:
    ///   - data: The contents.
    ///   - path: The file to replace.
    ///   - stem: The temporary file's name stem; by default the target's name.
    ///   - durable: Whether the file and the directory are flushed to disk, so that the rename survives a crash.
    package static func writeAtomically(
        _ data: Data, to path: String, temporaryStem stem: String? = nil, durable: Bool = false
    ) throws(FileSystemFailure) {
        let directory = parent(of: path) ?? "."
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let temporary = try writeTemporaryFile(data, in: directory, stem: stem ?? name, durable: durable)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw FileSystemFailure("rename", path, code)
        }
        if durable { syncDirectory(directory) }
    }

    /// Flushes a directory, so that a rename or an unlink in it survives a crash; best effort.
    package static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// A new file `.<stem>.<8 random hex digits>.tmp` in `directory`, created exclusively with mode 0600 and holding
    /// `data`; its path.
    private static func writeTemporaryFile(
        _ data: Data, in directory: String, stem: String, durable: Bool
    ) throws(FileSystemFailure) -> String {
        let (path, descriptor) = try createTemporaryFile(in: directory, stem: stem)
        do throws(FileSystemFailure) {
            defer { close(descriptor) }
            // Exactly 0600, whatever the umask.
            guard fchmod(descriptor, 0o600) == 0 else { throw FileSystemFailure("fchmod", path, errno) }
            let failure = data.withUnsafeBytes { bytes -> Int32? in
                var offset = 0
                while offset < bytes.count {
                    let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written >= 0 {
                        offset += written
                    } else if errno != EINTR {
                        return errno
                    }
                }
                return nil
            }
            if let failure { throw FileSystemFailure("write", path, failure) }
            if durable, fsync(descriptor) != 0 { throw FileSystemFailure("fsync", path, errno) }
        } catch {
            unlink(path)
            throw error
        }
        return path
    }

    private static func createTemporaryFile(
        in directory: String, stem: String
    ) throws(FileSystemFailure) -> (path: String, descriptor: Int32) {
        var attempts = 0
        while true {
            let random = String(UInt32.random(in: .min ... .max), radix: 16)
            let name = ".\(stem).\(String(repeating: "0", count: 8 - random.count))\(random).tmp"
            let path = directory == "/" ? "/" + name : directory + "/" + name
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return (path, descriptor) }
            let code = errno
            attempts += 1
            guard code == EEXIST, attempts < 10 else { throw FileSystemFailure("open", path, code) }
        }
    }
}

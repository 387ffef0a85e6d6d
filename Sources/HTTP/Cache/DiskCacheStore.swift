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

/// A ``CacheStore`` in a directory, one file per entry, up to a size limit, evicting the least recently used
/// entries first. Its entries survive a restart: a new store over the same directory serves them.
///
/// ```swift
/// let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appending(path: "http-cache")
/// let cache = Cache(store: DiskCacheStore(directory: directory, maximumSize: 50 << 20))
/// ```
///
/// ## Files
///
/// - **One file per key**, holding its variants, named after a 64-bit hash of the key (`3f1c…e2.cache`); the key
///   is stored inside too, so two keys with the same hash never answer for each other (the later one replaces the
///   earlier). Files written by earlier releases (one variant each) are read as they are, and rewritten in the
///   current format when their key is next stored.
/// - **Written atomically.** An entry is written to a temporary file in the directory and renamed over its file,
///   so a reader finds the old entry or the new one, never a part of either. The directory is created with mode
///   `0700` and the files with `0600`: cached responses are the user's data.
/// - **Checked when read.** Each file carries its length and a checksum (see the format in the source). A file
///   that is cut short, altered, or not an entry file at all is deleted and counts as a miss; nothing in a file
///   can make the store trap or serve a wrong response.
/// - **Least recently used first.** Reading an entry sets its file's modification time, so the order survives a
///   restart: a new store reads the directory on first use and orders its files by those times. When the files
///   together exceed ``maximumSize``, the least recently used ones are deleted. A file may take at most a quarter
///   of the limit: beyond it, the least recently stored variants are left out, and a first variant larger than that
///   is not stored.
///
/// The blocking file I/O runs on the store's own serial dispatch queue, never on the caller's thread (Swift's
/// cooperative thread pool has one thread per core, and blocking it stalls every other task). Files are not
/// flushed to disk on each write: after a crash an entry may be missing or cut short, which its checksum catches.
/// One store per directory: two stores (or processes) sharing a directory each keep their own size accounting.
public final class DiskCacheStore: CacheStore {
    /// The directory that holds the files.
    public let directory: URL
    /// The most bytes the files may occupy together.
    public let maximumSize: Int

    /// `directory` as a file system path, without a trailing slash.
    private let directoryPath: String
    /// Where the file I/O runs, one operation at a time.
    private let ioQueue = DispatchQueue(label: "DiskCacheStore.io")

    private struct Index {
        /// Whether the directory has been read.
        var isLoaded = false
        /// Whether the directory is known to exist.
        var hasDirectory = false
        /// The files, by the hash in their name, costing their size in bytes, in order of use.
        var files = LRUList<UInt64, Void>()
    }

    /// Read and written only on `ioQueue`; behind a lock all the same, so that no reader has to know that.
    private let index = Locked(Index())

    /// Creates a store over `directory`; nothing is read or created until it is first used.
    ///
    /// - Parameters:
    ///   - directory: A file URL (a precondition) for a directory only this user can write to, such as one under
    ///     the caches directory; it need not exist yet.
    ///   - maximumSize: The most bytes the files may occupy together; 50 MiB by default.
    public init(directory: URL, maximumSize: Int = 50 << 20) {
        precondition(directory.isFileURL, "DiskCacheStore needs a file URL, not \(directory)")
        self.directory = directory
        self.maximumSize = max(0, maximumSize)
        var path =
            directory.withUnsafeFileSystemRepresentation { $0.map { String(cString: $0) } }
            ?? directory.path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        directoryPath = path
    }

    public func variants(for key: String) async -> [CacheEntry] {
        await onIOQueue { self.readEntry(key) }
    }

    public func store(_ variants: [CacheEntry], for key: String) async {
        let file = CacheEntryFile.encode(variants, key: key, maximumSize: maximumSize / 4)
        await onIOQueue { self.writeEntry(file, for: key) }
    }

    public func removeEntry(for key: String) async {
        await onIOQueue {
            self.loadIndexIfNeeded()
            let hash = CacheEntryFile.fnv1a(key.utf8)
            self.index.withLock { _ = $0.files.remove(hash) }
            unlink(self.path(of: hash))
        }
    }

    public func removeAll() async {
        await onIOQueue {
            for name in self.fileNames() where Self.hash(inFileName: name) != nil || name.hasSuffix(".tmp") {
                unlink(self.path(named: name))
            }
            self.index.withLock { index in
                index.files.removeAll()
                index.isLoaded = true
            }
        }
    }

    /// The bytes the files occupy together, as the store counts them.
    public var size: Int {
        get async {
            await onIOQueue {
                self.loadIndexIfNeeded()
                return self.index.withLock { $0.files.totalCost }
            }
        }
    }

    /// The number of entry files.
    public var count: Int {
        get async {
            await onIOQueue {
                self.loadIndexIfNeeded()
                return self.index.withLock { $0.files.count }
            }
        }
    }

    /// Runs `work` on the I/O queue and returns its result. The result is handed over through a lock rather than
    /// through the continuation, so that ThreadSanitizer sees the hand-over (see ``Waiters``).
    private func onIOQueue<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        let box = Locked<Result?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            ioQueue.async {
                let result = work()
                box.withLock { $0 = result }
                continuation.resume()
            }
        }
        return box.withLock { $0! }
    }
}

// MARK: - On the I/O queue

extension DiskCacheStore {
    /// The variants in `key`'s file, or none; a file that does not decode is deleted.
    private func readEntry(_ key: String) -> [CacheEntry] {
        loadIndexIfNeeded()
        let hash = CacheEntryFile.fnv1a(key.utf8)
        let path = path(of: hash)
        guard let bytes = readFile(at: path) else {
            index.withLock { _ = $0.files.remove(hash) }
            return []
        }
        guard let (storedKey, variants) = CacheEntryFile.decode(bytes) else {
            unlink(path)
            index.withLock { _ = $0.files.remove(hash) }
            return []
        }
        guard storedKey == key else { return [] }  // another key with the same hash
        index.withLock { index in
            if index.files.use(hash) == nil { index.files.set((), cost: bytes.count, for: hash) }
        }
        utimes(path, nil)  // now: the order of use survives a restart
        return variants
    }

    /// Writes `file` for `key` atomically and evicts the least recently used files beyond the limit; removes
    /// `key`'s file when there is none to write.
    private func writeEntry(_ file: Data?, for key: String) {
        loadIndexIfNeeded()
        let hash = CacheEntryFile.fnv1a(key.utf8)
        let path = path(of: hash)
        guard let file, prepareDirectory() else {
            index.withLock { _ = $0.files.remove(hash) }
            unlink(path)
            return
        }
        do {
            try OwnerOnlyFiles.writeAtomically(file, to: path, temporaryStem: Self.fileStem(of: hash))
        } catch {
            index.withLock { _ = $0.files.remove(hash) }
            unlink(path)
            return
        }
        let evicted = index.withLock { index -> [UInt64] in
            index.files.set((), cost: file.count, for: hash)
            var evicted: [UInt64] = []
            while index.files.totalCost > maximumSize, let oldest = index.files.removeOldest() {
                evicted.append(oldest.key)
            }
            return evicted
        }
        for hash in evicted { unlink(self.path(of: hash)) }
    }

    /// Reads the directory once: every entry file, ordered by modification time, oldest first. Temporary files
    /// left by a process that died while writing are removed once they are a minute old.
    private func loadIndexIfNeeded() {
        guard !index.withLock({ $0.isLoaded }) else { return }
        var files: [(hash: UInt64, size: Int, modified: Double)] = []
        let now = Date().timeIntervalSince1970
        let names = try? FileManager.default.contentsOfDirectory(atPath: directoryPath)
        for name in names ?? [] {
            var info = stat()
            guard lstat(path(named: name), &info) == 0 else { continue }
            #if canImport(Darwin)
            let time = info.st_mtimespec
            #else
            let time = info.st_mtim
            #endif
            let modified = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
            if let hash = Self.hash(inFileName: name) {
                files.append((hash, Int(info.st_size), modified))
            } else if name.hasSuffix(".tmp"), now - modified > 60 {
                unlink(path(named: name))
            }
        }
        files.sort { $0.modified < $1.modified }
        let evicted = index.withLock { index -> [UInt64] in
            guard !index.isLoaded else { return [] }
            index.isLoaded = true
            index.hasDirectory = names != nil
            for file in files { index.files.set((), cost: file.size, for: file.hash) }
            var evicted: [UInt64] = []
            while index.files.totalCost > maximumSize, let oldest = index.files.removeOldest() {
                evicted.append(oldest.key)
            }
            return evicted
        }
        for hash in evicted { unlink(path(of: hash)) }
    }

    /// The names in the directory; none when it cannot be read (it does not exist yet, say).
    private func fileNames() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directoryPath)) ?? []
    }

    /// The contents of a plain file, or `nil` when there is none, it cannot be read, or it is larger than any entry
    /// the store keeps. A symbolic link or a file too large for an entry is deleted.
    private func readFile(at path: String) -> [UInt8]? {
        do {
            return try OwnerOnlyFiles.contents(of: path, maximumSize: max(maximumSize, 64)).map { Array($0) }
        } catch let failure as FileSystemFailure where failure.code == ELOOP || failure.code == EFBIG {
            unlink(path)
            return nil
        } catch {
            return nil
        }
    }

    /// Creates the directory (mode 0700) and any missing parents; `false` when it cannot.
    private func prepareDirectory() -> Bool {
        if index.withLock({ $0.hasDirectory }) { return true }
        guard (try? OwnerOnlyFiles.makeDirectory(at: directoryPath)) != nil else { return false }
        index.withLock { $0.hasDirectory = true }
        return true
    }
}

// MARK: - Names

extension DiskCacheStore {
    /// Sixteen lowercase hexadecimal digits.
    private static func fileStem(of hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The hash an entry file's name carries, or `nil` when `name` is not one (`<16 hex digits>.cache`).
    private static func hash(inFileName name: String) -> UInt64? {
        guard name.utf8.count == 22, name.hasSuffix(".cache") else { return nil }
        let stem = name.utf8.prefix(16)
        guard stem.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return UInt64(String(decoding: stem, as: UTF8.self), radix: 16)
    }

    private func path(of hash: UInt64) -> String {
        path(named: Self.fileStem(of: hash) + ".cache")
    }

    private func path(named name: String) -> String {
        directoryPath == "/" ? "/" + name : directoryPath + "/" + name
    }
}

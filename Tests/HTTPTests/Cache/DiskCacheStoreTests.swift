import Foundation
import Testing

@testable import HTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CacheEntryFile {
    /// The bytes of a file holding `entry` as the only variant under `key`.
    static func encode(_ entry: CacheEntry, key: String) -> Data {
        encode([entry], key: key)!
    }
}

extension TemporaryDirectory {
    /// The path of the file `key`'s entry is kept in.
    func file(for key: String) -> String {
        let digits = String(CacheEntryFile.fnv1a(key.utf8), radix: 16)
        return path + "/" + String(repeating: "0", count: 16 - digits.count) + digits + ".cache"
    }

    var entryFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".cache") }.sorted()
    }
}

@Suite(.noHang) struct DiskCacheStoreTests {
    let directory = TemporaryDirectory()
    let date = Date(timeIntervalSince1970: 1_800_000_000.25)

    func entry(body: String = "hello", headers: HTTPHeaders = ["Cache-Control": "max-age=60"]) -> CacheEntry {
        CacheEntry(
            status: .ok, headers: headers, body: Data(body.utf8), url: URL(string: "https://api.example.com/a"),
            requestDate: date, responseDate: date + 0.5, varyingRequestHeaders: ["Accept": "text/plain"])
    }

    @Test func anEntryComesBackAsItWasStored() async throws {
        let store = DiskCacheStore(directory: directory.url)
        let headers: HTTPHeaders = [
            "Cache-Control": "max-age=60", "set-thing": "1", "Set-Thing": "2", "Ünïcode-Value": "Zoë",
        ]
        await store.store(entry(headers: headers), for: "GET https://api.example.com/a")
        let read = try #require(await store.entry(for: "GET https://api.example.com/a"))
        #expect(read.status == .ok)
        #expect(Array(read.headers) == Array(headers))
        #expect(String(decoding: read.body, as: UTF8.self) == "hello")
        #expect(read.url == URL(string: "https://api.example.com/a"))
        #expect(read.requestDate == date && read.responseDate == date + 0.5)
        #expect(read.varyingRequestHeaders["Accept"] == "text/plain")
        #expect(read.metadata.freshnessLifetime == 60)
        #expect(await store.entry(for: "GET https://api.example.com/b") == nil)
    }

    @Test func entriesSurviveARestart() async throws {
        await DiskCacheStore(directory: directory.url).store(entry(), for: "k")
        let reopened = DiskCacheStore(directory: directory.url)
        #expect(await reopened.count == 1)
        #expect(try #require(await reopened.entry(for: "k")).body == Data("hello".utf8))
    }

    @Test func aNewCacheOverTheSameDirectoryServesTheStoredResponse() async throws {
        let clock = ManualDate()
        let first = MockLoader().then(status: .ok, headers: ["Cache-Control": "max-age=600"], body: Data("disk".utf8))
        let cache = Cache(store: DiskCacheStore(directory: directory.url), now: clock.closure)
        cache.nextLoader = first
        _ = await cache.load(cacheRequest())

        clock.advance(by: 60)
        let nothing = MockLoader()
        let restarted = Cache(store: DiskCacheStore(directory: directory.url), now: clock.closure)
        restarted.nextLoader = nothing
        let hit = try await restarted.load(cacheRequest()).get()
        #expect(hit.text == "disk")
        #expect(hit.cacheStatus == "Cache; hit; ttl=540")
        #expect(nothing.receivedRequests.isEmpty)
    }

    @Test func filesAreOwnerOnly() async throws {
        let nested = directory.url.appendingPathComponent("a/b")
        await DiskCacheStore(directory: nested).store(entry(), for: "k")
        var info = stat()
        #expect(stat(nested.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        let file = try #require(
            try FileManager.default.contentsOfDirectory(atPath: nested.path).first { $0.hasSuffix(".cache") })
        #expect(stat(nested.path + "/" + file, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    /// Every way a file can be damaged: it is dropped, never served, and the store goes on working.
    @Test(arguments: ["truncated", "flipped", "garbage", "empty", "extended", "directory", "symlink", "otherKey"])
    func aDamagedFileIsDroppedAndNeverServed(damage: String) async throws {
        let key = "GET https://api.example.com/a"
        await DiskCacheStore(directory: directory.url).store(entry(), for: key)
        let path = directory.file(for: key)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        switch damage {
        case "truncated": bytes.removeLast(Int.random(in: 1..<bytes.count, using: &random))
        case "flipped":
            bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
        case "garbage": bytes = (0..<bytes.count).map { _ in UInt8.random(in: 0...255, using: &random) }
        case "empty": bytes = []
        case "extended": bytes.append(0)
        case "otherKey": bytes = [UInt8](CacheEntryFile.encode(entry(body: "other"), key: "GET https://other/"))
        default: break
        }
        try FileManager.default.removeItem(atPath: path)
        switch damage {
        case "directory": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case "symlink":
            let target = directory.path + "/target"
            try Data(CacheEntryFile.encode(entry(body: "planted"), key: key)).write(to: URL(fileURLWithPath: target))
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        default: try Data(bytes).write(to: URL(fileURLWithPath: path))
        }

        let store = DiskCacheStore(directory: directory.url)
        #expect(await store.entry(for: key) == nil, "\(damage), seed \(seed)")
        if damage != "directory" && damage != "otherKey" {
            #expect(!FileManager.default.fileExists(atPath: path), "\(damage): the damaged file was kept")
        }
        if damage == "directory" { try FileManager.default.removeItem(atPath: path) }
        await store.store(entry(body: "again"), for: key)
        #expect(try #require(await store.entry(for: key)).body == Data("again".utf8))
    }

    @Test func aDamagedFileMakesTheCacheAskTheServer() async throws {
        let key = "GET https://api.example.com/people/42"
        let clock = ManualDate()
        let mock = MockLoader()
            .then(status: .ok, headers: ["Cache-Control": "max-age=600"], body: Data("first".utf8))
            .then(status: .ok, headers: ["Cache-Control": "max-age=600"], body: Data("second".utf8))
        let cache = Cache(store: DiskCacheStore(directory: directory.url), now: clock.closure)
        cache.nextLoader = mock
        _ = await cache.load(cacheRequest())
        let path = directory.file(for: key)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
        #expect(try await cache.load(cacheRequest()).get().text == "second")
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func theLeastRecentlyUsedFilesGoFirstAndTheOrderSurvivesARestart() async throws {
        let size = CacheEntryFile.encode(entry(), key: "a").count
        let store = DiskCacheStore(directory: directory.url, maximumSize: size * 8)
        let keys = ["a", "b", "c", "e"]
        for key in keys { await store.store(entry(), for: key) }
        // Date the files a < b < c < e, as if used in that order long ago.
        for (index, key) in keys.enumerated() {
            var times = [
                timeval(tv_sec: 1_000_000_000 + index, tv_usec: 0), timeval(tv_sec: 1_000_000_000 + index, tv_usec: 0),
            ]
            #expect(utimes(directory.file(for: key), &times) == 0)
        }
        // After a restart, using "a" makes it the most recent: "b" is the one to go.
        let restarted = DiskCacheStore(directory: directory.url, maximumSize: size * 4)
        _ = await restarted.entry(for: "a")
        let used =
            try FileManager.default.attributesOfItem(atPath: directory.file(for: "a"))[.modificationDate] as? Date
        #expect(try #require(used).timeIntervalSince1970 > 1_000_000_010)
        await restarted.store(entry(), for: "d")
        #expect(await restarted.entry(for: "b") == nil)
        for key in ["a", "c", "d", "e"] { #expect(await restarted.entry(for: key) != nil, "\(key)") }
        #expect(await restarted.size <= size * 4)
        #expect(directory.entryFiles.count == 4)
    }

    @Test func aRestartWithASmallerLimitEvicts() async {
        let size = CacheEntryFile.encode(entry(), key: "a").count
        let store = DiskCacheStore(directory: directory.url, maximumSize: size * 8)
        for key in ["a", "b", "c", "d"] { await store.store(entry(), for: key) }
        let smaller = DiskCacheStore(directory: directory.url, maximumSize: size * 2)
        #expect(await smaller.count == 2)
        #expect(directory.entryFiles.count == 2)
    }

    @Test func anEntryLargerThanAQuarterOfTheLimitIsNotStored() async {
        let store = DiskCacheStore(directory: directory.url, maximumSize: 4_000)
        await store.store(entry(), for: "k")
        await store.store(entry(body: String(repeating: "x", count: 2_000)), for: "k")
        #expect(await store.entry(for: "k") == nil)
        #expect(directory.entryFiles.isEmpty)
    }

    @Test func removeAllRemovesEveryFileAndOldTemporaryFiles() async throws {
        let store = DiskCacheStore(directory: directory.url)
        for key in ["a", "b"] { await store.store(entry(), for: key) }
        let stale = directory.path + "/.0123456789abcdef.1.tmp"
        let fresh = directory.path + "/.0123456789abcdef.2.tmp"
        try Data("partial".utf8).write(to: URL(fileURLWithPath: stale))
        try Data("partial".utf8).write(to: URL(fileURLWithPath: fresh))
        var old = [timeval(tv_sec: 1_000_000_000, tv_usec: 0), timeval(tv_sec: 1_000_000_000, tv_usec: 0)]
        #expect(utimes(stale, &old) == 0)
        // A new store removes temporary files a crashed writer left behind a minute ago or more.
        _ = await DiskCacheStore(directory: directory.url).count
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: fresh))
        await store.removeAll()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(await store.count == 0)
    }

    @Test func concurrentStoresAndReadsNeverMixEntriesUp() async {
        let store = DiskCacheStore(directory: directory.url)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let key = "k\(index % 10)"
                    if index.isMultiple(of: 3) {
                        await store.store(self.entry(body: key), for: key)
                    } else if let found = await store.entry(for: key) {
                        #expect(found.body == Data(key.utf8))
                    }
                }
            }
        }
        for index in 0..<10 {
            #expect(await store.entry(for: "k\(index)")?.body == Data("k\(index)".utf8))
        }
    }
}

@Suite(.noHang) struct CacheEntryFileTests {
    let entry = CacheEntry(
        status: 201, headers: ["A": "1", "B": "two"], body: Data("body".utf8), url: nil,
        requestDate: Date(timeIntervalSince1970: 1), responseDate: Date(timeIntervalSince1970: 2),
        varyingRequestHeaders: ["Accept": "*/*"])

    @Test func everyTruncationAndEveryFlippedByteIsRefused() {
        let file = [UInt8](CacheEntryFile.encode(entry, key: "GET https://a/"))
        #expect(CacheEntryFile.decode(file)?.key == "GET https://a/")
        for length in 0..<file.count {
            #expect(CacheEntryFile.decode(Array(file.prefix(length))) == nil, "cut to \(length)")
        }
        for index in file.indices {
            for bit in 0..<8 {
                var flipped = file
                flipped[index] ^= 1 << bit
                #expect(CacheEntryFile.decode(flipped) == nil, "byte \(index), bit \(bit)")
            }
        }
    }

    /// Random bytes, and valid files with random lengths and checksums fixed up so that only the payload's own
    /// structure can refuse them: never a trap, never an allocation a length field asks for.
    @Test func randomFilesNeverTrap() {
        let seed = SplitMix64.seed()
        print("CacheEntryFileTests: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        // Both formats: the current one with two variants, and the first one, which is still read.
        let validFiles = [
            [UInt8](CacheEntryFile.encode([entry, entry], key: "GET https://a/")!),
            [UInt8](CacheEntryFile.encodeVersion1(entry, key: "GET https://a/")),
        ]
        for _ in 0..<5_000 {
            let valid = validFiles[Int.random(in: 0..<2, using: &random)]
            var bytes: [UInt8]
            if Bool.random(using: &random) {
                bytes = (0..<Int.random(in: 0..<200, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                if bytes.count >= 8, Bool.random(using: &random) {
                    bytes.replaceSubrange(0..<8, with: CacheEntryFile.magic)
                }
            } else {
                var payload = Array(valid[16..<(valid.count - 8)])
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    payload[Int.random(in: 0..<payload.count, using: &random)] = UInt8.random(
                        in: 0...255, using: &random)
                }
                bytes = Array(valid[0..<8])
                withUnsafeBytes(of: UInt64(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
                bytes += payload
                withUnsafeBytes(of: CacheEntryFile.fnv1a(payload).littleEndian) { bytes.append(contentsOf: $0) }
            }
            _ = CacheEntryFile.decode(bytes)
        }
    }
}

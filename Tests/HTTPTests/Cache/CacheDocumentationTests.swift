import Foundation
import HTTP
import HTTPTestSupport
import Testing

// The code samples of HTTP.docc/CachingResponses.md ("Caching responses"), kept identical to the article (the comparison
// ignores indentation, blank lines, `import` lines and a leading `private`). Samples that would reach the network
// are compiled and never run; the others run against MockLoader.

/// A stand-in for `Synchronization.Mutex` with the same `withLock`, on the tests' pthread-based lock, which
/// ThreadSanitizer can see (see DocumentationExamplesTests.swift).
private final class Mutex<Value>: Sendable {
    private let lock: Locked<Value>
    init(_ value: Value) { lock = Locked(value) }
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result { try lock.withLock(body) }
}

extension ServerEnvironment {
    fileprivate static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

/// Answers from memory when it can, from disk otherwise, and keeps both up to date.
private final class TwoLevelStore: CacheStore {
    let memory = MemoryCacheStore(maximumSize: 5 << 20)
    let disk: DiskCacheStore

    init(directory: URL) {
        disk = DiskCacheStore(directory: directory)
    }

    func variants(for key: String) async -> [CacheEntry] {
        let inMemory = await memory.variants(for: key)
        if !inMemory.isEmpty { return inMemory }
        let onDisk = await disk.variants(for: key)
        if !onDisk.isEmpty { await memory.store(onDisk, for: key) }
        return onDisk
    }

    func store(_ variants: [CacheEntry], for key: String) async {
        await memory.store(variants, for: key)
        await disk.store(variants, for: key)
    }

    func removeEntry(for key: String) async {
        await memory.removeEntry(for: key)
        await disk.removeEntry(for: key)
    }

    func removeAll() async {
        await memory.removeAll()
        await disk.removeAll()
    }
}

/// A wall clock that moves only when a test says so.
private final class TestClock: Sendable {
    private let date = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { date.withLock { $0 } }
    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

// "Overview" and the Cache-Status sample. Loads over the network: compiled, never run.
private func overviewSample() async throws {
    let cache = Cache(store: MemoryCacheStore(maximumSize: 20 << 20))  // 20 MiB
    let chain = ApplyEnvironment(environment: .production) --> cache --> Retry() --> URLSessionLoader()

    let response = try await chain.load(HTTPRequest(path: "/people/42")).get()
    print(response.headers["Cache-Status"] ?? "")  // "Cache; hit; ttl=42", "Cache; fwd=uri-miss; …"
}

@Suite(.noHang) struct CacheDocumentationTests {
    @Test func perRequestPolicies() {
        var refresh = HTTPRequest(path: "/inbox")
        refresh.cachePolicy = .reload  // pull to refresh: ask the server, store the answer

        var offline = HTTPRequest(path: "/inbox")
        offline.cachePolicy = .onlyIfCached  // whatever is stored, fresh or stale, or a 504

        var secret = HTTPRequest(path: "/statement")
        secret.cachePolicy = .doNotStore  // may be answered from the store, never stored

        #expect(
            [refresh.cachePolicy, offline.cachePolicy, secret.cachePolicy] == [.reload, .onlyIfCached, .doNotStore])
        #expect(HTTPRequest().cachePolicy == .useCache)
    }

    @Test func diskStoreAndTwoLevelStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-cache")
        let diskCache = Cache(store: DiskCacheStore(directory: directory, maximumSize: 50 << 20))
        #expect((diskCache.store as? DiskCacheStore)?.maximumSize == 50 << 20)

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("two-level-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let mock = MockLoader().then(status: .ok, headers: ["Cache-Control": "max-age=600"], body: Data("hi".utf8))
        let cache = Cache(store: TwoLevelStore(directory: scratch))
        cache.nextLoader = mock
        _ = await cache.load(HTTPRequest(host: "api.example.com", path: "/a"))
        // A restart: the memory is empty, the disk is not.
        let restarted = Cache(store: TwoLevelStore(directory: scratch))
        restarted.nextLoader = MockLoader()
        let hit = try await restarted.load(HTTPRequest(host: "api.example.com", path: "/a")).get()
        #expect(hit.body == Data("hi".utf8))
    }

    @Test func testingWithAClockOfYourOwn() async throws {
        let clock = TestClock()
        let mock = MockLoader().then(status: .ok, headers: ["Cache-Control": "max-age=60"])
        let testCache = Cache(now: { clock.now })
        testCache.nextLoader = mock

        _ = await testCache.load(HTTPRequest(host: "api.example.com", path: "/people/42"))
        clock.advance(by: 30)
        let hit = try await testCache.load(HTTPRequest(host: "api.example.com", path: "/people/42")).get()
        // hit.headers["Age"] == "30", and the mock saw one request

        #expect(hit.headers["Age"] == "30")
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        // This file is one folder deeper than the others: Tests/HTTPTests/Cache/.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let article = root.appendingPathComponent("Sources/HTTP/HTTP.docc/CachingResponses.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(
            missing.isEmpty, "CachingResponses.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// Persistent cookies kept through a `CookieStore`, in memory and in a file: what is saved, what a new loader
/// restores, and what a reset leaves.
@Suite(.noHang) struct CookieStoreTests {
    let clock = ManualDate()

    private func setting(_ lines: [String]) -> MockLoader.Handler {
        { request in
            var fields = HTTPHeaders()
            for line in lines { fields.add(line, for: "Set-Cookie") }
            return .success(HTTPResponse(request: request, status: .ok, headers: fields))
        }
    }

    /// A loader over `store` whose server sets `lines` once, then answers 200s.
    private func loaderSetting(_ lines: [String], store: any CookieStore) async -> (Cookies, MockLoader) {
        let mock = MockLoader().then(setting(lines))
        for _ in 0..<4 { mock.then(status: .ok) }
        let cookies = Cookies(store: store, now: clock.closure)
        cookies.nextLoader = mock
        _ = await cookies.load(cacheRequest())
        await cookies.waitUntilSaved()
        return (cookies, mock)
    }

    /// A new loader over `store`, and the `Cookie` field it sends on its first request.
    private func cookieFieldOfANewLoader(over store: any CookieStore) async -> String? {
        let mock = MockLoader().then(status: .ok)
        let cookies = Cookies(store: store, now: clock.closure)
        cookies.nextLoader = mock
        _ = await cookies.load(cacheRequest())
        return mock.receivedRequests.first?.headers["Cookie"]
    }

    private static let lines = ["session=s; Secure", "keep=k; Max-Age=3600; Path=/", "short=x; Max-Age=10; Path=/"]

    @Test(arguments: ["memory", "file"])
    func persistentCookiesAreSavedAndRestoredAndSessionCookiesAreNot(kind: String) async throws {
        let directory = TemporaryDirectory()
        let store: any CookieStore =
            kind == "memory" ? MemoryCookieStore() : FileCookieStore(file: directory.file("cookies.json"))
        _ = await loaderSetting(Self.lines, store: store)
        #expect(await store.savedCookies().map(\.name) == ["keep", "short"])

        // A later launch: the store's unexpired cookies are sent, the session cookie is gone.
        #expect(await cookieFieldOfANewLoader(over: store) == "keep=k; short=x")
        clock.advance(by: 60)
        let reopened: any CookieStore =
            kind == "memory" ? store : FileCookieStore(file: directory.file("cookies.json"))
        #expect(await cookieFieldOfANewLoader(over: reopened) == "keep=k")
        let restored = Cookies(store: reopened, now: clock.closure)
        await restored.restore()
        let keep = try #require(restored.jar.cookies.first)
        #expect(restored.jar.cookies.count == 1 && keep.name == "keep" && keep.path == "/" && keep.isPersistent)
        #expect(keep.expiresDate == clock.now.addingTimeInterval(3_600 - 60))
    }

    @Test(arguments: ["memory", "file"])
    func aResetEmptiesTheJarAndTheStore(kind: String) async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("cookies.json")
        let store: any CookieStore = kind == "memory" ? MemoryCookieStore() : FileCookieStore(file: file)
        let (cookies, mock) = await loaderSetting(Self.lines, store: store)
        let chain = ResetGuard() --> cookies
        await chain.reset()
        #expect(cookies.jar.cookies.isEmpty)
        #expect(await store.savedCookies().isEmpty)
        if kind == "file" { #expect(!FileManager.default.fileExists(atPath: file.path)) }
        _ = await chain.load(cacheRequest())
        #expect(mock.receivedRequests.last?.headers["Cookie"] == nil)
        #expect(await cookieFieldOfANewLoader(over: store) == nil)
    }

    @Test func theFileIsOwnerOnlyAndItsDirectoryIsCreated() async throws {
        let directory = TemporaryDirectory()
        let file = directory.url.appendingPathComponent("nested/deeper/cookies.json")
        _ = await loaderSetting(Self.lines, store: FileCookieStore(file: file))
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: file.deletingLastPathComponent().path)
        #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("session"))  // a session cookie never reaches the disk
    }

    @Test func aDamagedFileOrOneOfAnotherVersionHoldsNoCookies() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("cookies.json")
        let store = FileCookieStore(file: file)
        _ = await loaderSetting(Self.lines, store: store)
        let good = try Data(contentsOf: file)
        var random = SplitMix64(seed: SplitMix64.seed())
        for length in [0, 1, good.count / 2, good.count - 1] {
            try good.prefix(length).write(to: file)
            #expect(await store.savedCookies().isEmpty, "cut to \(length) bytes")
        }
        for _ in 0..<50 {
            var damaged = good
            damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            try damaged.write(to: file)
            _ = await store.savedCookies()  // never traps; what it reads, if anything, it read from valid JSON
        }
        let otherVersion = String(decoding: good, as: UTF8.self).replacingOccurrences(
            of: "\"version\":1", with: "\"version\":2")
        try Data(otherVersion.utf8).write(to: file)
        #expect(await store.savedCookies().isEmpty)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        #expect(await store.savedCookies().isEmpty)  // a directory is no file of cookies
    }

    @Test func theJarsOwnCookiesWinOverTheStoresAndAChangeThroughWithJarIsSaved() async throws {
        let store = MemoryCookieStore()
        await store.save([
            Cookie(
                name: "a", value: "stored", domain: "api.example.com", expiresDate: clock.now + 600,
                creationDate: clock.now)
        ])
        let own = Cookie(
            name: "a", value: "own", domain: "api.example.com", expiresDate: clock.now + 600, creationDate: clock.now)
        let cookies = Cookies(jar: CookieJar(cookies: [own]), store: store, now: clock.closure)
        await cookies.restore()
        #expect(cookies.jar.cookies.map(\.value) == ["own"])

        cookies.withJar { $0.removeAll() }
        await cookies.waitUntilSaved()
        #expect(await store.savedCookies().isEmpty)
        cookies.withJar {
            $0.store(
                Cookie(name: "b", value: "2", domain: "api.example.com", creationDate: clock.now), now: clock.now)
        }
        await cookies.waitUntilSaved()
        #expect(await store.savedCookies().isEmpty)  // a session cookie is not saved
    }

    /// Many loads setting cookies at once: saves run one at a time, and the last one saved is the jar as it ends.
    @Test func concurrentChangesAreSavedOneAtATimeTheLatestLast() async throws {
        let store = RecordingCookieStore()
        let mock = MockLoader()
        for index in 0..<200 { mock.then(setting(["c\(index)=\(index); Max-Age=3600; Domain=example.com"])) }
        let cookies = Cookies(jar: CookieJar(maximumCookiesPerDomain: 500), store: store, now: clock.closure)
        cookies.nextLoader = mock
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 { group.addTask { _ = await cookies.load(cacheRequest()) } }
        }
        await cookies.waitUntilSaved()
        #expect(store.overlappingSaves == 0)
        #expect(await store.savedCookies() == cookies.jar.cookies.filter(\.isPersistent))
        #expect(await store.savedCookies().count == 200)
    }

    @Test func itDescribesItsStore() {
        #expect(Cookies(store: MemoryCookieStore()).configurationDescription == "cookies: 0, store: MemoryCookieStore")
    }
}

/// A memory store that counts saves running at the same time.
final class RecordingCookieStore: CookieStore {
    private struct State {
        var saved: [Cookie] = []
        var running = 0
        var overlapping = 0
    }

    private let state = Locked(State())

    var overlappingSaves: Int { state.withLock { $0.overlapping } }

    func savedCookies() async -> [Cookie] { state.withLock { $0.saved } }

    func save(_ cookies: [Cookie]) async {
        state.withLock { state in
            state.running += 1
            if state.running > 1 { state.overlapping += 1 }
        }
        await Task.yield()
        state.withLock { state in
            state.saved = cookies
            state.running -= 1
        }
    }

    func removeAll() async { state.withLock { $0.saved = [] } }
}

import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sessions `URLSessionLoader` lends to one stream (or one request with TLS settings of its own) at a time.
@Suite(.noHang) struct SessionPoolTests {
    /// A pool that counts the sessions it makes.
    private func pool() -> (SessionPool, made: Locked<Int>) {
        let made = Locked(0)
        let pool = SessionPool { configuration, delegate in
            made.withLock { $0 += 1 }
            return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        }
        return (pool, made)
    }

    @Test func aSessionGivenBackIsLentAgainWithItsDelegate() {
        let (pool, made) = pool()
        defer { pool.close() }
        let first = pool.lease(for: TLSSettings(), configuration: .ephemeral)
        pool.giveBack(first)
        let second = pool.lease(for: TLSSettings(), configuration: .ephemeral)
        #expect(second.session === first.session)
        #expect(second.delegate === first.delegate)
        #expect(made.value == 1)
        pool.giveBack(second)
    }

    @Test func aSessionInUseIsNeverLentTwice() {
        let (pool, made) = pool()
        defer { pool.close() }
        let leases = (0..<5).map { _ in pool.lease(for: TLSSettings(), configuration: .ephemeral) }
        #expect(Set(leases.map { ObjectIdentifier($0.session) }).count == 5)
        #expect(made.value == 5)
        for lease in leases { pool.giveBack(lease) }
        #expect(pool.idleCount == 5)
    }

    @Test func sessionsAreKeptApartByTheirTLSSettings() throws {
        let (pool, made) = pool()
        defer { pool.close() }
        let pinned = TLSSettings(serverTrustEvaluator: try PublicKeyPinning(pins: [TrustFixtures.root.pin]))
        let plain = pool.lease(for: TLSSettings(), configuration: .ephemeral)
        pool.giveBack(plain)
        // A request with an evaluator never gets a session whose connections another setting checked.
        let checked = pool.lease(for: pinned, configuration: .ephemeral)
        #expect(checked.session !== plain.session)
        pool.giveBack(checked)
        #expect(pool.lease(for: pinned, configuration: .ephemeral).session === checked.session)
        #expect(pool.lease(for: TLSSettings(), configuration: .ephemeral).session === plain.session)
        #expect(made.value == 2)
    }

    @Test func atMostTheIdleLimitIsKeptTheOldestGoesFirst() {
        let (pool, _) = pool()
        defer { pool.close() }
        let count = SessionPool.idleLimit + 4
        let leases = (0..<count).map { _ in pool.lease(for: TLSSettings(), configuration: .ephemeral) }
        for lease in leases { pool.giveBack(lease) }
        #expect(pool.idleCount == SessionPool.idleLimit)
        // The ones returned last are kept, and lent last-returned first.
        #expect(pool.lease(for: TLSSettings(), configuration: .ephemeral).session === leases[count - 1].session)
    }

    @Test func aClosedPoolKeepsNothing() {
        let (pool, _) = pool()
        let lent = pool.lease(for: TLSSettings(), configuration: .ephemeral)
        pool.giveBack(pool.lease(for: TLSSettings(), configuration: .ephemeral))
        pool.close()
        #expect(pool.idleCount == 0)
        pool.giveBack(lent)  // returned after the loader went away: invalidated, not kept
        #expect(pool.idleCount == 0)
    }
}

/// Streams through `URLSessionLoader` against the local nginx, whose responses name their connection
/// (`X-Connection`, nginx's serial number for it).
@Suite(.noHang, .enabled(if: TestServers.nginx != nil, "needs NGINX_URL: run through scripts/servers.sh"))
struct URLSessionLoaderSessionPoolTests {
    let nginx = TestServers.nginx!

    private func streamRequest(_ path: String) -> HTTPRequest {
        HTTPRequest(url: nginx.appending(path: path))
    }

    @Test func consecutiveStreamsReuseOneConnection() async throws {
        let loader = URLSessionLoader()
        var connections: [String] = []
        for _ in 0..<25 {
            let streamed = try await loader.stream(streamRequest("person.json")).get()
            connections.append(try #require(streamed.head.headers["X-Connection"], "nginx names no connection"))
            #expect(try await streamed.body.collect().count == 213)
        }
        // One connection when nothing interferes (each stream's session goes back before its consumer hears of the
        // end); libcurl may still open a new one now and then, as it may for any session. A session per stream
        // would open 25.
        #expect(Set(connections).count <= 3, "connections: \(connections)")
    }

    @Test func concurrentStreamsKeepTheirConnectionsForTheNextRound() async throws {
        let loader = URLSessionLoader()
        let width = 4
        var connections: [Set<String>] = []
        for _ in 0..<5 {
            let round = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<width {
                    group.addTask {
                        let streamed = try await loader.stream(streamRequest("person.json")).get()
                        _ = try await streamed.body.collect()
                        return try #require(streamed.head.headers["X-Connection"], "nginx names no connection")
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            connections.append(round)
        }
        let all = connections.reduce(Set<String>()) { $0.union($1) }
        // Each round runs `width` streams at once, each alone in a session; later rounds find those sessions idle,
        // with their connections (a session per stream would open 20).
        #expect(all.count <= 2 * width, "connections per round: \(connections)")
    }

    @Test func aConsumerThatDoesNotReadHoldsBackNoOtherStream() async throws {
        let loader = URLSessionLoader()
        let size = 4_000_000
        let url = try #require(TestServers.downloads, "needs DOWNLOADS_URL").appending(path: "file/\(size)")
        // A body nobody reads yet: far past the stream's buffer limit.
        let idle = try await loader.stream(HTTPRequest(url: url)).get()
        // Meanwhile another stream arrives whole.
        let read = try await loader.stream(HTTPRequest(url: url)).get()
        #expect(try await read.body.collect() == downloadPattern(0..<size))
        // And the first is intact when its consumer comes back to it.
        #expect(try await idle.body.collect() == downloadPattern(0..<size))
    }

    @Test func aCancelledStreamsSessionServesTheNextStream() async throws {
        let loader = URLSessionLoader()
        let cancelled = try await loader.stream(streamRequest("download/32M.bin")).get()
        cancelled.body.cancel()
        await #expect(throws: HTTPError.self) { _ = try await cancelled.body.collect() }
        for _ in 0..<3 {
            let streamed = try await loader.stream(streamRequest("person.json")).get()
            #expect(streamed.head.status == .ok)
            #expect(try await streamed.body.collect().count == 213)
        }
        let reset: Void? = await withDeadline(seconds: 10) { await loader.reset() }
        #expect(reset != nil, "a stream kept the loader busy")
    }
}

import Foundation
import Testing

@testable import HTTP

/// Pins and client certificates through `URLSessionLoader`, and the metrics and events it reports, against the
/// local servers.
@Suite(.noHang, .enabled(if: TestServers.httpbin != nil, "needs the local servers"))
struct URLSessionLoaderWiringTests {
    let httpbin = TestServers.httpbin!

    private static let pinning = try! PublicKeyPinning(pins: ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="])

    #if canImport(FoundationNetworking)
    @Test func aPinnedRequestFailsClosedOnLinuxAndIsNeverSent() async throws {
        let url = try #require(TestServers.tlsTrusted ?? URL(string: "https://127.0.0.1:9"))
        let sent = Locked(0)
        let loader = URLSessionLoader(serverTrustEvaluator: Self.pinning)
        let chain =
            ModifyRequest { request in
                sent.withLock { $0 += 1 }
                return request
            } --> loader
        let error = await chain.load(HTTPRequest(url: url.appending(path: "health"))).error
        #expect(error?.code == .insecureConnection)
        #expect(error?.message.contains("cannot evaluate server trust") == true)
        #expect(error?.message.contains("not sent") == true)
        // A request can opt out of the loader's pin, and it is sent (and fails on the untrusted test CA instead).
        var unpinned = HTTPRequest(url: url.appending(path: "health"))
        unpinned.serverTrustPolicy = .platformDefault
        let other = await loader.load(unpinned).error
        #expect(other?.message.contains("cannot evaluate server trust") != true)
        // A request's own evaluator on a loader without one is refused the same way.
        var pinned = HTTPRequest(url: url.appending(path: "health"))
        pinned.serverTrustPolicy = .evaluated(by: Self.pinning)
        #expect(await URLSessionLoader().load(pinned).error?.message.contains("cannot evaluate server trust") == true)
    }

    @Test func aClientIdentityFailsClosedOnLinux() async throws {
        let certificate = try #require(try PEM.blocks(in: TrustFixtures.leafRSA.pem).first?.contents)
        let identity = try ClientIdentity(
            certificateChain: [certificate], privateKey: Data([0x30, 0x03, 0x02, 0x01, 0x00]))
        let loader = URLSessionLoader(clientIdentity: identity)
        let error = await loader.load(HTTPRequest(url: URL(string: "https://127.0.0.1:9/")!)).error
        #expect(error?.code == .insecureConnection)
        #expect(error?.message.contains("client certificate") == true)
    }
    #endif

    @Test func responsesCarryTheirMetrics() async throws {
        let loader = URLSessionLoader()
        let post = HTTPRequest(
            method: .post, url: httpbin.appending(path: "anything"), body: DataBody(Data(count: 1_000)))
        let response = try await loader.load(post).get()
        let metrics = try #require(response.metrics)
        #expect(metrics.start <= metrics.end)
        #expect(metrics.requestBodyBytesSent == 1_000)
        #expect(metrics.responseBodyBytesReceived == Int64(response.body.count))
        #expect(metrics.attemptNumber == 1)

        // The redirects FollowRedirects followed, on the final response's metrics.
        let chain = FollowRedirects() --> loader
        let redirected = try await chain.load(HTTPRequest(url: httpbin.appending(path: "redirect/2"))).get()
        #expect(redirected.metrics?.redirects.count == 2)
        #expect(redirected.metrics?.redirects.first?.status == .found)
        #expect(redirected.metrics?.redirects.map(\.status) == redirected.redirects.map(\.status))

        // A delegate-driven transfer (a download) also times the head.
        var streamed = HTTPRequest(url: httpbin.appending(path: "bytes/1000"))
        streamed.progressHandler = { _ in }
        let withHead = try await loader.load(streamed).get()
        let head = try #require(withHead.metrics?.responseHeadReceived)
        #expect(head <= withHead.metrics!.end)
    }

    @Test func theTerminalReportsEachAttemptToTheLoadsObserver() async throws {
        let events = Locked<[HTTPEvent.Kind]>([])
        let chain = Observe { event in events.withLock { $0.append(event.kind) } } --> URLSessionLoader()
        _ = try await chain.load(HTTPRequest(url: httpbin.appending(path: "get"))).get()
        #expect(events.value == [.loadStarted, .attemptStarted, .attemptFinished, .loadFinished])
    }
}

import Foundation
import HTTP
import Testing

/// Recording real traffic from httpbin, replaying it without the server, and exporting it as HAR.
@Suite(.noHang, .enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct RecordReplayIntegrationTests {
    let base = TestServers.httpbin!

    /// The session both halves send: a query in one order, a JSON body with a credential, binary bytes, a status,
    /// and a port nobody listens on.
    func session() -> [HTTPRequest] {
        var search = HTTPRequest(url: URL(string: base.absoluteString + "/get?b=2&a=1&api_key=k3y")!)
        search.headers["Authorization"] = "Bearer s3cret-token"
        let post = HTTPRequest(
            method: .post, url: base.appendingPathComponent("/anything/people"),
            body: JSONBody(["name": "Zoë", "password": "hunter2"]))
        return [
            search, post,
            HTTPRequest(url: base.appendingPathComponent("/bytes/64")),
            HTTPRequest(url: base.appendingPathComponent("/status/418")),
            HTTPRequest(url: URL(string: "http://127.0.0.1:1/closed")!),
        ]
    }

    @Test func recordedTrafficIsReplayedWithoutTheServer() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("httpbin.json")
        let recorder = Recorder(file: file)
        let live = recorder --> URLSessionLoader()
        var liveResults: [HTTPResult] = []
        for request in session() { liveResults.append(await live.load(request)) }
        #expect(liveResults.map { $0.response?.status.rawValue ?? 0 } == [200, 200, 200, 418, 0])
        #expect(liveResults.last?.error?.code == .cannotConnect)

        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in ["s3cret-token", "k3y", "hunter2"] {
            #expect(!text.contains(secret), "\(secret) reached the cassette")
        }
        let cassette = try Cassette(contentsOf: file)
        #expect(cassette.entries.count == 5)
        #expect(cassette.entries[2].response?.body.map { if case .binary = $0 { true } else { false } } == true)

        // The same requests, built afresh and in another query order, against the file alone.
        let replay = try ReplayLoader(contentsOf: file)
        var requests = session()
        requests[0] = HTTPRequest(
            url: URL(string: base.absoluteString + "/get?api_key=other&a=1&b=2")!,
            headers: ["Authorization": "Bearer another-token"])
        for (request, live) in zip(requests, liveResults) {
            let replayed = await replay.load(request)
            switch (live, replayed) {
            case (.success(let original), .success(let answer)):
                #expect(answer.status == original.status)
                if request.path.hasPrefix("/bytes") {
                    #expect(answer.body == original.body)  // binary bodies are kept as they are
                } else {
                    #expect(answer.body.count > 0)
                }
            case (.failure(let original), .failure(let answer)):
                #expect(answer.code == original.code)
            default:
                Issue.record("\(request): live \(live), replayed \(replayed)")
            }
        }
        #expect(replay.unusedEntries.isEmpty)

        // httpbin echoes what it received: the echo was redacted too.
        let echo = try #require(cassette.entries[1].response?.body)
        #expect(String(decoding: echo.data, as: UTF8.self).contains(#""password": "<redacted>""#))
    }

    @Test func theHARExportOfRealTrafficHasEveryEntry() async throws {
        let recorder = Recorder()
        let live = recorder --> URLSessionLoader()
        for request in session() { _ = await live.load(request) }
        let har = try JSONSerialization.jsonObject(with: recorder.cassette.harData()) as? [String: Any]
        let entries = try #require((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == 5)
        let statuses = entries.compactMap { ($0["response"] as? [String: Any])?["status"] as? Int }
        #expect(statuses == [200, 200, 200, 418, 0])
        if let path = ProcessInfo.processInfo.environment["HAR_EXPORT_PATH"] {
            try recorder.cassette.harData().write(to: URL(fileURLWithPath: path))
        }
    }
}

import Foundation
import HTTP
import HTTPTestSupport
import Testing

// The code samples of HTTP.docc/RecordingAndReplaying.md ("Recording and replaying traffic"), kept identical to
// the article; `network` stands for a `URLSessionLoader` and is a `MockLoader` here.

extension ServerEnvironment {
    fileprivate static let staging = ServerEnvironment(host: "staging.example.com", pathPrefix: "/v1")
}

// RecordingAndReplaying.md, "Record once, replay after".
private func terminal(for cassette: URL, network: HTTPLoader = URLSessionLoader()) throws -> HTTPLoader {
    if FileManager.default.fileExists(atPath: cassette.path) {
        return try ReplayLoader(contentsOf: cassette)
    }
    return Recorder(file: cassette) --> network
}

@Suite(.noHang) struct RecordAndReplayDocumentationTests {
    static let person = Data(#"{"name":"Zoë"}"#.utf8)

    @Test func recordThenReplayThenExport() async throws {
        let temporary = TemporaryDirectory()
        let directory = temporary.url
        let network = MockLoader().then(status: .ok, headers: ["Content-Type": "application/json"], body: Self.person)

        // RecordingAndReplaying.md, "Record".
        let cassette = directory.appendingPathComponent("people.json")
        let recorder = Recorder(file: cassette)
        let chain = ApplyEnvironment(environment: .staging) --> Retry() --> recorder --> network

        var request = HTTPRequest(path: "/people/42")
        request.headers["Authorization"] = "Bearer t0day"
        #expect(try await chain.load(request).get().status == .ok)
        let recorded = try Cassette(contentsOf: cassette)
        #expect(recorded.entries.map(\.request.url) == ["https://staging.example.com/v1/people/42"])
        #expect(recorded.entries[0].request.headers["Authorization"] == "Bearer <redacted>")

        // RecordingAndReplaying.md, "Record": naming more secrets.
        let careful = Recorder(file: cassette, redaction: .standard.adding("X-Session", "pin"))
        #expect(careful.redaction.hides("X-Session") && careful.redaction.hides("pin"))

        // RecordingAndReplaying.md, "Replay".
        let replay = try ReplayLoader(contentsOf: cassette)
        let replayed = ApplyEnvironment(environment: .staging) --> Retry() --> replay

        let response = try await replayed.load(HTTPRequest(path: "/people/42")).get()
        #expect(response.status == .ok)
        #expect(replay.unusedEntries.isEmpty)  // every recorded exchange was asked for

        #expect(response.body == Self.person)

        // RecordingAndReplaying.md, "Replay": matching and order.
        let strict = try ReplayLoader(
            contentsOf: cassette,
            matching: .init(url: .exact, body: false, headerFields: ["Accept"]),
            order: .inRecordedOrder
        )
        #expect(strict.matching.url == .exact && !strict.matching.body && strict.order == .inRecordedOrder)

        // RecordingAndReplaying.md, "Open a recording in a browser".
        try recorder.cassette.harData().write(to: directory.appendingPathComponent("session.har"))

        let har = try Data(contentsOf: directory.appendingPathComponent("session.har"))
        let log = (try JSONSerialization.jsonObject(with: har) as? [String: Any])?["log"] as? [String: Any]
        #expect(log?["version"] as? String == "1.2")
        #expect((log?["entries"] as? [Any])?.count == 1)
    }

    @Test func theUnmatchedRequestOfTheArticle() async throws {
        let entries = [
            Cassette.Entry(
                sequence: 0,
                request: Cassette.Request(
                    method: .post, url: "https://staging.example.com/v1/people", body: .text(#"{"name":"Ann"}"#)),
                response: Cassette.Response(status: .created)),
            Cassette.Entry(
                sequence: 1, request: Cassette.Request(url: "https://staging.example.com/v1/people/42"),
                response: Cassette.Response(status: .ok)),
        ]
        let replay = ReplayLoader(cassette: Cassette(entries: entries))
        let chain = ApplyEnvironment(environment: .staging) --> replay
        _ = await chain.load(HTTPRequest(path: "/people/42"))
        let error = try #require(
            await chain.load(HTTPRequest(method: .post, path: "/people", body: JSONBody(["name": "Zoë"]))).error)
        let article = try String(
            contentsOf: DocumentationSamples.catalog(of: "HTTP", fromTestFile: #filePath)
                .appendingPathComponent("RecordingAndReplaying.md"),
            encoding: .utf8)
        let quoted = article.components(separatedBy: "```\nnotRecorded: ")[1].components(separatedBy: "\n```")[0]
        #expect("notRecorded: " + quoted.replacingOccurrences(of: "\n", with: " ") == error.description)
    }

    @Test func recordOnceReplayAfter() async throws {
        let temporary = TemporaryDirectory()
        let cassette = temporary.url.appendingPathComponent("once.json")
        let network = MockLoader().then(status: .ok, body: Self.person)

        let first = try terminal(for: cassette, network: network)
        #expect(first is Recorder)
        #expect(
            try await first.load(HTTPRequest(host: "staging.example.com", path: "/v1/people/42")).get().status == .ok)

        let second = try terminal(for: cassette, network: network)
        #expect(second is ReplayLoader)
        #expect(
            try await second.load(HTTPRequest(host: "staging.example.com", path: "/v1/people/42")).get().body
                == Self.person)
        #expect(network.receivedRequests.count == 1)  // the second run never reached the network
    }

    @Test func everySampleOfTheArticleIsInThisFile() throws {
        let article = DocumentationSamples.catalog(of: "HTTP", fromTestFile: #filePath)
            .appendingPathComponent("RecordingAndReplaying.md")
        let missing = try DocumentationSamples.samplesMissing(from: #filePath, article: article)
        #expect(
            missing.isEmpty,
            "RecordingAndReplaying.md: samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

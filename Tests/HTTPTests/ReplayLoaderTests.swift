import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct ReplayLoaderTests {
    /// Records `requests` answered by `mock`'s handlers, and returns the cassette.
    static func record(_ requests: [HTTPRequest], from mock: MockLoader) async -> Cassette {
        let recorder = Recorder()
        let chain = recorder --> mock
        for request in requests { _ = await chain.load(request) }
        return recorder.cassette
    }

    static func entry(
        _ method: HTTPMethod = .get, _ url: String, body: String? = nil, headers: HTTPHeaders = [:],
        status: HTTPStatus = .ok, responseBody: String? = nil
    ) -> Cassette.Entry {
        Cassette.Entry(
            sequence: 0,
            request: Cassette.Request(method: method, url: url, headers: headers, body: body.map { .text($0) }),
            response: Cassette.Response(status: status, body: responseBody.map { .text($0) }))
    }

    static func cassette(_ entries: Cassette.Entry...) -> Cassette {
        Cassette(
            entries: entries.enumerated().map { index, entry in
                var entry = entry
                entry.sequence = index
                return entry
            })
    }

    static func get(_ url: String, headers: HTTPHeaders = [:]) -> HTTPRequest {
        HTTPRequest(url: URL(string: url)!, headers: headers)
    }

    @Test func answersWithTheRecordedResponse() async throws {
        let mock = MockLoader()
            .then(
                status: .ok, headers: ["Content-Type": "application/json", "ETag": "\"v1\""],
                body: Data(#"{"name":"Zoë"}"#.utf8)
            )
            .then(status: .notFound)
        let person = Self.get("https://api.example.com/v1/people/42")
        let missing = Self.get("https://api.example.com/v1/people/7")
        let replay = ReplayLoader(cassette: await Self.record([person, missing], from: mock))

        let fresh = Self.get("https://api.example.com/v1/people/42")
        let response = try await replay.load(fresh).get()
        #expect(response.status == .ok)
        #expect(response.headers["ETag"] == "\"v1\"")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"name":"Zoë"}"#)
        #expect(response.request.id == fresh.id)  // an answer to the request being loaded
        #expect(try await replay.load(Self.get("https://api.example.com/v1/people/7")).get().status == .notFound)
        #expect(replay.unusedEntries.isEmpty)
    }

    @Test func aRecordedFailureIsReplayedAsAnError() async throws {
        let refusal = HTTPResponse(request: HTTPRequest(host: "api.example.com"), status: .unauthorized)
        let mock = MockLoader()
            .then(failWith: .timedOut, message: "the server did not answer")
            .then { request in
                .failure(HTTPError(.cannotAuthenticate, request: request, message: "refused", response: refusal))
            }
        let replay = ReplayLoader(
            cassette: await Self.record(
                [Self.get("https://api.example.com/a"), Self.get("https://api.example.com/b")], from: mock))

        let timeout = try #require(await replay.load(Self.get("https://api.example.com/a")).error)
        #expect(timeout.code == .timedOut && timeout.message == "the server did not answer" && timeout.response == nil)
        let refused = try #require(await replay.load(Self.get("https://api.example.com/b")).error)
        #expect(refused.code == .cannotAuthenticate && refused.response?.status == .unauthorized)
    }

    @Test func queryItemsMatchInAnyOrderUnlessAskedOtherwise() async throws {
        let cassette = Self.cassette(Self.entry(.get, "https://api.example.com/search?q=swift&page=2"))
        let reordered = Self.get("https://API.example.com/search?page=2&q=swift")
        #expect(await ReplayLoader(cassette: cassette).load(reordered).response?.status == .ok)

        let exact = ReplayLoader(cassette: cassette, matching: .init(url: .exact))
        #expect(await exact.load(reordered).error?.code == .notRecorded)
        #expect(await exact.load(Self.get("https://api.example.com/search?q=swift&page=2")).response != nil)

        let withoutQuery = ReplayLoader(cassette: cassette, matching: .init(url: .ignoringQuery))
        #expect(await withoutQuery.load(Self.get("https://api.example.com/search?nonce=8812")).response != nil)
        #expect(await withoutQuery.load(Self.get("https://api.example.com/other")).error?.code == .notRecorded)
    }

    @Test func jsonBodiesMatchByValueAndOtherBodiesByContent() async throws {
        let cassette = Self.cassette(
            Self.entry(.post, "https://api.example.com/people", body: #"{"name":"Zoë","tags":["a","b"]}"#),
            Self.entry(.post, "https://api.example.com/notes", body: "plain text"))
        let replay = ReplayLoader(cassette: cassette)
        var person = HTTPRequest(method: .post, url: URL(string: "https://api.example.com/people")!)
        person.body = DataBody(Data(#"{ "tags": ["a", "b"], "name": "Zoë" }"#.utf8), contentType: "application/json")
        #expect(await replay.load(person).response?.status == .ok)

        var reordered = person
        reordered.body = DataBody(Data(#"{"name":"Zoë","tags":["b","a"]}"#.utf8), contentType: "application/json")
        #expect(await replay.load(reordered).error?.code == .notRecorded)  // array order is part of the value

        var note = HTTPRequest(method: .post, url: URL(string: "https://api.example.com/notes")!)
        note.body = DataBody(Data("plain text ".utf8))
        #expect(await replay.load(note).error?.code == .notRecorded)
        note.body = DataBody(Data("plain text".utf8))
        #expect(await replay.load(note).response?.status == .ok)

        let anyBody = ReplayLoader(cassette: cassette, matching: .init(body: false))
        note.body = DataBody(Data("something else".utf8))
        #expect(await anyBody.load(note).response?.status == .ok)
    }

    @Test func headerFieldsMatchOnlyWhenNamed() async throws {
        let cassette = Self.cassette(
            Self.entry(.get, "https://api.example.com/report", headers: ["Accept": "text/csv"], responseBody: "a,b"),
            Self.entry(
                .get, "https://api.example.com/report", headers: ["Accept": "application/json"], responseBody: "{}"))
        let byAccept = ReplayLoader(cassette: cassette, matching: .init(headerFields: ["accept"]))
        let json = try await byAccept.load(
            Self.get("https://api.example.com/report", headers: ["Accept": "application/json"])
        ).get()
        #expect(String(decoding: json.body, as: UTF8.self) == "{}")
        #expect(await byAccept.load(Self.get("https://api.example.com/report")).error?.code == .notRecorded)

        let ignoringHeaders = ReplayLoader(cassette: cassette)
        let first = try await ignoringHeaders.load(Self.get("https://api.example.com/report")).get()
        #expect(String(decoding: first.body, as: UTF8.self) == "a,b")
    }

    @Test func requestsWithFreshSecretsMatchRecordingsOfOldOnes() async throws {
        let mock = MockLoader().then(status: .ok, body: Data(#"{"access_token":"new-t0ken","expires_in":3600}"#.utf8))
        var refresh = HTTPRequest(method: .post, url: URL(string: "https://id.example.com/token?client_id=app")!)
        refresh.headers["Authorization"] = "Basic YXBwOnMzY3JldA=="
        refresh.body = FormBody([
            URLQueryItem(name: "grant_type", value: "refresh_token"),
            URLQueryItem(name: "refresh_token", value: "old-r3fresh"),
        ])
        let replay = ReplayLoader(
            cassette: await Self.record([refresh], from: mock), matching: .init(headerFields: ["Authorization"]))

        var later = HTTPRequest(method: .post, url: URL(string: "https://id.example.com/token?client_id=app")!)
        later.headers["Authorization"] = "Basic b3RoZXI6b3RoZXI="
        later.body = FormBody([
            URLQueryItem(name: "grant_type", value: "refresh_token"),
            URLQueryItem(name: "refresh_token", value: "another-r3fresh"),
        ])
        let response = try await replay.load(later).get()
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"access_token":"<redacted>","expires_in":3600}"#)

        var otherGrant = later
        otherGrant.body = FormBody([URLQueryItem(name: "grant_type", value: "authorization_code")])
        replay.rewind()
        #expect(await replay.load(otherGrant).error?.code == .notRecorded)
    }

    @Test func repeatedRequestsGetTheirRecordedAnswersInOrderAndEachOnce() async throws {
        let cassette = Self.cassette(
            Self.entry(.get, "https://api.example.com/flaky", status: .serviceUnavailable),
            Self.entry(.get, "https://api.example.com/other"),
            Self.entry(.get, "https://api.example.com/flaky", status: .ok))
        let replay = ReplayLoader(cassette: cassette)
        let chain = Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 3), budget: nil) --> replay
        let response = try await chain.load(Self.get("https://api.example.com/flaky")).get()
        #expect(response.status == .ok && response.request.attemptNumber == 2)
        #expect(replay.unusedEntries.map(\.request.url) == ["https://api.example.com/other"])
        let again = try #require(await replay.load(Self.get("https://api.example.com/flaky")).error)
        #expect(again.code == .notRecorded)
        #expect(again.message.contains("nearest recorded: entries[0] GET https://api.example.com/flaky (already used)"))

        replay.rewind()
        #expect(replay.unusedEntries.count == 3)
        #expect(await replay.load(Self.get("https://api.example.com/flaky")).response?.status == .serviceUnavailable)
    }

    @Test func inRecordedOrderEveryRequestMustBeTheNextOne() async throws {
        let cassette = Self.cassette(
            Self.entry(.get, "https://api.example.com/first"), Self.entry(.post, "https://api.example.com/second"))
        let replay = ReplayLoader(cassette: cassette, order: .inRecordedOrder)
        let early = try #require(
            await replay.load(HTTPRequest(method: .post, url: URL(string: "https://api.example.com/second")!)).error)
        #expect(early.code == .notRecorded)
        #expect(
            early.message.contains(
                "the next recorded one is entries[0] GET https://api.example.com/first (differs in method, URL)"))
        #expect(await replay.load(Self.get("https://api.example.com/first")).response != nil)
        #expect(
            await replay.load(HTTPRequest(method: .post, url: URL(string: "https://api.example.com/second")!)).response
                != nil)
    }

    @Test func repeatingLastAnswersAgainOnceTheMatchesAreUsed() async throws {
        let cassette = Self.cassette(
            Self.entry(.get, "https://api.example.com/job", responseBody: "running"),
            Self.entry(.get, "https://api.example.com/job", responseBody: "done"))
        let replay = ReplayLoader(cassette: cassette, order: .repeatingLast)
        var bodies: [String] = []
        for _ in 0..<4 {
            bodies.append(
                String(
                    decoding: try await replay.load(Self.get("https://api.example.com/job")).get().body, as: UTF8.self))
        }
        #expect(bodies == ["running", "done", "done", "done"])
        #expect(await replay.load(Self.get("https://api.example.com/elsewhere")).error?.code == .notRecorded)
    }

    @Test func anUnmatchedRequestNamesItselfAndTheNearestRecordings() async throws {
        let cassette = Self.cassette(
            Self.entry(.post, "https://api.example.com/people", body: #"{"name":"Ann"}"#),
            Self.entry(.get, "https://api.example.com/people/42"),
            Self.entry(.delete, "https://api.example.com/people/42"),
            Self.entry(.get, "https://api.example.com/status"))
        let replay = ReplayLoader(cassette: cassette)
        _ = await replay.load(Self.get("https://api.example.com/people/42"))

        var request = HTTPRequest(method: .post, url: URL(string: "https://api.example.com/people?token=s3cret")!)
        request.body = JSONBody(["name": "Zoë"])
        let error = try #require(await replay.load(request).error)
        #expect(error.code == .notRecorded)
        #expect(
            error.message == """
                ReplayLoader has no recorded answer for this request; nearest recorded: \
                entries[0] POST https://api.example.com/people with body {"name":"Ann"} (differs in URL, body), \
                entries[2] DELETE https://api.example.com/people/42 (differs in method, URL, body), \
                entries[3] GET https://api.example.com/status (differs in method, URL, body); \
                its body: {"name":"Zoë"}; 3 of 4 entries unused
                """)
        #expect(error.description.hasPrefix("notRecorded: POST https://api.example.com/people?token=<redacted> — "))
        #expect(!error.description.contains("s3cret"))
        #expect(replay.unusedEntries.count == 3)  // an unmatched request uses nothing
    }

    @Test func anEmptyCassetteSaysSo() async throws {
        let error = try #require(
            await ReplayLoader(cassette: Cassette()).load(Self.get("https://api.example.com/")).error)
        #expect(
            error.message
                == "ReplayLoader has no recorded answer for this request; the cassette is empty; 0 of 0 entries unused")
    }

    @Test func anInvalidOrCancelledRequestUsesNoEntry() async throws {
        let replay = ReplayLoader(cassette: Self.cassette(Self.entry(.get, "https://api.example.com/")))
        #expect(await replay.load(HTTPRequest(path: "/relative")).error?.code == .invalidRequest)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await replay.load(Self.get("https://api.example.com/"))
        }
        #expect(try await cancelled.finished().error?.code == .cancelled)
        #expect(replay.unusedEntries.count == 1)
    }

    @Test func duringAResetItRefusesAllButALoadersOwnResetTraffic() async throws {
        let replay = ReplayLoader(
            cassette: Self.cassette(
                Self.entry(.post, "https://id.example.com/revoke"), Self.entry(.get, "https://api.example.com/")))
        replay.beginResetPhase(.cancel)
        #expect(await replay.load(Self.get("https://api.example.com/")).error?.code == .resetInProgress)
        var revocation = HTTPRequest(method: .post, url: URL(string: "https://id.example.com/revoke")!)
        revocation.isPartOfReset = true
        #expect(await replay.load(revocation).response?.status == .ok)
        replay.endResetPhase()
        #expect(await replay.load(Self.get("https://api.example.com/")).response?.status == .ok)

        // Through the whole protocol: a reset neither rewinds the cassette nor leaves the loader refusing.
        await replay.reset()
        #expect(replay.unusedEntries.isEmpty)
        #expect(await replay.load(Self.get("https://api.example.com/")).error?.code == .notRecorded)
    }

    @Test func readsACassetteFileOrSaysWhatIsWrongWithIt() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("cassette.json")
        try Self.cassette(Self.entry(.get, "https://api.example.com/")).write(to: file)
        let replay = try ReplayLoader(contentsOf: file, matching: .init(method: false), order: .inRecordedOrder)
        #expect(
            await replay.load(HTTPRequest(method: .head, url: URL(string: "https://api.example.com/")!)).response != nil
        )

        try Data(#"{"version": 1}"#.utf8).write(to: file)
        let error = #expect(throws: CassetteError.self) { try ReplayLoader(contentsOf: file) }
        #expect(error?.description == "the cassette \(file.path) cannot be used: redaction: missing")
    }

    @Test func describesItsCassetteMatchingAndOrder() async throws {
        let replay = ReplayLoader(
            cassette: Self.cassette(
                Self.entry(.get, "https://api.example.com/"), Self.entry(.get, "https://api.example.com/2")),
            matching: .init(url: .exact, body: false, headerFields: ["Accept"]), order: .repeatingLast)
        _ = await replay.load(Self.get("https://api.example.com/"))
        #expect(
            replay.description == "ReplayLoader(entries: 2, used: 1, matching: method url Accept, order: repeatingLast)"
        )
        #expect(
            ReplayLoader(cassette: Cassette()).description.hasSuffix(
                "matching: method url (any query order) body, order: inAnyOrder)"))
    }

    @Test func deeplyNestedOrOddBodiesAreComparedWithoutTrapping() async throws {
        let bodies = [
            String(repeating: "[", count: 100_000),
            String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000),
            #"{"n": 1e400}"#, #"{"n": -0.0, "s": "\u0000"}"#, "[", "{\"a\":", "\u{FEFF}{}",
        ]
        let mock = MockLoader()
        for _ in bodies { mock.then(status: .ok) }
        var requests: [HTTPRequest] = []
        for body in bodies {
            var request = HTTPRequest(method: .post, url: URL(string: "https://api.example.com/odd")!)
            request.body = DataBody(Data(body.utf8), contentType: "application/json")
            requests.append(request)
        }
        let replay = ReplayLoader(cassette: await Self.record(requests, from: mock))
        for request in requests {
            #expect(await replay.load(request).response?.status == .ok)
        }
        #expect(replay.unusedEntries.isEmpty)
    }

    @Test func concurrentIdenticalRequestsEachGetOneRecordedAnswer() async throws {
        let count = 500
        let entries = (0..<count).map { Self.entry(.get, "https://api.example.com/same", responseBody: "\($0)") }
        let replay = ReplayLoader(
            cassette: Cassette(
                entries: entries.enumerated().map { index, entry in
                    var entry = entry
                    entry.sequence = index
                    return entry
                }))
        let bodies = await withTaskGroup(of: String.self) { group in
            for _ in 0..<count {
                group.addTask {
                    let result = await replay.load(Self.get("https://api.example.com/same"))
                    return String(decoding: result.response?.body ?? Data(), as: UTF8.self)
                }
            }
            var bodies: [String] = []
            for await body in group { bodies.append(body) }
            return bodies
        }
        #expect(Set(bodies) == Set((0..<count).map(String.init)))
        #expect(replay.unusedEntries.isEmpty)
    }
}

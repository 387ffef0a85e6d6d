import Foundation
import Testing

@testable import HTTP

/// A wall clock the test moves by hand.
final class TestNow: Sendable {
    private let date = Locked(Date(timeIntervalSince1970: 1_800_000_000.125))
    var value: Date { date.value }
    var now: @Sendable () -> Date { { [date] in date.value } }
    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

/// Holds loads until the test lets them through.
final class HandlerGate: Sendable {
    private let held = Locked<[CheckedContinuation<Void, Never>]>([])
    var count: Int { held.value.count }
    func wait() async { await withCheckedContinuation { continuation in held.withLock { $0.append(continuation) } } }
    func open() {
        for waiter in held.withLock({ held in
            defer { held = [] }; return held
        }) { waiter.resume() }
    }
}

@Suite(.noHang) struct RecorderTests {
    @Test func recordsTheRequestAsSentAndTheResponseWithSecretsRedacted() async throws {
        let clock = TestNow()
        let recorder = Recorder(now: clock.now)
        let mock = MockLoader().then { request in
            clock.advance(by: 0.042)
            return .success(
                HTTPResponse(
                    request: request, status: .ok,
                    headers: ["Content-Type": "application/json", "Set-Cookie": "session=c00kie; HttpOnly"],
                    body: Data(#"{"access_token":"t0ken-value","name":"Zoë"}"#.utf8)))
        }
        let chain = recorder --> mock
        var request = HTTPRequest(
            method: .post, host: "api.example.com", path: "/v1/login",
            query: [URLQueryItem(name: "api_key", value: "k3y"), URLQueryItem(name: "page", value: "2")],
            headers: ["Authorization": "Bearer s3cret-bearer"],
            body: FormBody([URLQueryItem(name: "user", value: "ann"), URLQueryItem(name: "password", value: "hunter2")])
        )
        request.fragment = "top"

        let response = try await chain.load(request).get()
        #expect(response.status == .ok)  // the caller gets the real response

        let entries = recorder.cassette.entries
        try #require(entries.count == 1)
        let entry = entries[0]
        #expect(entry.sequence == 0 && entry.attempt == 1 && entry.loadID == request.id)
        #expect(entry.startedAt == Date(timeIntervalSince1970: 1_800_000_000.125))
        #expect(abs(entry.duration.seconds - 0.042) < 0.000_001)
        #expect(entry.request.method == .post)
        #expect(entry.request.url == "https://api.example.com/v1/login?api_key=<redacted>&page=2")
        #expect(entry.request.headers["Authorization"] == "Bearer <redacted>")
        #expect(entry.request.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(entry.request.body == .text("user=ann&password=<redacted>"))
        #expect(entry.response?.status == .ok)
        #expect(entry.response?.headers["Set-Cookie"] == "<redacted>")
        #expect(entry.response?.body == .text(#"{"access_token":"<redacted>","name":"Zoë"}"#))
        #expect(entry.response?.url == nil && entry.failure == nil)

        let json = String(decoding: try recorder.cassette.jsonData(), as: UTF8.self)
        for secret in ["k3y", "s3cret-bearer", "hunter2", "c00kie", "t0ken-value", "#top"] {
            #expect(!json.contains(secret), "\(secret) reached the cassette")
        }
    }

    @Test func aBinaryBodyIsStoredAsItIsAndSurvivesTheFile() async throws {
        let bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0xFE])
        let recorder = Recorder()
        let chain = recorder --> MockLoader().then(status: .ok, headers: ["Content-Type": "image/png"], body: bytes)
        _ = await chain.load(
            HTTPRequest(method: .put, host: "api.example.com", path: "/avatar", body: DataBody(bytes)))

        let entry = try #require(recorder.cassette.entries.first)
        #expect(entry.request.body == .binary(bytes))
        #expect(entry.response?.body == .binary(bytes))
        let json = String(decoding: try recorder.cassette.jsonData(), as: UTF8.self)
        #expect(json.contains(#""base64" : "iVBORwD//g==""#))
        #expect(try Cassette(jsonData: recorder.cassette.jsonData()) == recorder.cassette)
    }

    @Test func failuresAreRecordedButCancelledRefusedAndInvalidLoadsAreNot() async throws {
        let recorder = Recorder()
        let refusal = HTTPResponse(request: HTTPRequest(host: "api.example.com"), status: .unauthorized)
        let mock = MockLoader()
            .then(failWith: .timedOut, message: "no answer for access_token=t0k3n")
            .then { request in
                .failure(HTTPError(.cannotAuthenticate, request: request, message: "refused", response: refusal))
            }
            .then(failWith: .cancelled)
            .then(failWith: .resetInProgress)
        let chain = recorder --> mock
        for path in ["/a", "/b", "/c", "/d"] {
            _ = await chain.load(HTTPRequest(host: "api.example.com", path: path))
        }
        _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/a b"))  // no handler: cannotConnect

        let entries = recorder.cassette.entries
        #expect(
            entries.map(\.request.url) == [
                "https://api.example.com/a", "https://api.example.com/b", "https://api.example.com/a%20b",
            ])
        #expect(
            entries[0].failure == Cassette.Failure(code: .timedOut, message: "no answer for access_token=<redacted>"))
        #expect(entries[0].response == nil)
        #expect(entries[1].failure?.code == .cannotAuthenticate && entries[1].response?.status == .unauthorized)
        #expect(entries[2].failure?.code == .cannotConnect)
        #expect(entries.map(\.sequence) == [0, 1, 4])
    }

    @Test func anInvalidRequestIsNotRecorded() async throws {
        let recorder = Recorder()
        let chain = recorder --> MockLoader().then(failWith: .invalidRequest)
        _ = await chain.load(HTTPRequest(path: "/relative"))
        #expect(recorder.cassette.entries.isEmpty)
    }

    @Test func eachAttemptOfARetriedLoadIsAnEntryOfTheSameLoad() async throws {
        let recorder = Recorder()
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .serviceUnavailable).then(status: .ok)
        let chain = Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 3), budget: nil) --> recorder --> mock
        let request = HTTPRequest(host: "api.example.com", path: "/flaky")
        #expect(try await chain.load(request).get().status == .ok)

        let entries = recorder.cassette.entries
        #expect(entries.map(\.attempt) == [1, 2, 3])
        #expect(entries.map(\.sequence) == [0, 1, 2])
        #expect(entries.allSatisfy { $0.loadID == request.id })
        #expect(entries.map { $0.response?.status } == [.serviceUnavailable, .serviceUnavailable, .ok])
    }

    @Test func theFileHoldsEveryEntryAsSoonAsItsLoadReturns() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("session.json")
        let recorder = Recorder(file: file)
        let chain = recorder --> MockLoader().then(status: .ok).then(status: .created).then(status: .noContent)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        for count in 1...3 {
            _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/\(count)"))
            let saved = try Cassette(contentsOf: file)
            #expect(saved.entries.count == count)
            #expect(saved == recorder.cassette)
        }
        #expect(recorder.writeError == nil)
        // Only the cassette is left in the directory: each write replaced the file whole.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["session.json"])
    }

    @Test func aFailedWriteDoesNotFailTheLoadAndIsReported() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("missing-folder/session.json")
        let recorder = Recorder(file: file)
        let chain = recorder --> MockLoader().then(status: .ok)
        #expect(try await chain.load(HTTPRequest(host: "api.example.com")).get().status == .ok)
        #expect(recorder.writeError != nil)
        #expect(throws: (any Error).self) { try recorder.save() }

        try FileManager.default.createDirectory(
            at: directory.file("missing-folder"), withIntermediateDirectories: true)
        try recorder.save()
        #expect(recorder.writeError == nil)
        #expect(try Cassette(contentsOf: file).entries.count == 1)
    }

    @Test func savingWithoutAFileNeedsOne() async throws {
        let directory = TemporaryDirectory()
        let recorder = Recorder()
        let chain = recorder --> MockLoader().then(status: .ok)
        _ = await chain.load(HTTPRequest(host: "api.example.com"))
        #expect(throws: CassetteError.self) { try recorder.save() }
        try recorder.save(to: directory.file("later.json"))
        #expect(try Cassette(contentsOf: directory.file("later.json")).entries.count == 1)
    }

    @Test func concurrentLoadsAreAllRecordedInArrivalOrder() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("concurrent.json")
        let recorder = Recorder(file: file)
        let mock = MockLoader()
        let count = 200
        for _ in 0..<count {
            mock.then { request in
                await Task.yield()
                return .success(HTTPResponse(request: request, status: .ok, body: Data(request.path.utf8)))
            }
        }
        let chain = recorder --> mock
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask { _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/\(index)")) }
            }
        }
        let entries = recorder.cassette.entries
        #expect(entries.map(\.sequence) == Array(0..<count))
        #expect(Set(entries.map(\.request.url)).count == count)
        #expect(entries.allSatisfy { $0.response?.body == .text(URL(string: $0.request.url)!.path) })
        #expect(try Cassette(contentsOf: file) == recorder.cassette)
    }

    @Test func aResetRefusesLoadsAndWaitsForTheRecordedOnes() async throws {
        let gate = HandlerGate()
        let probe = ResetPhaseProbe()
        let recorder = Recorder()
        let mock = MockLoader().then { request in
            await gate.wait()
            return .success(HTTPResponse(request: request, status: .ok))
        }
        mock.then(status: .accepted)
        let chain = probe --> recorder --> mock

        let inFlight = Task { await chain.load(HTTPRequest(host: "api.example.com", path: "/slow")) }
        try await eventually { gate.count == 1 }
        let resetDone = Locked(false)
        let reset = Task {
            await chain.reset()
            resetDone.withLock { $0 = true }
        }
        try await eventually { probe.hasBegun }
        let refused = await recorder.load(HTTPRequest(host: "api.example.com", path: "/during"))
        #expect(refused.error?.code == .resetInProgress)

        var revocation = HTTPRequest(host: "id.example.com", path: "/revoke")
        revocation.isPartOfReset = true
        #expect(await recorder.load(revocation).response?.status == .accepted)  // a loader's own reset traffic passes
        #expect(!resetDone.value)

        gate.open()
        try await reset.finished()
        #expect(try await inFlight.finished().response?.status == .ok)
        #expect(
            recorder.cassette.entries.map(\.request.url) == [
                "https://api.example.com/slow", "https://id.example.com/revoke",
            ])
    }

    @Test func describesItsFileAndEntries() async {
        let recorder = Recorder(file: URL(fileURLWithPath: "/tmp/cassette.json"))
        #expect(recorder.description == "Recorder(file: /tmp/cassette.json, entries: 0, redaction: standard)")
    }
}

/// Tells when a reset's first phase has begun.
final class ResetPhaseProbe: HTTPLoader, @unchecked Sendable {
    private let begun = Locked(false)
    var hasBegun: Bool { begun.value }
    override func failHeldLoads(_ mode: ResetMode) { begun.withLock { $0 = true } }
}

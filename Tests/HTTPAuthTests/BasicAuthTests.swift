import Foundation
import HTTP
import HTTPAuth
import Testing

@Suite(.noHang) struct BasicAuthTests {
    @Test func credentialsAreEncodedAsRFC7617Says() {
        // RFC 7617 §2: "Aladdin" / "open sesame"
        let credentials = BasicCredentials(username: "Aladdin", password: "open sesame")
        #expect(credentials.authorizationHeaderValue == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        // UTF-8, as §2.1 recommends: "test" / "123£"
        #expect(
            BasicCredentials(username: "test", password: "123£").authorizationHeaderValue == "Basic dGVzdDoxMjPCow==")
        #expect(!credentials.description.contains("open sesame"))
    }

    @Test func requestsThatNeedNoAuthenticationPassThroughUntouched() async {
        let delegate = ScriptedDelegate(answers: [ann])
        let mock = MockLoader().then(status: .ok)
        let chain = BasicAuth(origins: ["api.example.com"], delegate: delegate) --> mock
        _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/public"))
        #expect(mock.receivedRequests.first?.headers["Authorization"] == nil)
        #expect(delegate.timesAsked == 0)
    }

    @Test func asksTheDelegateOnceWhileManyRequestsWait() async throws {
        let delegate = ScriptedDelegate(answers: [ann], holdsAnswers: true)
        let mock = MockLoader()
        for _ in 0..<20 { mock.then(status: .ok) }
        let basic = BasicAuth(origins: ["api.example.com"], delegate: delegate)
        let chain = basic --> mock
        let loads = (0..<20).map { index in Task { await chain.load(basicRequest("/\(index)")) } }
        try await eventually("waiting \(basic.waitingCount), asked \(delegate.heldCount)") {
            basic.waitingCount == 20 && delegate.heldCount == 1
        }
        delegate.release()
        for load in loads { #expect(try await load.finished().response?.status == .ok) }
        #expect(delegate.timesAsked == 1)
        #expect(mock.receivedRequests.allSatisfy { $0.headers["Authorization"] == ann.authorizationHeaderValue })
        // Later requests reuse the credentials without asking.
        mock.then(status: .ok)
        _ = await chain.load(basicRequest())
        #expect(delegate.timesAsked == 1)
    }

    @Test func noDelegateOrNoCredentialsFailsEveryWaitingRequest() async throws {
        let withoutDelegate = BasicAuth(origins: ["api.example.com"]) --> MockLoader().then(status: .ok)
        let failed = await withoutDelegate.load(basicRequest())
        #expect(failed.error?.code == .cannotAuthenticate)
        #expect(failed.error?.message.contains("no delegate") == true)

        let delegate = ScriptedDelegate(answers: [nil], holdsAnswers: true)
        let basic = BasicAuth(origins: ["api.example.com"], delegate: delegate)
        let chain = basic --> MockLoader()
        let loads = (0..<5).map { _ in Task { await chain.load(basicRequest()) } }
        try await eventually("waiting \(basic.waitingCount), asked \(delegate.heldCount)") {
            basic.waitingCount == 5 && delegate.heldCount == 1
        }
        delegate.release()
        for load in loads { #expect(try await load.finished().error?.code == .cannotAuthenticate) }
        #expect(delegate.timesAsked == 1)
    }

    @Test func aWaitingRequestThatIsCancelledCompletesAtOnce() async throws {
        let delegate = ScriptedDelegate(answers: [ann], holdsAnswers: true)
        let basic = BasicAuth(origins: ["api.example.com"], delegate: delegate)
        let mock = MockLoader().then(status: .ok)
        let chain = basic --> mock
        let cancelled = Task { await chain.load(basicRequest("/cancelled")) }
        let kept = Task { await chain.load(basicRequest("/kept")) }
        try await eventually("waiting \(basic.waitingCount), asked \(delegate.heldCount)") {
            basic.waitingCount == 2 && delegate.heldCount == 1
        }
        cancelled.cancel()
        #expect(try await cancelled.finished().error?.code == .cancelled)  // before the delegate answers
        #expect(basic.waitingCount == 1)
        delegate.release()
        #expect(try await kept.finished().response?.status == .ok)
        #expect(mock.receivedRequests.map(\.path) == ["/kept"])
    }

    @Test func resetForgetsCredentialsAndFailsWaitingRequests() async throws {
        let delegate = ScriptedDelegate(answers: [ann, bob], holdsAnswers: true)
        let basic = BasicAuth(origins: ["api.example.com"], delegate: delegate)
        let counter = MockLoader().then(status: .ok)
        let chain = basic --> counter
        let waiting = Task { await chain.load(basicRequest()) }
        try await eventually("waiting \(basic.waitingCount), asked \(delegate.heldCount)") {
            basic.waitingCount == 1 && delegate.heldCount == 1
        }
        await chain.reset()
        #expect(try await waiting.finished().error?.code == .resetInProgress)
        delegate.release()  // the answer to the abandoned question is ignored

        let after = Task { await chain.load(basicRequest()) }
        try await eventually("waiting \(basic.waitingCount), asked \(delegate.heldCount)") { delegate.heldCount == 1 }
        delegate.release()
        #expect(try await after.finished().response?.status == .ok)
        #expect(counter.receivedRequests.last?.headers["Authorization"] == bob.authorizationHeaderValue)
        #expect(delegate.timesAsked == 2)
    }

    @Test func a401ForTheCurrentCredentialsAsksAgainAndReplaysOnce() async {
        let delegate = ScriptedDelegate(answers: [ann, bob])
        let mock = MockLoader().then(status: .unauthorized).then(status: .ok)
        let chain = BasicAuth(origins: ["api.example.com"], delegate: delegate) --> mock
        let result = await chain.load(basicRequest())
        #expect(result.response?.status == .ok)
        #expect(
            mock.receivedRequests.map { $0.headers["Authorization"] } == [ann, bob].map(\.authorizationHeaderValue))
        #expect(delegate.timesAsked == 2)
    }

    @Test func wrongCredentialsCannotLoop() async {
        let delegate = ScriptedDelegate(answers: [ann, ann, ann])
        let mock = MockLoader().then(status: .unauthorized).then(status: .unauthorized).then(status: .ok)
        let chain = BasicAuth(origins: ["api.example.com"], delegate: delegate) --> mock
        let result = await chain.load(basicRequest())
        #expect(result.response?.status == .unauthorized)  // replayed once, then the 401 is the answer
        #expect(mock.receivedRequests.count == 2)
        #expect(delegate.timesAsked == 2)
    }

    @Test func a401ForReplacedCredentialsIsReplayedWithoutAsking() async throws {
        // Two requests go out with ann's credentials; both get 401. The first makes the loader ask again
        // (bob); the second, whose credentials were already replaced, is replayed with bob without asking.
        let delegate = ScriptedDelegate(answers: [ann, bob, nil])
        let gate = Box<[CheckedContinuation<Void, Never>]>([])
        let mock = MockLoader()
        for _ in 0..<2 {
            mock.then { request in
                await withCheckedContinuation { continuation in gate.withLock { $0.append(continuation) } }
                return .success(HTTPResponse(request: request, status: .unauthorized))
            }
        }
        mock.then(status: .ok).then(status: .ok)
        let chain = BasicAuth(origins: ["api.example.com"], delegate: delegate) --> mock
        let first = Task { await chain.load(basicRequest("/first")) }
        let second = Task { await chain.load(basicRequest("/second")) }
        try await eventually { gate.value.count == 2 }
        gate.value[0].resume()  // one of them gets its 401 and makes the loader ask again, then replays
        try await eventually { mock.receivedRequests.count == 3 }
        gate.value[1].resume()  // the other gets its 401 for credentials already replaced
        #expect(try await first.finished().response?.status == .ok)
        #expect(try await second.finished().response?.status == .ok)
        #expect(delegate.timesAsked == 2)
        let sent = mock.receivedRequests.map { $0.headers["Authorization"] }
        #expect(sent.suffix(2) == [bob, bob].map(\.authorizationHeaderValue))
    }

    @Test func aRequestsOwnCredentialsWin() async {
        let delegate = ScriptedDelegate(answers: [ann])
        let mock = MockLoader().then(status: .ok)
        let chain = BasicAuth(origins: ["api.example.com"], delegate: delegate) --> mock
        var request = HTTPRequest(host: "elsewhere.example.org", path: "/")
        request.basicCredentials = bob
        _ = await chain.load(request)
        #expect(mock.receivedRequests.first?.headers["Authorization"] == bob.authorizationHeaderValue)
        #expect(delegate.timesAsked == 0)
    }

    @Test func givingUpAfterA401KeepsIt() async {
        let challenge: HTTPHeaders = ["WWW-Authenticate": "Basic realm=\"reports\""]
        let mock = MockLoader().then(status: .unauthorized, headers: challenge)
        let chain = BasicAuth(origins: ["api.example.com"], credentials: ann) --> mock  // no delegate to ask again
        let error = await chain.load(basicRequest()).error
        #expect(error?.code == .cannotAuthenticate)
        #expect(error?.response?.status == .unauthorized)
        #expect(error?.response?[header: "WWW-Authenticate"] == "Basic realm=\"reports\"")
        // The message says what happened: the server refused the credentials it was given.
        #expect(error?.message.contains("the server refused BasicAuth's credentials (HTTP 401)") == true)
        #expect(error?.message.contains("no delegate") == true)
        #expect(error?.underlyingError == nil)
    }

    @Test func credentialsAreNeverSentToAnotherHost() async {
        let mock = MockLoader().then(status: .ok)
        let chain = BasicAuth(origins: ["API.example.com"], credentials: ann) --> mock
        #expect(await chain.load(basicRequest(host: "api.EXAMPLE.com")).response?.status == .ok)
        let foreign = await chain.load(basicRequest(host: "evil.example.net"))
        #expect(foreign.error?.code == .cannotAuthenticate)
        #expect(foreign.error?.message.contains("not to https://evil.example.net") == true)
        #expect(mock.receivedRequests.count == 1)
    }
}

@Suite(.noHang, .enabled(if: httpbinURL != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct BasicAuthIntegrationTests {
    let base = httpbinURL!

    private func request(_ path: String) -> HTTPRequest {
        var request = HTTPRequest(url: base.appendingPathComponent(path))
        request.authenticationMethod = .basic
        return request
    }

    @Test func authenticatesAgainstHTTPBin() async throws {
        let delegate = ScriptedDelegate(answers: [BasicCredentials(username: "user", password: "passwd")])
        let chain = BasicAuth(origins: [try #require(Origin(base))], delegate: delegate) --> URLSessionLoader()
        let response = try await chain.load(request("/basic-auth/user/passwd")).get()
        #expect(response.status == .ok)
        let hidden = try await chain.load(request("/hidden-basic-auth/user/passwd")).get()
        #expect(hidden.status == .ok)
        #expect(delegate.timesAsked == 1)
    }

    @Test func wrongCredentialsAreReplacedAfterA401() async throws {
        let delegate = ScriptedDelegate(answers: [
            BasicCredentials(username: "user", password: "wrong"),
            BasicCredentials(username: "user", password: "passwd"),
        ])
        let chain = BasicAuth(origins: [try #require(Origin(base))], delegate: delegate) --> URLSessionLoader()
        let response = try await chain.load(request("/basic-auth/user/passwd")).get()
        #expect(response.status == .ok)
        #expect(delegate.timesAsked == 2)
    }

    @Test func hiddenBasicAuthAnswers404ToWrongCredentials() async throws {
        // httpbin's hidden variant answers 404, not 401, so the loader has no reason to ask again.
        let delegate = ScriptedDelegate(answers: [BasicCredentials(username: "user", password: "wrong")])
        let chain = BasicAuth(origins: [try #require(Origin(base))], delegate: delegate) --> URLSessionLoader()
        let response = try await chain.load(request("/hidden-basic-auth/user/passwd")).get()
        #expect(response.status == .notFound)
        #expect(delegate.timesAsked == 1)
    }
}

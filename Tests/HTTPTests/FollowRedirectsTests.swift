import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// A terminal whose loads wait until the test answers them, for reset and cancellation tests.
private final class AnsweringGate: HTTPLoader, @unchecked Sendable {
    private struct State {
        var waiting: [(request: HTTPRequest, continuation: CheckedContinuation<HTTPResult, Never>)] = []
        var arrivals: [HTTPRequest] = []
    }

    private let state = Locked(State())
    var arrivals: [HTTPRequest] { state.withLock { $0.arrivals } }
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                state.arrivals.append(request)
                state.waiting.append((request, continuation))
            }
        }
    }

    /// Answers the oldest waiting load with what `answer` makes of its request; it ignores cancellation.
    func answerOldest(_ answer: (HTTPRequest) -> HTTPResult) {
        let waiter = state.withLock { $0.waiting.isEmpty ? nil : $0.waiting.removeFirst() }
        guard let waiter else { return }
        waiter.continuation.resume(returning: answer(waiter.request))
    }
}

/// A terminal that answers the *n*th load (from 1) with what `answer` returns.
private final class ScriptedTerminal: HTTPLoader, @unchecked Sendable {
    private let count = Locked(0)
    private let answer: @Sendable (HTTPRequest, Int) -> HTTPResult
    init(_ answer: @escaping @Sendable (HTTPRequest, Int) -> HTTPResult) { self.answer = answer }
    override func load(_ request: HTTPRequest) async -> HTTPResult {
        let number = count.withLock { count in
            count += 1
            return count
        }
        return answer(request, number)
    }
}

@Suite(.noHang) struct FollowRedirectsTests {
    private static let start = URL(string: "https://api.example.com/start")!

    private static func redirect(_ status: HTTPStatus, to location: String) -> MockLoader {
        MockLoader().then(status: status, headers: ["Location": location])
    }

    // MARK: - RFC 9110 §15.4: methods and bodies

    private enum BodyKind: CaseIterable {
        case none, data, form, replayableStream, oneShotStream

        func make() -> any HTTPBody {
            switch self {
            case .none: EmptyBody()
            case .data: DataBody(Data("payload".utf8), contentType: "text/plain")
            case .form: FormBody(["q": "1"])
            case .replayableStream:
                StreamBody(length: 3, contentType: "text/plain") {
                    AsyncStream {
                        $0.yield(Data("abc".utf8)); $0.finish()
                    }
                }
            case .oneShotStream:
                StreamBody(
                    length: 3,
                    AsyncStream {
                        $0.yield(Data("abc".utf8)); $0.finish()
                    })
            }
        }
    }

    /// Random statuses × methods × body kinds against RFC 9110's table, written out independently here.
    @Test func methodsAndBodiesFollowRFC9110() async throws {
        let seed = SplitMix64.seed()
        print("FollowRedirectsTests.methodsAndBodiesFollowRFC9110: seed \(seed)")
        var random = SplitMix64(seed: seed)
        let methods: [HTTPMethod] = [
            .get, .head, .post, .put, .patch, .delete, .options, HTTPMethod(rawValue: "PROPFIND"),
        ]
        for _ in 0..<500 {
            let status = [300, 301, 302, 303, 304, 305, 306, 307, 308].randomElement(using: &random)!
            let method = methods.randomElement(using: &random)!
            let bodyKind = BodyKind.allCases.randomElement(using: &random)!
            let context = "seed \(seed): \(status) after \(method) with \(bodyKind)"
            var request = HTTPRequest(
                method: method, url: Self.start,
                headers: ["X-Keep": "1", "Content-Language": "en", "Content-Type": "text/plain"])
            request.body = bodyKind.make()
            let mock = Self.redirect(HTTPStatus(rawValue: status), to: "/next").then(status: .ok)

            let result = await (FollowRedirects() --> mock).load(request)

            let followed = [301, 302, 303, 307, 308].contains(status)
            let becomesGET = status == 303 ? method != .head : [301, 302].contains(status) && method == .post
            let dropsBody = status == 303 || becomesGET
            guard followed else {
                #expect(result.response?.status.rawValue == status, "\(context)")
                #expect(mock.receivedRequests.count == 1, "\(context)")
                continue
            }
            if !dropsBody && bodyKind == .oneShotStream {
                #expect(result.error?.code == .bodyNotReplayable, "\(context)")
                #expect(result.error?.response?.status.rawValue == status, "\(context)")
                #expect(result.error?.request.path == "/start", "\(context)")
                #expect(mock.receivedRequests.count == 1, "\(context)")
                continue
            }
            #expect(result.response?.status == .ok, "\(context)")
            try #require(mock.receivedRequests.count == 2, "\(context)")
            let next = mock.receivedRequests[1]
            #expect(next.path == "/next", "\(context)")
            #expect(next.method == (becomesGET ? .get : method), "\(context)")
            #expect(next.headers["X-Keep"] == "1", "\(context)")
            if dropsBody {
                #expect(next.body is EmptyBody, "\(context)")
                #expect(next.headers["Content-Type"] == nil && next.headers["Content-Language"] == nil, "\(context)")
            } else {
                #expect(type(of: next.body) == type(of: request.body), "\(context)")
                #expect(next.headers["Content-Type"] == "text/plain", "\(context)")
                #expect(next.headers["Content-Language"] == "en", "\(context)")
            }
        }
    }

    @Test func aBodyThatCannotBeSentAgainEndsWithAClearError() async throws {
        var upload = HTTPRequest(method: .put, url: Self.start)
        upload.body = StreamBody(AsyncStream { $0.finish() })
        let mock = Self.redirect(.temporaryRedirect, to: "https://uploads.example.com/put")

        let error = try #require(await (FollowRedirects() --> mock).load(upload).error)

        #expect(error.code == .bodyNotReplayable)
        #expect(error.response?.status == .temporaryRedirect)
        #expect(error.request.path == "/start")
        #expect(
            error.message
                == "the server answered 307 Temporary Redirect, which resends the body to "
                + "https://uploads.example.com/put, and the request's body (StreamBody) can be sent only once")
    }

    // MARK: - Location

    @Test func relativeLocationsResolveAgainstTheURLThatAnswered() async throws {
        // The environment below adds the host and a path prefix: the redirect is relative to what was sent.
        let mock = Self.redirect(.found, to: "../other/item?x=1")
            .then(status: .found, headers: ["Location": "//cdn.example.net/file"])
            .then(status: .ok)
        let chain =
            FollowRedirects()
            --> ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com", pathPrefix: "/v1"))
            --> mock

        let response = try await chain.load(HTTPRequest(path: "/items/42/detail")).get()

        #expect(
            mock.receivedRequests.map { $0.url?.absoluteString } == [
                "https://api.example.com/v1/items/42/detail", "https://api.example.com/v1/items/other/item?x=1",
                "https://cdn.example.net/file",
            ])
        #expect(response.url?.absoluteString == "https://cdn.example.net/file")
        #expect(response.request.host == "cdn.example.net")
    }

    @Test func theFragmentIsInheritedUnlessTheLocationHasOne() async throws {
        var request = HTTPRequest(url: URL(string: "https://api.example.com/a#section-2")!)
        request.fragment = "section-2"
        let mock = Self.redirect(.movedPermanently, to: "/b")
            .then(status: .found, headers: ["Location": "/c"])
            .then(status: .found, headers: ["Location": "/d#top"])
            .then(status: .ok)

        let response = try await (FollowRedirects() --> mock).load(request).get()

        #expect(mock.receivedRequests.map(\.fragment) == ["section-2", "section-2", "section-2", "top"])
        #expect(response.request.fragment == "top")
    }

    @Test(arguments: ["file:///etc/passwd", "javascript:alert(1)", "http://user:pw@evil.example/", "http://", "/%zz"])
    func anUnusableLocationEndsWithAnErrorCarryingTheRedirect(location: String) async throws {
        let mock = Self.redirect(.found, to: location)
        let error = try #require(await (FollowRedirects() --> mock).load(HTTPRequest(url: Self.start)).error)
        #expect(error.code == .unusableRedirect)
        #expect(error.response?.status == .found)
        #expect(error.response?.headers["Location"] == location)
        #expect(error.message.hasPrefix("the server answered 302 Found with the Location '\(location)', which "))
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func differingLocationFieldsAreUnusableAndRepeatedOnesAreFollowed() async throws {
        var differing = HTTPHeaders()
        differing.add("/a", for: "Location")
        differing.add("/b", for: "Location")
        let refused = await (FollowRedirects() --> MockLoader().then(status: .found, headers: differing))
            .load(HTTPRequest(url: Self.start))
        #expect(refused.error?.code == .unusableRedirect)
        #expect(refused.error?.message.hasSuffix("has 2 Location fields, which differ") == true)

        var repeated = HTTPHeaders()
        repeated.add("/a", for: "Location")
        repeated.add("/a", for: "Location")
        let mock = MockLoader().then(status: .found, headers: repeated).then(status: .ok)
        #expect(try await (FollowRedirects() --> mock).load(HTTPRequest(url: Self.start)).get().status == .ok)
    }

    @Test(arguments: [300, 301, 302, 303, 304, 305, 306, 307, 308, 399])
    func redirectsWithoutLocationAndOtherStatusesAreResponses(status: Int) async throws {
        // 300 and 304 are never followed, even with a Location; a followed status without one says nowhere to go.
        let withLocation = [300, 304, 305, 306, 399].contains(status)
        let headers: HTTPHeaders = withLocation ? ["Location": "/elsewhere"] : [:]
        let mock = MockLoader().then(status: HTTPStatus(rawValue: status), headers: headers, body: Data("page".utf8))
        let response = try await (FollowRedirects() --> mock).load(HTTPRequest(url: Self.start)).get()
        #expect(response.status.rawValue == status)
        #expect(response.body == Data("page".utf8))
        #expect(response.redirects.isEmpty)
        #expect(mock.receivedRequests.count == 1)
    }

    // MARK: - Limits

    @Test(arguments: [0, 1, 5, 20])
    func theHopLimitEndsWithAnErrorCarryingTheLastRedirect(limit: Int) async throws {
        let mock = MockLoader()
        for hop in 1...(limit + 5) { _ = mock.then(status: .found, headers: ["Location": "/hop/\(hop)"]) }
        let loader = limit == 20 ? FollowRedirects() : FollowRedirects(maximumNumberOfRedirects: limit)

        let error = try #require(await (loader --> mock).load(HTTPRequest(url: Self.start)).error)

        #expect(error.code == .tooManyRedirects)
        #expect(mock.receivedRequests.count == limit + 1)
        #expect(error.response?.status == .found)
        #expect(error.response?.headers["Location"] == "/hop/\(limit + 1)")
        #expect(error.response?.redirects.count == limit)
        #expect(error.request.path == (limit == 0 ? "/start" : "/hop/\(limit)"))
    }

    @Test func aNegativeLimitFollowsNothing() {
        #expect(FollowRedirects(maximumNumberOfRedirects: -3).maximumNumberOfRedirects == 0)
    }

    @Test func aRedirectBackToARequestOfTheSameLoadIsALoop() async throws {
        let mock = Self.redirect(.found, to: "/b")
            .then(status: .found, headers: ["Location": "HTTPS://API.example.com:443/start#again"])
        let error = try #require(await (FollowRedirects() --> mock).load(HTTPRequest(url: Self.start)).error)
        #expect(error.code == .redirectLoop)
        #expect(error.response?.headers["Location"] == "HTTPS://API.example.com:443/start#again")
        #expect(error.response?.redirects.map(\.status) == [.found])
        #expect(error.message.contains("GET https://API.example.com:443/start, which this load requested already"))
        #expect(mock.receivedRequests.map(\.path) == ["/start", "/b"])
    }

    @Test func theSameURLWithAnotherMethodIsNoLoop() async throws {
        // Post/Redirect/Get to the same URL: POST /form, 303, GET /form.
        let mock = Self.redirect(.seeOther, to: "").then(status: .ok)
        let post = HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com/form")!, body: FormBody(["a": "1"]))
        let response = try await (FollowRedirects() --> mock).load(post).get()
        #expect(response.status == .ok)
        #expect(mock.receivedRequests.map(\.method) == [.post, .get])
    }

    // MARK: - Credentials

    /// Random pairs of origins: the credentials the caller set go on exactly when the next hop has the same origin,
    /// and once removed they stay removed.
    @Test func credentialsGoOnlyToTheirOrigin() async throws {
        let seed = SplitMix64.seed()
        print("FollowRedirectsTests.credentialsGoOnlyToTheirOrigin: seed \(seed)")
        var random = SplitMix64(seed: seed)
        let places = [
            "https://api.example.com", "https://API.example.com:443", "https://api.example.com:8443",
            "http://api.example.com", "https://cdn.example.com", "http://api.example.com:80", "https://127.0.0.1",
        ]
        for _ in 0..<100 {
            let hops = (0..<3).map { _ in places.randomElement(using: &random)! }
            let context = "seed \(seed): \(hops)"
            let mock = MockLoader()
            for (index, place) in hops.dropFirst().enumerated() {
                _ = mock.then(status: .found, headers: ["Location": "\(place)/hop\(index + 1)"])
            }
            _ = mock.then(status: .ok)
            var request = HTTPRequest(url: URL(string: "\(hops[0])/hop0")!)
            request.headers = [
                "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic x",
                "X-Keep": "1", "X-API-Key": "k3y",
            ]

            _ = try await (FollowRedirects() --> mock).load(request).get()

            let origins = hops.map { Origin(URL(string: $0)!)! }
            try #require(mock.receivedRequests.count == hops.count, "\(context)")
            for (index, sent) in mock.receivedRequests.enumerated() {
                let keeps = origins[...index].allSatisfy { $0 == origins[0] }
                #expect(sent.headers["Authorization"] == (keeps ? "Bearer secret" : nil), "\(context) hop \(index)")
                #expect(sent.headers["Cookie"] == (keeps ? "session=1" : nil), "\(context) hop \(index)")
                #expect(sent.headers["Proxy-Authorization"] == (keeps ? "Basic x" : nil), "\(context) hop \(index)")
                #expect(sent.headers["X-API-Key"] == (keeps ? "k3y" : nil), "\(context) hop \(index)")
                #expect(sent.headers["X-Keep"] == "1", "\(context) hop \(index)")
            }
        }
    }

    // MARK: - Policy

    @Test func aRequestThatDoesNotFollowGetsTheRedirect() async throws {
        var request = HTTPRequest(url: Self.start)
        request.redirectPolicy = .doNotFollow
        let mock = Self.redirect(.found, to: "/next").then(status: .ok)
        let response = try await (FollowRedirects() --> mock).load(request).get()
        #expect(response.status == .found)
        #expect(response.headers["Location"] == "/next")
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func aClosureDecidesEachHop() async throws {
        let seen = Box<[String]>([])
        var request = HTTPRequest(url: Self.start)
        request.headers["Authorization"] = "Bearer secret"
        request.redirectPolicy = .decide { hop in
            seen.withLock {
                $0.append("\(hop.response.status.rawValue) → \(hop.nextRequest.path) after \(hop.redirects.count)")
            }
            switch hop.nextRequest.path {
            case "/one":
                var next = hop.nextRequest
                next.headers["X-Hop"] = "1"
                return .follow(next)
            case "/two":
                // Sent elsewhere by the closure: the carried credential is removed, a fresh one is kept.
                var next = hop.nextRequest
                next.host = "other.example.com"
                next.headers["Proxy-Authorization"] = "Basic for-other"
                return .follow(next)
            default:
                return .stop
            }
        }
        let mock = Self.redirect(.found, to: "/one")
            .then(status: .temporaryRedirect, headers: ["Location": "/two"])
            .then(status: .found, headers: ["Location": "/three"])

        let response = try await (FollowRedirects() --> mock).load(request).get()

        #expect(seen.value == ["302 → /one after 0", "307 → /two after 1", "302 → /three after 2"])
        #expect(response.status == .found && response.headers["Location"] == "/three")
        #expect(response.redirects.count == 2)
        let sent = mock.receivedRequests
        #expect(sent.map(\.path) == ["/start", "/one", "/two"])
        #expect(sent[1].headers["X-Hop"] == "1" && sent[1].headers["Authorization"] == "Bearer secret")
        #expect(sent[2].host == "other.example.com")
        #expect(sent[2].headers["Authorization"] == nil)
        #expect(sent[2].headers["Proxy-Authorization"] == "Basic for-other")
    }

    @Test func policiesCompareByCaseAndClosuresByIdentity() {
        let decide = RedirectPolicy.decide { _ in .stop }
        #expect(RedirectPolicy.follow == .follow && RedirectPolicy.follow != .doNotFollow)
        #expect(decide == decide)
        #expect(decide != .decide { _ in .stop })
        #expect(HTTPRequest().redirectPolicy == .follow)
    }

    // MARK: - What the caller sees

    @Test func theFinalResponseListsTheRedirectsFollowed() async throws {
        let mock = Self.redirect(.movedPermanently, to: "/b")
            .then(status: .seeOther, headers: ["Location": "https://cdn.example.com/c"])
            .then(status: .ok, body: Data("final".utf8))

        let response = try await (FollowRedirects() --> mock).load(HTTPRequest(url: Self.start)).get()

        #expect(response.body == Data("final".utf8))
        #expect(response.url?.absoluteString == "https://cdn.example.com/c")
        #expect(
            response.redirects == [
                HTTPMetrics.Redirect(
                    url: URL(string: "https://api.example.com/start"), status: .movedPermanently,
                    location: URL(string: "https://api.example.com/b")),
                HTTPMetrics.Redirect(
                    url: URL(string: "https://api.example.com/b"), status: .seeOther,
                    location: URL(string: "https://cdn.example.com/c")),
            ])
        #expect(response.metrics?.redirects == response.redirects)
        #expect(response.request.id == mock.receivedRequests[0].id)  // every hop is the same load
    }

    @Test func aStreamedRedirectsBodyIsStoppedBeforeTheNextHop() async throws {
        // A terminal that streams: the redirect's body is a stream the test keeps hold of.
        let redirectBody = Box<HTTPBodyStream?>(nil)
        let terminal = ScriptedTerminal { request, number in
            guard number == 1 else {
                var final = HTTPResponse(request: request, status: .ok)
                final.bodyStream = HTTPBodyStream(request: request, completeBody: Data("final body".utf8))
                return .success(final)
            }
            var redirect = HTTPResponse(request: request, status: .found, headers: ["Location": "/next"])
            let stream = HTTPBodyStream(request: request, completeBody: Data("redirect page".utf8))
            redirectBody.withLock { $0 = stream }
            redirect.bodyStream = stream
            return .success(redirect)
        }

        let streamed = try await (FollowRedirects() --> terminal).stream(HTTPRequest(url: Self.start)).get()

        #expect(streamed.head.status == .ok)
        #expect(try await streamed.body.collect() == Data("final body".utf8))
        let stopped = try #require(redirectBody.value)
        await #expect(throws: HTTPError.self) { try await stopped.collect() }
    }

    @Test func aDownloadsFileHoldsOnlyTheFinalBody() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "follow-redirects-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "report.pdf")
        let mock = MockLoader()
            .then(status: .found, headers: ["Location": "/files/report.pdf"], body: Data("<a href=…>moved</a>".utf8))
            .then(status: .ok, body: Data("%PDF-1.7".utf8))

        let response = try await (FollowRedirects() --> mock).download(HTTPRequest(url: Self.start), to: destination)
            .get()

        #expect(response.fileURL == destination)
        #expect(try Data(contentsOf: destination) == Data("%PDF-1.7".utf8))
        #expect(response.redirects.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["report.pdf"])
    }

    @Test func observersAndPrintLoaderSeeEachRedirect() async throws {
        let events = Box<[String]>([])
        let lines = Box<[String]>([])
        let mock = Self.redirect(.found, to: "/next").then(status: .ok)
        let chain =
            Observe { event in events.withLock { $0.append("\(event.kind) \(event.request.path)") } }
            --> PrintLoader { line in lines.withLock { $0.append(line) } }
            --> FollowRedirects()
            --> mock

        _ = try await chain.load(HTTPRequest(url: Self.start)).get()

        #expect(
            events.value == [
                "loadStarted /start", "attemptStarted /start", "attemptFinished /start", "redirectFollowed /next",
                "attemptStarted /next", "attemptFinished /next", "loadFinished /next",
            ])
        #expect(lines.value.count == 3)
        #expect(lines.value[1].hasPrefix("↪ #"))
        #expect(
            lines.value[1].hasSuffix(" 302 Found GET https://api.example.com/start → GET https://api.example.com/next"))
    }

    @Test func describesItsHopLimit() {
        #expect(
            (FollowRedirects(maximumNumberOfRedirects: 5) --> MockLoader()).description == """
                FollowRedirects(maximumNumberOfRedirects: 5, redaction: standard)
                --> MockLoader
                """)
        #expect(
            FollowRedirects(redaction: .standard.adding("X-Session")).description
                == "FollowRedirects(maximumNumberOfRedirects: 20, redaction: standard + x-session)")
    }

    // MARK: - Cancellation and reset

    @Test func aLoadCancelledDuringAHopSendsNoFurtherHop() async throws {
        let gate = AnsweringGate()
        let chain = FollowRedirects() --> gate
        let load = Task { await chain.load(HTTPRequest(url: Self.start)) }
        try await eventually { gate.waitingCount == 1 }
        load.cancel()
        gate.answerOldest { HTTPResponse(request: $0, status: .found, headers: ["Location": "/next"]).result }

        let result = try await load.finished()

        #expect(result.error?.code == .cancelled)
        #expect(gate.arrivals.count == 1)
    }

    @Test func atTheHeadOfAChainAResetWaitsForTheDecisionAboutAHopsAnswer() async throws {
        let gate = AnsweringGate()
        let follow = FollowRedirects()
        follow --> gate  // no ResetGuard above: FollowRedirects' own loads are counted by FollowRedirects
        let deciding = ThreadLatch()
        defer { deciding.release() }
        var request = HTTPRequest(url: Self.start)
        request.redirectPolicy = .decide { hop in
            deciding.arriveAndWait()
            return .follow(hop.nextRequest)
        }
        // On a thread of its own: the latch holds it while FollowRedirects decides.
        let inFlight = Task(executorPreference: DedicatedThreadExecutor()) { await follow.load(request) }
        try await eventually { gate.waitingCount == 1 }
        gate.answerOldest { HTTPResponse(request: $0, status: .found, headers: ["Location": "/next"]).result }
        try await eventually { deciding.arrivalCount == 1 }

        // The hop's answer has returned, so nothing is in flight below FollowRedirects: only its own count keeps
        // the reset from ending before the decision is made.
        let resetDone = Box(false)
        let reset = Task {
            await follow.reset()
            resetDone.withLock { $0 = true }
        }
        try await eventually { follow.isResetting }
        #expect(follow.participation.inFlight.runningCount == 1)
        #expect(gate.participation.inFlight.runningCount == 0)
        #expect(!resetDone.value, "a draining reset returned while the head decided about a hop")
        deciding.release()

        let result = try await inFlight.finished()
        try await reset.finished()
        #expect(!deciding.timedOut)
        #expect(result.error?.code == .resetInProgress)
        #expect(result.error?.response?.status == .found)
        #expect(gate.arrivals.map(\.path) == ["/start"])
    }

    @Test func duringAResetNewLoadsAreRefusedAndLoadsInFlightSendNoFurtherHop() async throws {
        let gate = AnsweringGate()
        let follow = FollowRedirects()
        // FollowRedirects heads the chain: the reset waits for its loads because it counts them itself (CI's load check
        // once saw the next hop go out after a reset that had ended between a hop's answer and the decision about it).
        let chain = follow --> gate
        let inFlight = Task { await chain.load(HTTPRequest(url: Self.start)) }
        try await eventually { gate.waitingCount == 1 }

        let resetDone = Box(false)
        let reset = Task {
            await chain.reset()
            resetDone.withLock { $0 = true }
        }
        try await eventually { follow.isResetting }
        let refused = await follow.load(HTTPRequest(url: Self.start))
        #expect(refused.error?.code == .resetInProgress)
        #expect(refused.error?.message == "refused by FollowRedirects while the chain resets")
        #expect(!resetDone.value, "a draining reset returned while a load was in flight")

        gate.answerOldest { HTTPResponse(request: $0, status: .found, headers: ["Location": "/next"]).result }
        let result = try await inFlight.finished()
        try await reset.finished()

        #expect(result.error?.code == .resetInProgress)
        #expect(result.error?.response?.status == .found)
        #expect(gate.arrivals.map(\.path) == ["/start"])

        // Afterwards the chain follows again; a reset's own traffic is followed during one.
        let after = Task { await chain.load(HTTPRequest(url: Self.start)) }
        try await eventually { gate.waitingCount == 1 }
        gate.answerOldest { HTTPResponse(request: $0, status: .found, headers: ["Location": "/next"]).result }
        try await eventually { gate.waitingCount == 1 }
        gate.answerOldest { HTTPResponse(request: $0, status: .ok).result }
        #expect(try await after.finished().response?.request.path == "/next")

        follow.beginResetPhase(.drain)
        var revocation = HTTPRequest(url: Self.start)
        revocation.isPartOfReset = true
        let revoked = Task { await chain.load(revocation) }
        try await eventually { gate.waitingCount == 1 }
        gate.answerOldest { HTTPResponse(request: $0, status: .found, headers: ["Location": "/revoke"]).result }
        try await eventually { gate.waitingCount == 1 }
        gate.answerOldest { HTTPResponse(request: $0, status: .ok).result }
        #expect(try await revoked.finished().response?.request.path == "/revoke")
        follow.endResetPhase()
    }
}

extension HTTPResponse {
    fileprivate var result: HTTPResult { .success(self) }
}

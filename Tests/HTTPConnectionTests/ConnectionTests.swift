import Foundation
import HTTP
import HTTPConnection
import Testing

@Suite(.noHang) struct ConnectionTests {
    @Test func requestsAndDecodesThroughTheChain() async throws {
        let mock = MockLoader().then(status: .ok, body: json(#"{"id":42,"name":"Zoë"}"#))
        let connection = Connection(loader: ApplyEnvironment(environment: .test) --> mock)
        let person = try await connection.request(.person(42))
        #expect(person == Person(id: 42, name: "Zoë"))
        #expect(mock.receivedRequests.first?.url?.absoluteString == "https://api.example.com/v1/people/42")
    }

    /// The value with its response: status, header fields and metrics, with no decode closure of one's own.
    @Test func aResponseCarriesTheValueWithItsStatusAndHeaders() async throws {
        let headers: HTTPHeaders = ["ETag": "\"v7\"", "RateLimit-Remaining": "41", "Cache-Status": "origin; fwd=miss"]
        let mock = MockLoader().then(status: .ok, headers: headers, body: json(#"{"id":42,"name":"Zoë"}"#))
        let connection = Connection(loader: ApplyEnvironment(environment: .test) --> mock)
        let person = try await connection.response(for: .person(42))
        #expect(person.value == Person(id: 42, name: "Zoë"))
        #expect(person.status == .ok)
        #expect(person.headers["ETag"] == "\"v7\"")
        #expect(person.headers["ratelimit-remaining"] == "41")
        #expect(person.response.request.url?.absoluteString == "https://api.example.com/v1/people/42")
        #expect(person.response.body == json(#"{"id":42,"name":"Zoë"}"#))
    }

    @Test func aResponseThrowsAsRequestDoes() async {
        let connection = Connection(
            loader: MockLoader().then(failWith: .cannotConnect).then(status: .notFound, headers: ["X-Trace": "t1"]))
        let transport = await #expect(throws: HTTPError.self) { try await connection.response(for: .person(1)) }
        #expect(transport?.code == .cannotConnect)
        let status = await #expect(throws: ResponseError.self) { try await connection.response(for: .person(1)) }
        #expect(status?.kind == .unacceptableStatus)
        #expect(status?.response.headers["X-Trace"] == "t1", "the error keeps the response that caused it")
    }

    @Test func theCompletionFormOfAResponseCompletesExactlyOnce() async throws {
        let connection = Connection(
            loader: MockLoader().then(
                status: .created, headers: ["Location": "/people/3"], body: json(#"{"id":3,"name":"C"}"#)))
        let results = Box<[Result<DecodedResponse<Person>, any Error>]>([])
        await withCheckedContinuation { continuation in
            connection.response(for: .person(3)) { result in
                results.withLock { $0.append(result) }
                continuation.resume()  // a second call would trap
            }
        }
        #expect(results.value.count == 1)
        let created = try #require(try results.value.first?.get())
        #expect(created.value == Person(id: 3, name: "C"))
        #expect(created.status == .created && created.headers["Location"] == "/people/3")
    }

    @Test func transportFailuresAreThrownAsHTTPErrors() async {
        let connection = Connection(loader: MockLoader().then(failWith: .cannotConnect))
        await #expect(throws: HTTPError.self) { try await connection.request(.person(1)) }
        let error = await #expect(throws: HTTPError.self) {
            try await Connection(loader: MockLoader()).request(.person(1))
        }
        #expect(error?.code == .cannotConnect)
    }

    @Test func statusAndDecodingFailuresAreThrownAsResponseErrors() async {
        let connection = Connection(loader: MockLoader().then(status: .notFound).then(status: .ok, body: json("{}")))
        let status = await #expect(throws: ResponseError.self) { try await connection.request(.person(1)) }
        #expect(status?.kind == .unacceptableStatus)
        let decoding = await #expect(throws: ResponseError.self) { try await connection.request(.person(1)) }
        #expect(decoding?.kind == .undecodable)
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        let mock = MockLoader().then { request in
            try? await Task.sleep(for: .seconds(30))
            return .success(HTTPResponse(request: request))
        }
        let connection = Connection(loader: mock)
        let call = Task { try await connection.request(.person(1)) }
        try await eventually { !mock.receivedRequests.isEmpty }
        call.cancel()
        let result = await call.result
        #expect((result.error as? HTTPError)?.code == .cancelled)
    }

    @Test func theCompletionAPICompletesExactlyOnce() async throws {
        let connection = Connection(loader: MockLoader().then(status: .ok, body: json(#"{"id":3,"name":"C"}"#)))
        let results = Box<[Result<Person, any Error>]>([])
        await withCheckedContinuation { continuation in
            connection.request(.person(3)) { result in
                results.withLock { $0.append(result) }
                continuation.resume()  // a second call would trap
            }
        }
        #expect(results.withLock { $0.count } == 1)
        #expect(try results.withLock { try $0[0].get() } == Person(id: 3, name: "C"))
    }

    @Test func theHandleCancelsAtOnce() async throws {
        let mock = MockLoader().then { request in
            try? await Task.sleep(for: .seconds(30))
            return .success(HTTPResponse(request: request))
        }
        let connection = Connection(loader: mock)
        let results = Box<[Result<Person, any Error>]>([])
        let task = connection.request(.person(1)) { result in results.withLock { $0.append(result) } }
        try await eventually { !mock.receivedRequests.isEmpty }
        task.cancel()
        #expect(results.withLock { $0.count } == 1)
        #expect((results.withLock { $0.first?.error } as? HTTPError)?.code == .cancelled)
        await mock.reset()
        #expect(results.withLock { $0.count } == 1)
    }

    @Test func resetPassesThroughToTheChain() async throws {
        // The first load's handler waits for `release`; the reset must refuse new loads while it drains that one,
        // wait for it, and leave the chain usable afterwards.
        let (release, releaser) = AsyncStream<Void>.makeStream()
        let mock = MockLoader()
            .then { request in
                for await _ in release { break }
                return .success(HTTPResponse(request: request, status: .ok, body: json(#"{"id":1,"name":"A"}"#)))
            }
            .then(status: .ok, body: json(#"{"id":2,"name":"B"}"#))
        let spy = ResetSpy()
        let connection = Connection(loader: ResetGuard() --> spy --> mock)
        let call = Task { try await connection.request(.person(1)) }
        try await eventually { !mock.receivedRequests.isEmpty }
        let resetReturned = Box(false)
        let reset = Task {
            await connection.reset()
            resetReturned.withLock { $0 = true }
        }
        try await eventually { spy.resetsBegun.withLock { $0 } == 1 }  // the reset reached the chain below the guard
        let during = await #expect(throws: HTTPError.self) { try await connection.request(.person(9)) }
        #expect(during?.code == .resetInProgress)
        #expect(!resetReturned.withLock { $0 }, "the reset returned while a load was still running in the mock")
        releaser.yield()
        try await reset.finished()
        #expect(try await call.finished().id == 1, "the load in flight was drained, not cancelled")
        #expect(try await connection.request(.person(2)).id == 2, "the chain takes loads again after the reset")
        #expect(mock.receivedRequests.count == 2, "the refused loads never reached the mock")
    }
}

/// Passes loads on and counts the resets that began here.
private final class ResetSpy: HTTPLoader, @unchecked Sendable {  // Sendable: its one property is a Box
    let resetsBegun = Box(0)

    override func failHeldLoads(_ mode: ResetMode) {
        resetsBegun.withLock { $0 += 1 }
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}

@Suite(.noHang, .enabled(if: httpbinURL != nil, "needs HTTPBIN_URL: run through scripts/test.sh"))
struct ConnectionEndToEndTests {
    struct Slideshow: Decodable, Sendable {
        struct Show: Decodable, Sendable {
            var title: String
            var slides: [Slide]
        }
        struct Slide: Decodable, Sendable { var title: String }
        var slideshow: Show
    }

    @Test func decodesARealResponseThroughTheFullChain() async throws {
        let environment = try #require(ServerEnvironment(baseURL: httpbinURL!))
        let chain =
            ResetGuard() --> ApplyEnvironment(environment: environment) --> Retry()
            --> Throttle(maximumNumberOfRequests: 4) --> URLSessionLoader()
        let connection = Connection(loader: chain)
        let slides = try await connection.request(Request<Slideshow>(underlyingRequest: HTTPRequest(path: "/json")))
        #expect(slides.slideshow.title == "Sample Slide Show")
        #expect(!slides.slideshow.slides.isEmpty)
        let missing = await #expect(throws: ResponseError.self) {
            try await connection.request(Request<Slideshow>(underlyingRequest: HTTPRequest(path: "/status/404")))
        }
        #expect(missing?.status == .notFound)
    }
}

/// Server-Sent Events through `Connection`: raw, and decoded element by element.
@Suite(.noHang) struct ConnectionEventsTests {
    struct Price: Decodable, Sendable, Equatable {
        var symbol: String
        var price: Double
    }

    static let eventStream: HTTPHeaders = ["Content-Type": "text/event-stream"]

    @Test func eventsAreDecodedAsTheElementTypeAndOtherTypesSkipped() async throws {
        let body = """
            event: price
            data: {"symbol":"A","price":1.5}

            event: heartbeat
            data: {}

            event: price
            data: {"symbol":"B",
            data:  "price":2}


            """
        let mock = MockLoader().then(status: .ok, headers: Self.eventStream, body: Data(body.utf8)).then(
            status: .noContent)
        let connection = Connection(loader: mock)
        var received: [Price] = []
        let prices = Request<Price>(underlyingRequest: HTTPRequest(host: "h", path: "/prices"))
        for try await price in connection.events(for: prices, eventType: "price", reconnectionDelay: .zero) {
            received.append(price)
        }
        #expect(received == [Price(symbol: "A", price: 1.5), Price(symbol: "B", price: 2)])
    }

    @Test func anEventThatDoesNotDecodeEndsTheStreamWithTheDecodersErrorInAResponseError() async throws {
        let mock = MockLoader().then(status: .ok, headers: Self.eventStream, body: Data("data: not json\n\n".utf8))
        var iterator = Connection(loader: mock).events(
            for: Request<Price>(underlyingRequest: HTTPRequest(host: "h", path: "/p"))
        ).makeAsyncIterator()
        let error = await #expect(throws: ResponseError.self) { _ = try await iterator.next() }
        #expect(error?.underlyingError is DecodingError)
        #expect(error?.response.body == Data("not json".utf8))
    }

    @Test func eventsAsTextAndAWholeBodyAsItsFirstEvent() async throws {
        let body = Data("event: hello\nid: 9\ndata: world\n\ndata: again\n\n".utf8)
        let mock = MockLoader()
            .then(status: .ok, headers: Self.eventStream, body: body)
            .then(status: .noContent)
            .then(status: .ok, headers: Self.eventStream, body: body)
            .then(status: .ok, headers: Self.eventStream, body: Data("data: unterminated".utf8))
        let connection = Connection(loader: mock)
        let request = HTTPRequest(host: "h", path: "/e")
        var texts: [String] = []
        for try await text in connection.events(
            for: Request<String>(underlyingRequest: request), reconnectionDelay: .zero)
        {
            texts.append(text)
        }
        #expect(texts == ["world", "again"])
        let first = try await connection.request(Request<ServerSentEvent>(underlyingRequest: request))
        #expect(first == ServerSentEvent(type: "hello", data: "world", lastEventID: "9"))
        let error = await #expect(throws: ResponseError.self) {
            try await connection.request(Request<ServerSentEvent>(underlyingRequest: request))
        }
        #expect(error?.kind == .undecodable)
    }

    @Test func rawEventsKeepTheirTypeAndID() async throws {
        let mock = MockLoader()
            .then(status: .ok, headers: Self.eventStream, body: Data("event: hello\nid: 9\ndata: world\n\n".utf8))
            .then(status: .noContent)
        var received: [ServerSentEvent] = []
        for try await event in Connection(loader: mock).events(
            for: Request<ServerSentEvent>(underlyingRequest: HTTPRequest(host: "h", path: "/e")),
            reconnectionDelay: .zero)
        {
            received.append(event)
        }
        #expect(received == [ServerSentEvent(type: "hello", data: "world", lastEventID: "9")])
        #expect(mock.receivedRequests.last?.headers["Last-Event-ID"] == "9")
    }
}

/// Paginated listings through `Connection`: `Link: rel="next"` by default, a rule of one's own otherwise.
@Suite(.noHang) struct ConnectionPagesTests {
    struct ItemsPage: Decodable, Sendable, Equatable {
        var items: [Int]
        var nextCursor: String?
    }

    static func itemsRequest(cursor: String? = nil) -> Request<ItemsPage> {
        Request(
            underlyingRequest: HTTPRequest(
                path: "/items", query: cursor.map { [URLQueryItem(name: "cursor", value: $0)] } ?? []))
    }

    static func page(_ items: [Int], cursor: String? = nil) -> Data {
        Data(#"{"items":\#(items),"nextCursor":\#(cursor.map { "\"\($0)\"" } ?? "null")}"#.utf8)
    }

    @Test func linkNextIsFollowedThroughTheWholeChainUntilThereIsNone() async throws {
        let mock = MockLoader()
            .then(status: .ok, headers: ["Link": #"</v1/items?page=2>; rel="next""#], body: Self.page([1, 2]))
            .then(status: .serviceUnavailable)  // retried by Retry: each page is a load through the chain
            .then(
                status: .ok, headers: ["Link": #"<https://api.example.com/v1/items?page=3>; rel="next""#],
                body: Self.page([3])
            )
            .then(status: .ok, headers: ["Link": #"</v1/items?page=1>; rel="first""#], body: Self.page([4]))
        // No delay between attempts: nothing waits on a clock.
        let connection = Connection(
            loader: ApplyEnvironment(environment: .test)
                --> Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 2)) --> mock)
        var items: [Int] = []
        for try await page in connection.pages(for: Self.itemsRequest()) { items += page.items }
        #expect(items == [1, 2, 3, 4])
        #expect(
            mock.receivedRequests.map { $0.url?.absoluteString ?? "" } == [
                "https://api.example.com/v1/items", "https://api.example.com/v1/items?page=2",
                "https://api.example.com/v1/items?page=2", "https://api.example.com/v1/items?page=3",
            ])
    }

    @Test func aCursorRuleMakesTheNextRequestFromTheLastResponse() async throws {
        let mock = MockLoader()
            .then(status: .ok, body: Self.page([1], cursor: "c2"))
            .then(status: .ok, body: Self.page([2], cursor: "c3"))
            .then(status: .ok, body: Self.page([3]))
        let connection = Connection(loader: ApplyEnvironment(environment: .test) --> mock)
        let pages = connection.pages(for: Self.itemsRequest()) { last in
            last.value.nextCursor.map { Self.itemsRequest(cursor: $0).underlyingRequest }
        }
        var collected: [ItemsPage] = []
        for try await page in pages { collected.append(page) }
        #expect(collected.flatMap(\.items) == [1, 2, 3])
        #expect(mock.receivedRequests.map { $0.query.first?.value } == [nil, "c2", "c3"])
    }

    @Test func aRuleThatLeadsBackToALoadedPageEndsTheListingWithAnError() async throws {
        let mock = MockLoader()
            .then(status: .ok, headers: ["Link": "</v1/items?page=2>; rel=next"], body: Self.page([1]))
            .then(status: .ok, headers: ["Link": "</v1/items>; rel=next"], body: Self.page([2]))
        let connection = Connection(loader: ApplyEnvironment(environment: .test) --> mock)
        var iterator = connection.pages(for: Self.itemsRequest()).makeAsyncIterator()
        #expect(try await iterator.next()?.items == [1])
        let error = await #expect(throws: HTTPError.self) { _ = try await iterator.next() }
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("go round forever") == true)
        #expect(mock.receivedRequests.count == 2)
    }

    @Test func aPageThatFailsThrowsAsRequestDoes() async throws {
        let mock = MockLoader()
            .then(status: .ok, headers: ["Link": "</v1/items?page=2>; rel=next"], body: Self.page([1]))
            .then(status: .notFound)
        let connection = Connection(loader: ApplyEnvironment(environment: .test) --> mock)
        var iterator = connection.pages(for: Self.itemsRequest()).makeAsyncIterator()
        _ = try await iterator.next()
        let error = await #expect(throws: ResponseError.self) { _ = try await iterator.next() }
        #expect(error?.kind == .unacceptableStatus)
    }
}

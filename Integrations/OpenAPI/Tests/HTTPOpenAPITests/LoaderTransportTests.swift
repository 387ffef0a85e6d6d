import Foundation
@_spi(Transport) import HTTP
import HTTPAuth
import HTTPOpenAPI
import HTTPTypes
import OpenAPIRuntime
import Testing

/// A generated client over `LoaderTransport`, with MockLoader (or a terminal of the tests') at the end of the chain.
@Suite(.timeLimit(.minutes(1)))
struct LoaderTransportTests {
    let serverURL = URL(string: "https://api.example.com/v1")!

    func client(_ loader: HTTPLoader) -> Client {
        Client(serverURL: serverURL, transport: LoaderTransport(loader: loader))
    }

    // MARK: - Requests and responses

    @Test func anOperationIsOneLoadThroughTheChainCarryingItsOperationID() async throws {
        let mock = MockLoader().then(
            status: .ok, headers: jsonHeaders, body: echo(url: "https://api.example.com/v1/get"))
        let client = client(mock)

        let output = try await withDeadline { try await client.getAnything(query: .init(q: "Zoë & co")) }

        #expect(try output.ok.body.json.url == "https://api.example.com/v1/get")
        let sent = try #require(mock.receivedRequests.first)
        #expect(mock.receivedRequests.count == 1)
        #expect(sent.openAPIOperationID == "getAnything")
        #expect(sent.method == .get)
        #expect(sent.scheme == "https" && sent.host == "api.example.com" && sent.path == "/v1/get")
        #expect(sent.query == [URLQueryItem(name: "q", value: "Zoë & co")])
        #expect(sent.headers["Accept"] == "application/json")
    }

    @Test func requestsNotMadeByAGeneratedClientHaveNoOperationID() {
        #expect(HTTP.HTTPRequest(path: "/get").openAPIOperationID == nil)
    }

    @Test func aServerURLWithoutAHostMakesARelativeRequestThatApplyEnvironmentCompletes() async throws {
        let mock = MockLoader().then(
            status: .ok, headers: jsonHeaders, body: echo(url: "https://api.example.com/v2/get"))
        let chain =
            ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com", pathPrefix: "/v2")) --> mock
        let client = Client(serverURL: URL(string: "/")!, transport: LoaderTransport(loader: chain))

        _ = try await withDeadline { try await client.getAnything() }

        #expect(mock.receivedRequests.first?.url?.absoluteString == "https://api.example.com/v2/get")
    }

    @Test func aServerURLEndingInASlashDoesNotDoubleIt() async throws {
        let mock = MockLoader().then(status: .ok, headers: jsonHeaders, body: echo(url: "https://api.example.com/get"))
        let client = Client(
            serverURL: URL(string: "https://api.example.com/")!, transport: LoaderTransport(loader: mock))

        _ = try await withDeadline { try await client.getAnything() }

        #expect(mock.receivedRequests.first?.url?.absoluteString == "https://api.example.com/get")
    }

    @Test func statusesReachTheGeneratedCodeAsResponses() async throws {
        let mock = MockLoader().then(status: .notFound).then(status: .serviceUnavailable).then(status: 418)
        let client = client(mock)

        let notFound = try await withDeadline { try await client.getStatus(path: .init(code: 404)) }
        let unavailable = try await withDeadline { try await client.getStatus(path: .init(code: 503)) }
        let teapot = try await withDeadline { try await client.getStatus(path: .init(code: 418)) }

        #expect(notFound == .notFound(.init()))
        #expect(unavailable == .serviceUnavailable(.init()))
        guard case .undocumented(let statusCode, _) = teapot else {
            Issue.record("expected an undocumented response, got \(teapot)")
            return
        }
        #expect(statusCode == 418)
        #expect(mock.receivedRequests.map(\.path) == ["/v1/status/404", "/v1/status/503", "/v1/status/418"])
    }

    @Test func theChainsErrorIsTheClientErrorsUnderlyingErrorUnchanged() async throws {
        let mock = MockLoader().then(failWith: .cannotConnect, message: "no route to api.example.com")
        let client = client(mock)

        let error = await #expect(throws: ClientError.self) {
            try await withDeadline { try await client.getAnything() }
        }

        #expect(error?.operationID == "getAnything")
        let failure = try #require(error?.underlyingError as? HTTPError)
        #expect(failure.code == .cannotConnect)
        #expect(failure.message == "no route to api.example.com")
        #expect(failure.request.openAPIOperationID == "getAnything")
    }

    @Test func aStatusHTTPTypesCannotRepresentFailsTheCallInsteadOfTrapping() async throws {
        let mock = MockLoader().then(status: 1000)
        let client = client(mock)

        let error = await #expect(throws: ClientError.self) {
            try await withDeadline { try await client.getStatus(path: .init(code: 200)) }
        }

        #expect(error.flatMap(chainError)?.code == .invalidResponse)
    }

    @Test func responseHeaderFieldsReachTheGeneratedCode() async throws {
        let mock = MockLoader().then(
            status: .ok, headers: ["Content-Type": "application/json", "Cache-Status": "Upstream; hit"],
            body: echo(url: "https://api.example.com/v1/cache/60"))
        let client = client(mock)

        let output = try await withDeadline { try await client.getCached(path: .init(seconds: 60)) }

        #expect(try output.ok.headers.cacheStatus == "Upstream; hit")
    }

    @Test func headerFieldsQueryAndBodyLengthCrossAsTheyAre() async throws {
        let mock = MockLoader().then { request in
            var headers: HTTPHeaders = ["Content-Type": "text/plain"]
            headers.add("a=1", for: "Set-Cookie")
            headers.add("b=2", for: "Set-Cookie")
            return .success(HTTPResponse(request: request, status: .ok, headers: headers))
        }
        let transport = LoaderTransport(loader: mock)
        var request = HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/upload?x=1&y=a%20b")
        request.headerFields.append(HTTPField(name: .accept, value: "application/json"))
        request.headerFields.append(HTTPField(name: .accept, value: "text/plain"))
        request.headerFields[HTTPField.Name("X-Trace")!] = "abc"

        let (response, _) = try await withDeadline { [request] in
            try await transport.send(
                request, body: OpenAPIRuntime.HTTPBody("hello"), baseURL: self.serverURL, operationID: "upload")
        }

        let sent = try #require(mock.receivedRequests.first)
        #expect(sent.method == .post)
        #expect(sent.percentEncodedPath == "/v1/upload")
        #expect(sent.percentEncodedQuery == "x=1&y=a%20b")
        #expect(sent.headers.values(for: "Accept") == ["application/json", "text/plain"])
        #expect(sent.headers["X-Trace"] == "abc")
        #expect((sent.body as? StreamBody)?.length == 5)
        #expect(sent.body.isReplayable)
        #expect(response.headerFields[values: .setCookie] == ["a=1", "b=2"])
    }

    @Test func aHEADResponseHasNoBodyAndItsTransferIsStopped() async throws {
        let terminal = StreamingTerminal(bufferLimit: 16)
        let transport = LoaderTransport(loader: terminal)

        let (response, body) = try await withDeadline {
            try await transport.send(
                HTTPTypes.HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/get"), body: nil,
                baseURL: self.serverURL, operationID: "headAnything")
        }

        #expect(response.status == .ok)
        #expect(body == nil)
        #expect(terminal.transfers.value.first?.cancelled.value == true)
    }

    // MARK: - Request bodies

    @Test func aRequestBodyStreamsIntoTheChainBeforeTheCallerHasProducedAllOfIt() async throws {
        let (chunks, producer) = AsyncStream<OpenAPIRuntime.HTTPBody.ByteChunk>.makeStream()
        let received = Box<[String]>([])
        let mock = MockLoader().then { request in
            do {
                for try await chunk in try #require(try request.bodySource()).chunks() {
                    received.withLock { $0.append(String(decoding: chunk, as: UTF8.self)) }
                }
            } catch {
                return .failure(HTTPError(.invalidRequest, request: request, underlyingError: error))
            }
            return .success(
                HTTPResponse(request: request, status: .ok, headers: jsonHeaders, body: echo(url: "/anything")))
        }
        let client = client(mock)
        producer.yield(ArraySlice("first ".utf8))

        let call = Task {
            try await client.postAnything(body: .binary(OpenAPIRuntime.HTTPBody(chunks, length: .unknown)))
        }
        // The terminal reads the first chunk while the rest is still to come: the body is not collected first.
        try await eventually("received \(received.value)") { received.value == ["first "] }
        producer.yield(ArraySlice("second".utf8))
        producer.finish()

        _ = try await withDeadline { try await call.value.ok }
        #expect(received.value == ["first ", "second"])
    }

    @Test func retryResendsABodyThatCanBeIteratedAgain() async throws {
        let bodies = Box<[String]>([])
        let mock = MockLoader()
            .then { request in
                let text = await bodyText(of: request)
                bodies.withLock { $0.append(text) }
                return .success(HTTPResponse(request: request, status: .serviceUnavailable))
            }
            .then { request in
                let text = await bodyText(of: request)
                bodies.withLock { $0.append(text) }
                return .success(
                    HTTPResponse(request: request, status: .ok, headers: jsonHeaders, body: echo(url: "/anything")))
            }
        let chain =
            operationPolicies(["postAnything": { $0.isIdempotent = true }])
            --> Retry(strategy: RetryServiceUnavailable(), budget: nil) --> mock
        let client = client(chain)
        let body = OpenAPIRuntime.HTTPBody("hello")
        #expect(body.iterationBehavior == .multiple)

        let output = try await withDeadline { try await client.postAnything(body: .binary(body)) }

        _ = try output.ok
        #expect(bodies.value == ["hello", "hello"])
        #expect(mock.receivedRequests.map(\.attemptNumber) == [1, 2])
        #expect(mock.receivedRequests.allSatisfy { $0.body.isReplayable })
    }

    @Test func retryDoesNotResendABodyThatCanBeIteratedOnlyOnce() async throws {
        let bodies = Box<[String]>([])
        let mock = MockLoader()
            .then { request in
                let text = await bodyText(of: request)
                bodies.withLock { $0.append(text) }
                return .success(HTTPResponse(request: request, status: .serviceUnavailable))
            }
            .then(status: .ok, headers: jsonHeaders, body: echo(url: "/anything"))
        let chain =
            operationPolicies(["postAnything": { $0.isIdempotent = true }])
            --> Retry(strategy: RetryServiceUnavailable(), budget: nil) --> mock
        let client = client(chain)
        let (chunks, producer) = AsyncStream<OpenAPIRuntime.HTTPBody.ByteChunk>.makeStream()
        producer.yield(ArraySlice("hello".utf8))
        producer.finish()
        let body = OpenAPIRuntime.HTTPBody(chunks, length: .known(5))
        #expect(body.iterationBehavior == .single)

        let error = await #expect(throws: ClientError.self) {
            try await withDeadline { try await client.postAnything(body: .binary(body)) }
        }

        // The retry fails honestly: one attempt was sent, with the whole body, and nothing was sent empty.
        let failure = try #require(error.flatMap(chainError))
        #expect(failure.code == .bodyNotReplayable)
        #expect(failure.response?.status == .serviceUnavailable)
        #expect(bodies.value == ["hello"])
        #expect(mock.receivedRequests.count == 1)
        #expect(mock.pendingHandlerCount == 1)
    }

    // MARK: - Response bodies

    @Test func aResponseBodyStreamsToTheGeneratedCodeWithBackpressure() async throws {
        let terminal = StreamingTerminal(bufferLimit: 4, contentLength: 11)
        let client = client(terminal)

        let output = try await withDeadline { try await client.streamBytes(path: .init(count: 11)) }

        // The call returned with the head, before the producer had produced a byte of the body.
        let transfer = try #require(terminal.transfers.value.first)
        #expect(!transfer.stream.isFinished)
        let body = try output.ok.body.binary
        #expect(body.iterationBehavior == .single)
        #expect(body.length == .known(11))

        let (permits, permit) = AsyncStream<Void>.makeStream()
        let taken = Box<[Int]>([])
        let consumer = Task { () -> Result<Int, any Error> in
            do {
                var iterator = body.makeAsyncIterator()
                for await _ in permits {
                    guard let chunk = try await iterator.next() else { break }
                    taken.withLock { $0.append(chunk.count) }
                }
                return .success(taken.value.reduce(0, +))
            } catch {
                return .failure(error)
            }
        }
        defer { consumer.cancel() }

        // More than the stream's limit, and the consumer does not read: the producer is told to pause.
        transfer.stream.deliver(Data(repeating: 1, count: 8))
        #expect(transfer.pauses.value == [true])
        // The consumer takes the chunk: the producer is told to go on.
        permit.yield()
        try await eventually("took \(taken.value), pauses \(transfer.pauses.value)") {
            taken.value == [8] && transfer.pauses.value == [true, false]
        }
        transfer.stream.deliver(Data(repeating: 2, count: 3))
        permit.yield()
        try await eventually("took \(taken.value)") { taken.value == [8, 3] }
        transfer.stream.finish()
        permit.yield()
        permit.finish()

        #expect(try await consumer.finished(within: standardDeadline).get() == 11)
        #expect(!transfer.cancelled.value)
    }

    @Test func cancellingTheTaskThatReadsAResponseBodyStopsTheTransfer() async throws {
        let terminal = StreamingTerminal(bufferLimit: 1024)
        let client = client(terminal)
        let output = try await withDeadline { try await client.streamBytes(path: .init(count: 1_000_000)) }
        let body = try output.ok.body.binary
        let transfer = try #require(terminal.transfers.value.first)
        transfer.stream.deliver(Data(repeating: 1, count: 100))

        let firstChunk = Box(false)
        let consumer = Task { () -> Result<Int, any Error> in
            do {
                var count = 0
                for try await chunk in body {
                    count += chunk.count
                    firstChunk.withLock { $0 = true }
                }
                return .success(count)
            } catch {
                return .failure(error)
            }
        }
        try await eventually { firstChunk.value }
        consumer.cancel()

        let result = try await consumer.finished(within: standardDeadline)
        #expect((result.failure as? HTTPError)?.code == .cancelled)
        #expect(transfer.cancelled.value)
    }

    @Test func serverSentEventsReachTheGeneratedCodeOneByOneAsTheyArrive() async throws {
        let terminal = StreamingTerminal(bufferLimit: 1024, contentType: "text/event-stream")
        let client = client(terminal)

        let output = try await withDeadline { try await client.getNumbers(query: .init(count: 3)) }
        let transfer = try #require(terminal.transfers.value.first)
        let events = try output.ok.body.textEventStream.asDecodedServerSentEventsWithJSONData(
            of: Components.Schemas.Number.self)
        let received = Box<[Int]>([])
        let consumer = Task { () -> Result<[String?], any Error> in
            do {
                var ids: [String?] = []
                for try await event in events {
                    ids.append(event.id)
                    received.withLock { $0.append(event.data?.n ?? -1) }
                }
                return .success(ids)
            } catch {
                return .failure(error)
            }
        }
        defer { consumer.cancel() }

        transfer.stream.deliver(Data("event: number\nid: 1\ndata: {\"n\": 1}\n\n".utf8))
        // The first event reaches the caller while the server has not sent the next.
        try await eventually("received \(received.value)") { received.value == [1] }
        #expect(!transfer.stream.isFinished)
        transfer.stream.deliver(Data("event: number\nid: 2\ndata: {\"n\": 2}\n\n".utf8))
        try await eventually("received \(received.value)") { received.value == [1, 2] }
        transfer.stream.deliver(Data("event: number\nid: 3\ndata: {\"n\": 3}\n\n".utf8))
        transfer.stream.finish()

        #expect(try await consumer.finished(within: standardDeadline).get() == ["1", "2", "3"])
        #expect(received.value == [1, 2, 3])
    }

    @Test func aBufferedOperationsBodyIsInMemoryAndCanBeReadTwice() async throws {
        let mock = MockLoader().then(status: .ok, headers: jsonHeaders, body: echo(url: "/get"))
        let transport = LoaderTransport(configuration: .init(loader: mock, httpBodyProcessingMode: .buffered))

        let (response, body) = try await withDeadline {
            try await transport.send(
                HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/get"), body: nil,
                baseURL: self.serverURL, operationID: "getAnything")
        }

        #expect(mock.receivedRequests.first?.responseDelivery == .buffered)
        #expect(response.status == .ok)
        #expect(response.headerFields[.contentType] == "application/json")
        let bufferedBody = try #require(body)
        #expect(bufferedBody.iterationBehavior == .multiple)
        #expect(bufferedBody.length == .known(Int64(echo(url: "/get").count)))
        #expect(try await collect(bufferedBody) == [UInt8](echo(url: "/get")))
        #expect(try await collect(bufferedBody) == [UInt8](echo(url: "/get")))
    }

    // MARK: - Cancellation and reset

    @Test func cancellingTheCallingTaskCancelsTheLoadWhichCompletesOnce() async throws {
        let started = Box(false)
        let mock = MockLoader().then { request in
            started.withLock { $0 = true }
            try? await Task.sleep(for: .seconds(3600))
            return .success(HTTPResponse(request: request, status: .ok))
        }
        let counter = CountingLoader()
        let client = client(counter --> mock)

        let call = Task { () -> Result<Operations.GetDelayed.Output, any Error> in
            do { return .success(try await client.getDelayed(path: .init(seconds: 10))) } catch {
                return .failure(error)
            }
        }
        try await eventually { started.value }
        call.cancel()

        let result = try await call.finished(within: standardDeadline)
        #expect(chainError(try #require(result.failure))?.code == .cancelled)
        #expect(counter.resultCount == 1)
        #expect(counter.results.value.first?.error?.code == .cancelled)
    }

    @Test func aResetFailsACallWaitingInTheChainOnce() async throws {
        let mock = MockLoader().then(status: .serviceUnavailable)
        let retry = Retry(strategy: RetryServiceUnavailable(delay: .seconds(3600)), budget: nil)
        let counter = CountingLoader()
        let chain = counter --> retry --> mock
        let client = client(chain)

        let call = Task { () -> Result<Operations.GetStatus.Output, any Error> in
            do { return .success(try await client.getStatus(path: .init(code: 503))) } catch { return .failure(error) }
        }
        try await eventually("waiting: \(retry.waitingCount)") { retry.waitingCount == 1 }
        try await withDeadline { await chain.reset() }

        let result = try await call.finished(within: standardDeadline)
        #expect(chainError(try #require(result.failure))?.code == .resetInProgress)
        #expect(counter.resultCount == 1)
        #expect(mock.receivedRequests.count == 1)
    }

    @Test func aCancellingResetFailsACallInFlightOnce() async throws {
        let started = Box(false)
        let mock = MockLoader().then { request in
            started.withLock { $0 = true }
            try? await Task.sleep(for: .seconds(3600))
            return .success(HTTPResponse(request: request, status: .ok))
        }
        let counter = CountingLoader()
        let chain = counter --> mock
        let client = client(chain)

        let call = Task { () -> Result<Operations.GetDelayed.Output, any Error> in
            do { return .success(try await client.getDelayed(path: .init(seconds: 10))) } catch {
                return .failure(error)
            }
        }
        try await eventually { started.value }
        try await withDeadline { await chain.reset(mode: .cancel) }

        let result = try await call.finished(within: standardDeadline)
        #expect(chainError(try #require(result.failure))?.code == .cancelled)
        #expect(counter.resultCount == 1)
    }

    // MARK: - Policies per operation

    @Test func aCacheAnswersABufferedOperationFromItsStore() async throws {
        let mock = MockLoader().then(
            status: .ok, headers: ["Content-Type": "application/json", "Cache-Control": "max-age=60"],
            body: echo(url: "https://api.example.com/v1/cache/60"))
        let counter = CountingLoader()
        let chain = Cache() --> counter --> mock
        let transport = LoaderTransport(
            configuration: .init(loader: chain) { metadata in
                var overrides = LoaderTransport.Configuration.RequestOverrides.empty
                if metadata.operationID == "getCached" { overrides.httpBodyProcessingMode = .buffered }
                return overrides
            })
        let client = Client(serverURL: serverURL, transport: transport)

        let first = try await withDeadline { try await client.getCached(path: .init(seconds: 60)) }
        let second = try await withDeadline { try await client.getCached(path: .init(seconds: 60)) }

        #expect(counter.loadCount == 1)
        #expect(try first.ok.headers.cacheStatus?.contains("stored") == true)
        #expect(try second.ok.headers.cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(try second.ok.body.json.url == "https://api.example.com/v1/cache/60")
    }

    @Test func aCacheLetsStreamedOperationsPass() async throws {
        let headers: HTTPHeaders = ["Content-Type": "application/json", "Cache-Control": "max-age=60"]
        let body = echo(url: "https://api.example.com/v1/cache/60")
        let mock = MockLoader().then(status: .ok, headers: headers, body: body).then(
            status: .ok, headers: headers, body: body)
        let client = client(Cache() --> mock)

        _ = try await withDeadline { try await client.getCached(path: .init(seconds: 60)) }
        _ = try await withDeadline { try await client.getCached(path: .init(seconds: 60)) }

        #expect(mock.receivedRequests.count == 2)
    }

    @Test func anOperationPolicyAuthenticatesOnlyItsOperation() async throws {
        let credentials = BasicCredentials(username: "zoe", password: "secret")
        let mock = MockLoader()
            .then(status: .ok, headers: jsonHeaders, body: Data(#"{"authenticated":true,"user":"zoe"}"#.utf8))
            .then(status: .ok, headers: jsonHeaders, body: echo(url: "/get"))
        let chain =
            operationPolicies(["getBasicAuth": { $0.authenticationMethod = .basic }])
            --> Auth(loaders: [.basic: BasicAuth(origins: ["api.example.com"], credentials: credentials)]) --> mock
        let client = client(chain)

        let output = try await withDeadline {
            try await client.getBasicAuth(path: .init(user: "zoe", password: "secret"))
        }
        _ = try await withDeadline { try await client.getAnything() }

        #expect(try output.ok.body.json.user == "zoe")
        #expect(
            mock.receivedRequests.map { $0.headers["Authorization"] } == [credentials.authorizationHeaderValue, nil])
    }
}

let jsonHeaders: HTTPHeaders = ["Content-Type": "application/json"]

/// An httpbin-like echo of a request to `url`.
func echo(url: String) -> Data {
    Data(#"{"url":"\#(url)","headers":{"Host":"api.example.com"},"args":{}}"#.utf8)
}

/// The request's body as text, read the way a transport reads it; a marker when it cannot be read.
func bodyText(of request: HTTP.HTTPRequest) async -> String {
    do {
        guard let source = try request.bodySource() else { return "" }
        var data = Data()
        for try await chunk in source.chunks() { data.append(chunk) }
        return String(decoding: data, as: UTF8.self)
    } catch {
        return "<unreadable: \(error)>"
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A terminal whose response bodies the test produces: each load is answered with a `200` at once, and its body
/// streams from an ``HTTPBodyStream`` the test feeds, recording when the stream pauses the producer and whether it
/// cancelled the transfer.
// Safety: its state is in Boxes, behind locks.
final class StreamingTerminal: HTTPLoader, @unchecked Sendable {
    struct Transfer: Sendable {
        let stream: HTTPBodyStream
        /// What the stream asked the producer: `true` to pause, `false` to go on.
        let pauses: Box<[Bool]>
        let cancelled: Box<Bool>
    }

    let bufferLimit: Int
    /// The `Content-Length` the responses state, if any.
    let contentLength: Int?
    let contentType: String
    let transfers = Box<[Transfer]>([])

    init(bufferLimit: Int, contentLength: Int? = nil, contentType: String = "application/octet-stream") {
        self.bufferLimit = bufferLimit
        self.contentLength = contentLength
        self.contentType = contentType
    }

    override func load(_ request: HTTP.HTTPRequest) async -> HTTPResult {
        guard request.responseDelivery == .stream else {
            return .failure(HTTPError(.invalidRequest, request: request, message: "StreamingTerminal only streams"))
        }
        let stream = HTTPBodyStream(request: request, bufferLimit: bufferLimit)
        let transfer = Transfer(stream: stream, pauses: Box([]), cancelled: Box(false))
        stream.connect(
            cancel: { transfer.cancelled.withLock { $0 = true } },
            pause: { paused in transfer.pauses.withLock { $0.append(paused) } })
        transfers.withLock { $0.append(transfer) }
        var response = HTTPResponse(
            request: request, status: .ok, headers: ["Content-Type": contentType])
        if let contentLength { response.headers["Content-Length"] = String(contentLength) }
        response.bodyStream = stream
        return .success(response)
    }
}

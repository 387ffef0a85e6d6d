import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(.noHang) struct URLSessionLoaderTests {
    @Test func anInvalidRequestFailsBeforeAnythingIsSent() async {
        // Port 1 on loopback is closed: had the request been sent it would fail with cannotConnect instead.
        let loader = URLSessionLoader()
        let request = HTTPRequest(scheme: "http", host: "127.0.0.1", port: 1, headers: ["X-A": "1\r\nX-Injected: 2"])
        let result = await loader.load(request)
        #expect(result.error?.code == .invalidRequest)
        #expect(result.error?.message.contains("inject") == true)
    }

    /// A body whose own header fields would inject headers.
    private struct InjectingBody: HTTPBody {
        var additionalHeaders: [String: String] { ["Content-Type": "text/plain\r\nX-Injected: 1"] }
        func encode() throws -> Data { Data("x".utf8) }
    }

    @Test func aBodysHeaderFieldsAreCheckedToo() throws {
        let request = HTTPRequest(method: .post, host: "example.com", headers: ["Accept": "a/b"], body: InjectingBody())
        let error = try #require(throws: HTTPError.self) { try request.urlRequest() }
        #expect(error.code == .invalidRequest)
        #expect(error.message.hasPrefix("the body's header field 'Content-Type'"))
        #expect(error.message.contains("inject"))
        // The request's own field of that name wins, and the body's is never sent.
        var overridden = request
        overridden.headers["Content-Type"] = "text/plain"
        #expect(try overridden.urlRequest().value(forHTTPHeaderField: "Content-Type") == "text/plain")
    }

    @Test func unsupportedSchemesAreInvalid() async {
        let result = await URLSessionLoader().load(HTTPRequest(scheme: "ftp", host: "example.com"))
        #expect(result.error?.code == .invalidRequest)
        #expect(result.error?.message.contains("'ftp' is not supported") == true)
    }

    @Test func aClosedPortFailsWithCannotConnect() async {
        let request = HTTPRequest(scheme: "http", host: "127.0.0.1", port: 1, path: "/")
        let result = await URLSessionLoader().load(request)
        #expect(result.error?.code == .cannotConnect)
        #expect((result.error?.underlyingError as? URLError)?.code == .cannotConnectToHost)
        #expect(result.error?.description.contains("GET http://127.0.0.1:1/") == true)
    }

    @Test func anAlreadyCancelledTaskSendsNothing() async throws {
        let load = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await URLSessionLoader().load(HTTPRequest(scheme: "http", host: "127.0.0.1", port: 1))
        }
        #expect(try await load.finished().error?.code == .cancelled)
    }

    @Test func buildsTheURLRequestWithBodyHeadersAndTimeout() throws {
        var request = HTTPRequest(method: .post, host: "example.com", path: "/p", headers: ["Accept": "a/b"])
        request.body = JSONBody(["k": "v"])
        request.timeout = .milliseconds(1_500)
        let urlRequest = try request.urlRequest()
        #expect(urlRequest.url?.absoluteString == "https://example.com/p")
        #expect(urlRequest.httpMethod == "POST")
        #expect(urlRequest.value(forHTTPHeaderField: "Accept") == "a/b")
        #expect(urlRequest.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")
        #expect(urlRequest.httpBody == Data(#"{"k":"v"}"#.utf8))
        #if canImport(FoundationNetworking)
        #expect(urlRequest.timeoutInterval == 2)
        #else
        #expect(urlRequest.timeoutInterval == 1.5)
        #endif
    }

    @Test func fieldsWithTheSameNameAreSentAsOneJoinedByCommas() throws {
        var request = HTTPRequest(host: "example.com", headers: ["Accept": "a/b", "X-Trace": "1"])
        request.headers.add("c/d", for: "accept")
        let urlRequest = try request.urlRequest()
        #expect(urlRequest.value(forHTTPHeaderField: "Accept") == "a/b,c/d")
        #expect(urlRequest.value(forHTTPHeaderField: "X-Trace") == "1")
        #expect(urlRequest.allHTTPHeaderFields?.count == 2)
        #expect(urlRequest.httpMethod == "GET")
    }

    @Test func everyMethodReachesTheURLRequest() throws {
        for method in [HTTPMethod.get, .head, .post, .put, .patch, .delete, .options, HTTPMethod(rawValue: "PURGE")] {
            #expect(try HTTPRequest(method: method, host: "example.com").urlRequest().httpMethod == method.rawValue)
        }
    }

    @Test func responseHeaderFieldsAreConvertedWhenFirstReadAndSortedByName() async throws {
        let url = try #require(URL(string: "https://example.com/p"))
        let urlResponse = try #require(
            HTTPURLResponse(
                url: url, statusCode: 201, httpVersion: "HTTP/1.1",
                headerFields: ["x-b": "2", "Content-Type": "text/plain", "X-a": "1"]))
        let response = HTTPResponse(request: HTTPRequest(url: url), urlResponse: urlResponse, body: Data("hi".utf8))
        #expect(response.status == .created)
        #expect(response.body == Data("hi".utf8))
        #expect(response.url == url)
        // Read from many tasks at once: the first read converts, every read sees the same fields.
        let reads = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<32 { group.addTask { response.headers.map(\.name) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(reads) == [["Content-Type", "X-a", "x-b"]])
        #expect(response[header: "x-a"] == "1")

        var changed = response
        changed.headers["X-a"] = "3"
        #expect(changed[header: "X-a"] == "3")
        #expect(changed[header: "Content-Type"] == "text/plain")
        #expect(response[header: "X-a"] == "1")  // the original keeps its fields
    }

    @Test(arguments: [
        (URLError.Code.cancelled, HTTPError.Code.cancelled), (.timedOut, .timedOut),
        (.cannotConnectToHost, .cannotConnect), (.notConnectedToInternet, .cannotConnect),
        (.networkConnectionLost, .cannotConnect), (.cannotFindHost, .cannotConnect),
        (.secureConnectionFailed, .insecureConnection), (.serverCertificateUntrusted, .insecureConnection),
        (.badServerResponse, .invalidResponse), (.cannotParseResponse, .invalidResponse),
        (.userAuthenticationRequired, .cannotAuthenticate), (.badURL, .invalidRequest), (.unknown, .unknown),
    ])
    func mapsURLErrorsKeepingTheOriginal(urlCode: URLError.Code, expected: HTTPError.Code) {
        let error = HTTPError(request: HTTPRequest(host: "example.com"), transportError: URLError(urlCode))
        #expect(error.code == expected)
        #expect((error.underlyingError as? URLError)?.code == urlCode)
    }

    @Test func theDefaultConfigurationKeepsNoHiddenState() {
        let configuration = URLSessionLoader.defaultConfiguration
        #expect(configuration.httpShouldSetCookies == false)
        #expect(configuration.httpCookieStorage == nil)
        #expect(configuration.urlCache == nil)
        #expect(configuration.urlCredentialStorage == nil)
    }

    #if canImport(FoundationNetworking)
    @Test func onLinuxTheSessionRunsItsCallbacksAtOnceOnTheCallingThread() {
        #expect(URLSessionLoader().session.delegateQueue is ImmediateQueue)
        let queue = ImmediateQueue()
        let ran = Box<[String]>([])
        queue.addOperation { ran.withLock { $0.append("block") } }
        queue.addOperation(BlockOperation { ran.withLock { $0.append("operation") } })
        queue.addOperations([BlockOperation { ran.withLock { $0.append("batch") } }], waitUntilFinished: false)
        queue.addBarrierBlock { ran.withLock { $0.append("barrier") } }
        // Each ran before its `add` returned, in order.
        #expect(ran.value == ["block", "operation", "batch", "barrier"])
    }
    #endif

    /// What the session delegate answers URLSession about a redirect from `from` to `to`: the request to follow
    /// with, `nil` to refuse; `.none` when it did not answer.
    private func answerToRedirect(from: String, to: String, status: Int) -> URLRequest?? {
        let delegate = SessionDelegate()
        let session = URLSession(configuration: .ephemeral)
        let task = session.dataTask(with: URL(string: from)!)
        delegate.register(
            TransferContext(request: HTTPRequest(url: URL(string: from)!), totalBytesToSend: nil), for: task)
        let next = URLRequest(url: URL(string: to)!)
        let response = HTTPURLResponse(
            url: URL(string: from)!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Location": to])!
        let answer = Box<URLRequest??>(.none)
        delegate.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: next) { request in
            answer.withLock { $0 = .some(request) }
        }
        session.invalidateAndCancel()
        return answer.value
    }

    @Test(arguments: [
        ("https://a.example/x", "https://a.example/y", 302),
        ("https://a.example/x", "http://b.example/y", 301),
        ("https://a.example/x", "https://a.example/y", 307),
        ("https://a.example/x", "https://a.example/y", 308),
    ])
    func theSessionDelegateRefusesEveryRedirect(from: String, to: String, status: Int) {
        // Answered at once with nil: URLSession ends the task with the 3xx, and FollowRedirects decides.
        let answer = answerToRedirect(from: from, to: to, status: status)
        #expect(answer != nil, "the delegate did not answer")
        #expect(answer.flatMap { $0 } == nil)
    }
}

import Foundation
import Testing

@testable import HTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct URLSessionLoaderTests {
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

    @Test func anAlreadyCancelledTaskSendsNothing() async {
        let load = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await URLSessionLoader().load(HTTPRequest(scheme: "http", host: "127.0.0.1", port: 1))
        }
        #expect(await load.value.error?.code == .cancelled)
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

    @Test func originsDefaultThePortFromTheScheme() {
        #expect(Origin(URL(string: "https://A.example.com/x")) == Origin(URL(string: "https://a.example.com:443/y")))
        #expect(Origin(URL(string: "http://example.com")) != Origin(URL(string: "https://example.com")))
        #expect(Origin(URL(string: "http://localhost:80")) != Origin(URL(string: "http://127.0.0.1:80")))
        #expect(Origin(URL(string: "http://h:8080")) != Origin(URL(string: "http://h:8081")))
    }
}

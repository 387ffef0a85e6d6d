import Foundation
import HTTP
import Testing

private enum Priority: HTTPRequestOption {
    static let defaultOptionValue = 5
}

private enum Tag: HTTPRequestOption {
    static let defaultOptionValue: String? = nil
}

@Suite struct HTTPRequestTests {
    @Test func defaultsAreAGetOverHTTPSWithNoHost() {
        let request = HTTPRequest()
        #expect(request.method == .get)
        #expect(request.scheme == "https")
        #expect(request.host == nil)
        #expect(request.path == "/")
        #expect(request.body.isEmpty)
        #expect(request.url == nil)  // relative until an environment supplies the host
        #expect(request.description == "GET /")
    }

    @Test func buildsTheURLFromParts() {
        let request = HTTPRequest(
            method: .post,
            host: "api.example.com",
            port: 8443,
            path: "/people/Zoë Smith",
            query: [URLQueryItem(name: "q", value: "a&b c")]
        )
        #expect(request.url?.absoluteString == "https://api.example.com:8443/people/Zo%C3%AB%20Smith?q=a%26b%20c")
        #expect(request.path == "/people/Zoë Smith")
        #expect(request.query == [URLQueryItem(name: "q", value: "a&b c")])
    }

    /// The URL is joined from its parts when it can be and built with `URLComponents` otherwise; both ways
    /// must give the URL `URLComponents` gives.
    @Test(
        arguments: [
            ("https", "api.example.com", nil, "/a%20b", "x=1&y=%26", nil),
            ("http", "127.0.0.1", 8080, "", nil, nil),
            ("http", "[::1]", 443, "/p", nil, nil),
            ("https", "example.com", nil, "/p", nil, "section 2"),
            ("https", "bücher.example", nil, "/", "q=1", nil),
            ("HTTPS", "Example.COM", 8443, "/Case", nil, nil),
        ] as [(String, String, Int?, String, String?, String?)])
    func theURLIsTheOneURLComponentsBuilds(
        scheme: String, host: String, port: Int?, path: String, query: String?, fragment: String?
    ) throws {
        var request = HTTPRequest(scheme: scheme, host: host, port: port)
        request.percentEncodedPath = path
        request.percentEncodedQuery = query
        request.fragment = fragment
        var components = URLComponents()
        components.scheme = scheme
        components.host = host
        components.port = port
        components.percentEncodedPath = path
        components.percentEncodedQuery = query
        components.fragment = fragment
        let expected = try #require(components.url)
        #expect(request.url == expected)
        #expect(request.url?.absoluteString == expected.absoluteString)
    }

    @Test func initialisesFromAURL() throws {
        let url = try #require(URL(string: "http://localhost:8080/a/b?x=1&y=2#frag"))
        let request = HTTPRequest(method: .delete, url: url, headers: ["Accept": "*/*"])
        #expect(request.scheme == "http")
        #expect(request.host == "localhost")
        #expect(request.port == 8080)
        #expect(request.path == "/a/b")
        #expect(request.query.map(\.name) == ["x", "y"])
        #expect(request.fragment == "frag")
        #expect(request.url == url)
        #expect(request[header: "accept"] == "*/*")
        #expect(request.method == .delete)
    }

    @Test func headerSubscriptSetsAndRemoves() {
        var request = HTTPRequest()
        request[header: "X-Trace"] = "1"
        #expect(request.headers["x-trace"] == "1")
        request[header: "x-trace"] = nil
        #expect(request.headers.isEmpty)
    }

    @Test func optionsAreTypedAndDefaultWhenUnset() {
        var request = HTTPRequest()
        #expect(request[option: Priority.self] == 5)
        #expect(request[option: Tag.self] == nil)
        request[option: Priority.self] = 9
        request[option: Tag.self] = "checkout"
        #expect(request[option: Priority.self] == 9)
        #expect(request[option: Tag.self] == "checkout")
        let copy = request
        request[option: Priority.self] = 1
        #expect(copy[option: Priority.self] == 9)  // value semantics
    }

    @Test func copiesShareTheIdAndNewRequestsDoNot() {
        let request = HTTPRequest()
        var copy = request
        copy.path = "/other"
        #expect(copy.id == request.id)
        #expect(HTTPRequest().id != request.id)
    }
}

@Suite struct HTTPRequestValidationTests {
    private func message(_ request: HTTPRequest) -> String? {
        do {
            try request.validate()
            return nil
        } catch {
            #expect(error.code == .invalidRequest)
            return error.message
        }
    }

    @Test func aCompleteRequestIsValid() {
        #expect(message(HTTPRequest(host: "example.com", path: "/x", headers: ["Accept": "a/b"])) == nil)
        #expect(message(HTTPRequest(host: "example.com", path: "")) == nil)
    }

    @Test func noHost() {
        #expect(message(HTTPRequest(path: "/x"))?.contains("no host") == true)
    }

    @Test func pathWithoutLeadingSlash() {
        #expect(message(HTTPRequest(host: "example.com", path: "people"))?.contains("must start with '/'") == true)
        // An encoded slash is not the path's first '/': the URL would run the host into the path.
        var encoded = HTTPRequest(host: "example.com")
        encoded.percentEncodedPath = "%2Fpeople"
        #expect(message(encoded)?.contains("must start with '/'") == true)
    }

    @Test func badSchemePortAndHost() {
        #expect(message(HTTPRequest(scheme: "1http", host: "example.com"))?.contains("scheme") == true)
        #expect(message(HTTPRequest(host: "example.com", port: 70000))?.contains("port 70000") == true)
        #expect(message(HTTPRequest(host: "example.com", port: -1))?.contains("port -1") == true)
        #expect(message(HTTPRequest(host: "exa mple.com"))?.contains("host") == true)
        #expect(message(HTTPRequest(host: "a/b"))?.contains("host") == true)
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b"])
    func headerValuesThatCouldInjectHeadersAreRejected(value: String) {
        let request = HTTPRequest(host: "example.com", headers: ["X-Note": value])
        let text = message(request)
        #expect(text?.contains("X-Note") == true)
        #expect(text?.contains("inject") == true)
    }

    @Test func otherBadHeaderFields() {
        #expect(message(HTTPRequest(host: "example.com", headers: ["X-A": "caf\u{E9}"]))?.contains("non-ASCII") == true)
        #expect(message(HTTPRequest(host: "example.com", headers: ["X-A": "a\u{7}"]))?.contains("control") == true)
        #expect(message(HTTPRequest(host: "example.com", headers: ["Bad Name": "1"]))?.contains("token") == true)
        #expect(message(HTTPRequest(host: "example.com", headers: ["X\r\nY": "1"]))?.contains("token") == true)
        #expect(message(HTTPRequest(host: "example.com", headers: ["": "1"]))?.contains("empty name") == true)
        #expect(message(HTTPRequest(host: "example.com", headers: ["X-Tab": "a\tb"])) == nil)
    }

    @Test func problemsNameTheOffendingCharacter() {
        #expect(message(HTTPRequest(host: "example.com", headers: ["Zo\u{EB}": "1"]))?.contains("U+EB") == true)
        #expect(message(HTTPRequest(host: "example.com", headers: ["X-A": "ok caf\u{E9}"]))?.contains("U+E9") == true)
        #expect(message(HTTPRequest(host: "example.com", headers: ["X-A": "ok\u{7F}"]))?.contains("control") == true)
        #expect(message(HTTPRequest(host: "exa mple.com"))?.contains("' '") == true)
        #expect(message(HTTPRequest(host: "b\u{FC}cher.example/x"))?.contains("'/'") == true)
        // International names and the other unreserved characters pass.
        #expect(message(HTTPRequest(host: "b\u{FC}cher.example")) == nil)
        #expect(message(HTTPRequest(host: "a_b~c-d.example")) == nil)
    }

    @Test func messagesNameTheRequest() throws {
        let request = HTTPRequest(method: .put, host: "example.com", path: "/a", headers: ["X": "\n"])
        let error = try #require(throws: HTTPError.self) { try request.validate() }
        #expect(error.description.hasPrefix("invalidRequest: PUT https://example.com/a — header field 'X'"))
    }
}

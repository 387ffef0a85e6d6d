import Foundation
import HTTP
import Testing

private enum Priority: HTTPRequestOption {
    static let defaultOptionValue = 5
}

private enum Tag: HTTPRequestOption {
    static let defaultOptionValue: String? = nil
}

@Suite(.noHang) struct HTTPRequestTests {
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

@Suite(.noHang) struct HTTPRequestValidationTests {
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

    // MARK: - Nothing a caller builds traps (issue: a crash in URLComponents' percent-encoded setters)

    @Test(arguments: [
        ("/a b", "' '"), ("/a\r\nb", "CR"), ("/a?b", "'?'"), ("/a#b", "'#'"), ("/%", "'%'"), ("/%zz", "'%'"),
        ("/caf\u{E9}", "U+E9"), ("/a\u{0}", "NUL"), ("/[x]", "'['"),
    ])
    func aPercentEncodedPathThatIsNotEncodedFailsNamingTheCharacter(path: String, named: String) {
        var request = HTTPRequest(host: "a.b")
        request.percentEncodedPath = path
        let text = message(request)
        #expect(text?.contains("percent-encoded path") == true)
        #expect(text?.contains(named) == true, "\(text ?? "valid")")
        #expect(request.url == nil)
    }

    @Test(arguments: [("a b", "' '"), ("a=%", "'%'"), ("a#b", "'#'"), ("q=\u{1F389}", "U+1F389"), ("a\nb", "LF")])
    func aPercentEncodedQueryThatIsNotEncodedFailsNamingTheCharacter(query: String, named: String) {
        var request = HTTPRequest(host: "a.b")
        request.percentEncodedQuery = query
        let text = message(request)
        #expect(text?.contains("percent-encoded query") == true)
        #expect(text?.contains(named) == true, "\(text ?? "valid")")
        #expect(request.url == nil)
    }

    @Test func encodedPartsAndAnyFragmentFormAURL() {
        var request = HTTPRequest(host: "a.b")
        request.percentEncodedPath = "/a%20b/c:d@e!$&'()*+,;="
        request.percentEncodedQuery = "x=%2F/?:@"
        request.fragment = "frag ment#1"
        #expect(request.url?.absoluteString == "https://a.b/a%20b/c:d@e!$&'()*+,;=?x=%2F/?:@#frag%20ment%231")
    }

    @Test func aResponseFromAMockCarryingABadPathHasNoURLInsteadOfTrapping() async {
        var request = HTTPRequest(host: "a.b")
        request.percentEncodedPath = "/a b"
        let result = await MockLoader().then(status: .ok).load(request)
        #expect(result.response?.url == nil)
        #expect(result.response.map { "\($0)" }?.contains("/a b") == true)
    }

    @Test func theURLSessionLoaderRefusesABadPathBeforeSendingIt() async {
        var request = HTTPRequest(scheme: "http", host: "127.0.0.1", port: 9)
        request.percentEncodedPath = "/a b"
        let error = await URLSessionLoader().load(request).error
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("' '") == true)
    }

    @Test func internationalHostsGoOutInTheirASCIIForm() {
        #expect(HTTPRequest(host: "Bücher.example").url?.absoluteString == "https://xn--bcher-kva.example/")
        #expect(HTTPRequest(host: "[::1]", port: 8080).url?.absoluteString == "https://[::1]:8080/")
        #expect(message(HTTPRequest(host: "[::g]"))?.contains("IPv6") == true)
        #expect(message(HTTPRequest(host: "[::1]x"))?.contains("IPv6") == true)
        #expect(message(HTTPRequest(host: "bü\u{200B}cher.example"))?.contains("U+200B") == true)
    }

    @Test(arguments: ["xn--Rangezzé.example.com", "XN--bücher.example", "a.xn--ü"])
    func aNonASCIILabelThatClaimsToBePunycodeIsRefusedNotEncodedTwice(host: String) {
        let request = HTTPRequest(host: host)
        #expect(request.url == nil)
        #expect(message(request)?.contains("xn--") == true)
    }

    @Test func compatibilityCharactersInAHostGoOutAsTheLettersTheyStandFor() {
        // UTS 46 maps them as URLComponents does: U+02E4 is ʕ, full-width letters are ASCII.
        #expect(HTTPRequest(host: "file\u{2E4}lä").url?.host() == HTTPRequest(host: "file\u{295}lä").url?.host())
        #expect(HTTPRequest(host: "file\u{2E4}lä").url?.absoluteString == "https://xn--filel-kra341a/")
        #expect(HTTPRequest(host: "ｅｘａｍｐｌｅ.com").url?.absoluteString == "https://example.com/")
    }

    @Test func anInternationalLabelLongerThanDNSAllowsOnceEncodedIsRefused() {
        // "é" and 55 letters encode to 63 bytes, with 56 to 64: where URLComponents stops too.
        let longest = "é" + String(repeating: "o", count: 55)
        #expect(HTTPRequest(host: "x.\(longest)").url?.host()?.utf8.count == 2 + 63)
        let tooLong = HTTPRequest(host: "x.\(longest)o")
        #expect(tooLong.url == nil)
        #expect(message(tooLong)?.contains("at most 63") == true)
        #expect(HTTPRequest(host: "xn--." + "é" + String(repeating: "O", count: 80)).url == nil)
    }

    @Test(arguments: ["éomxn--.example", "-éa.example", "éa-.example", "ab--é.example"])
    func anInternationalLabelWithMisplacedHyphensIsRefused(host: String) {
        let request = HTTPRequest(host: host)
        #expect(request.url == nil)
        #expect(message(request)?.contains("'-'") == true)
    }

    @Test func anInternationalLabelThatBeginsWithACombiningMarkIsRefused() {
        let request = HTTPRequest(host: "\u{301}a.example")
        #expect(request.url == nil)
        #expect(message(request)?.contains("U+301") == true)
        #expect(HTTPRequest(host: "a\u{301}.example").url?.host() == "xn--1ca.example")  // á, composed first
    }

    @Test func anInternationalLabelMayHaveHyphensElsewhere() {
        // As URLComponents writes them; ASCII labels are not checked for hyphens, as it does not check them.
        #expect(HTTPRequest(host: "a-b--é").url?.host() == "xn--a-b---fsa")
        #expect(HTTPRequest(host: "é--a").url?.host() == "xn----a-9la")
        #expect(HTTPRequest(host: "-abc.example").url?.host() == "-abc.example")
    }

    @Test func aPunycodeLabelGoesOutAsItIs() {
        #expect(HTTPRequest(host: "xn--bcher-kva.example").url?.absoluteString == "https://xn--bcher-kva.example/")
    }

    // MARK: - Only http and https; an absolute URL is never retargeted

    @Test(arguments: ["file:///etc/passwd", "javascript:alert(1)", "mailto:root@example.com", "data:text/plain,hi"])
    func aURLWithAnotherSchemeFailsNamingTheSchemeAndIsNotRetargeted(text: String) async throws {
        let url = try #require(URL(string: text))
        let scheme = try #require(url.scheme)
        let request = HTTPRequest(url: url)
        #expect(message(request)?.contains("'\(scheme)'") == true)

        let mock = MockLoader().then(status: .ok)
        _ = await (ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com")) --> mock).load(request)
        #expect(mock.receivedRequests.first?.host == nil, "sent to the environment's host")
        #expect(mock.receivedRequests.first?.url == nil)

        let loaded = await
            (ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
            --> URLSessionLoader()).load(request)
        #expect(loaded.error?.code == .invalidRequest)
        #expect(loaded.error?.message.contains("only http and https") == true)
    }

    /// `URL` reads an empty scheme and a host in `://a.b/x` where `URLComponents` reads only a path (found by
    /// fuzzing): the request is absolute, unusable, and never sent to the environment's host.
    @Test(arguments: ["://https://xn--zz.example.com/x", "://a.b/x", "://a.b:8080/x?y=1"])
    func aURLWithAnEmptySchemeFailsAndIsNotRetargeted(text: String) async throws {
        let request = HTTPRequest(url: try #require(URL(string: text)))
        #expect(request.host != nil)
        #expect(request.url == nil)
        #expect(message(request)?.contains("has an empty scheme") == true)
        let mock = MockLoader().then(status: .ok)
        _ = await (ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com")) --> mock).load(request)
        #expect(mock.receivedRequests.first?.host != "api.example.com", "sent to the environment's host")
        #expect(mock.receivedRequests.first?.url == nil)
        let sent = await
            (ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
            --> URLSessionLoader()).load(request)
        #expect(sent.error?.code == .invalidRequest)
        #expect(sent.error?.message.contains("has an empty scheme") == true)
    }

    @Test func anHTTPURLWithoutAHostFailsAndARelativeURLIsRelative() async throws {
        #expect(
            message(HTTPRequest(url: try #require(URL(string: "https:///people"))))?.contains("has no host") == true)
        let mock = MockLoader().then(status: .ok)
        _ = await (ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com")) --> mock)
            .load(HTTPRequest(url: try #require(URL(string: "/people/42?x=1"))))
        #expect(mock.receivedRequests.first?.url?.absoluteString == "https://api.example.com/people/42?x=1")
    }

    @Test(arguments: ["ftp", "ws", "HTTP2", "unix"])
    func schemesOtherThanHTTPAreRefusedWhateverHowTheyWereSet(scheme: String) {
        #expect(message(HTTPRequest(scheme: scheme, host: "a.b"))?.contains("'\(scheme)'") == true)
    }

    @Test func schemesAreNotCaseSensitive() {
        #expect(message(HTTPRequest(scheme: "HTTPS", host: "a.b")) == nil)
        #expect(message(HTTPRequest(scheme: "Http", host: "a.b")) == nil)
    }

    // MARK: - No body on GET, HEAD or TRACE

    @Test(arguments: [HTTPMethod.get, .head, .trace])
    func aBodyOnAMethodWithoutContentFailsBeforeSending(method: HTTPMethod) async {
        let request = HTTPRequest(method: method, host: "a.b", body: DataBody(Data("x".utf8)))
        let text = message(request)
        #expect(text?.contains("\(method) request cannot have a body") == true)
        let error = await URLSessionLoader().load(request).error
        #expect(error?.code == .invalidRequest)
        #expect(error?.message == text)
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch, .delete, .options])
    func otherMethodsMayCarryABody(method: HTTPMethod) {
        #expect(message(HTTPRequest(method: method, host: "a.b", body: DataBody(Data("x".utf8)))) == nil)
        #expect(message(HTTPRequest(method: .get, host: "a.b", body: DataBody(Data()))) == nil)  // empty is no body
    }

    @Test func theBodysHeaderFieldsAreValidatedToo() {
        let request = HTTPRequest(method: .post, host: "a.b", body: DataBody(Data("x".utf8), contentType: "a\r\nX: 1"))
        #expect(message(request)?.contains("the body's header field 'Content-Type'") == true)
    }

    // MARK: - Found by the fuzzers

    @Test(arguments: ["GET / HTTP/1.1\r\nX-Injected: yes\r\n\r\nGET", "GET X", "", "PO ST", "G\u{E9}T"])
    func aMethodThatIsNotATokenIsRefused(method: String) {
        let request = HTTPRequest(method: HTTPMethod(rawValue: method), host: "a.b")
        #expect(message(request)?.contains("method") == true)
        #expect((try? request.urlRequest()) == nil)
    }

    @Test func anEnvironmentsQueryIsAppendedWithoutReencodingTheRequests() {
        let environment = ServerEnvironment(host: "a.b", query: [URLQueryItem(name: "k", value: "v")])
        let applied = environment.apply(to: HTTPRequest(url: URL(string: "/x?q=a+b&r=%E9")!))
        #expect(applied.percentEncodedQuery == "q=a+b&r=%E9&k=v")
    }

    @Test func aHostURLComponentsCannotReadIsKept() async throws {
        let request = HTTPRequest(url: try #require(URL(string: "https://xn--zz.example.com/transfer?amount=1")))
        #expect(request.host == "xn--zz.example.com")
        let mock = MockLoader().then(status: .ok)
        _ = await (ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com")) --> mock).load(request)
        #expect(mock.receivedRequests.first?.host == "xn--zz.example.com")
    }
}

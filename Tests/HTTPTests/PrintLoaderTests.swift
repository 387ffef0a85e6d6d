import Foundation
import HTTP
import Testing

@Suite(.noHang) struct PrintLoaderTests {
    @Test func writesOneLineForTheRequestAndOneForTheResponse() async throws {
        let sink = LineSink()
        let mock = MockLoader().then(status: .ok, body: Data(count: 213))
        let chain = PrintLoader(sink: sink.write) --> mock
        let request = HTTPRequest(host: "api.example.com", path: "/people/42")
        _ = await chain.load(request)
        let tag = try #require(mock.receivedRequests.first?.loadID).description
        #expect(tag.wholeMatch(of: /#[0-9]+/) != nil)
        #expect(sink.all.count == 2)
        #expect(sink.all.first == "→ \(tag) GET https://api.example.com/people/42")
        let response = sink.all.last ?? ""
        #expect(response.hasPrefix("← \(tag) 200 OK GET https://api.example.com/people/42 · 213 bytes · "))
        // The time is measured, not asserted: a loaded machine takes seconds.
        #expect(response.hasSuffix(" ms") || response.hasSuffix(" s"))
    }

    @Test func concurrentLoadsOfOneRequestValueHaveTagsOfTheirOwn() async throws {
        let sink = LineSink()
        let mock = MockLoader()
        for _ in 0..<4 { mock.then(status: .ok) }
        let chain = PrintLoader(sink: sink.write) --> mock
        let request = HTTPRequest(host: "example.com", path: "/userinfo")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { _ = await chain.load(request) } }
        }
        let tags = sink.all.map { $0.split(separator: " ")[1] }
        #expect(sink.all.count == 8)
        #expect(Set(tags).count == 4)
        for tag in Set(tags) {
            #expect(sink.all.filter { $0.hasPrefix("→ \(tag) ") }.count == 1)
            #expect(sink.all.filter { $0.hasPrefix("← \(tag) ") }.count == 1)
        }
    }

    @Test func resultLinesShowWhatTheTerminalMeasured() async {
        let sink = LineSink()
        let mock = MockLoader().then { request in
            var response = HTTPResponse(request: request, status: .ok, body: Data(count: 213))
            var metrics = HTTPMetrics(startingNowFor: request)
            metrics.responseHeadReceived = metrics.start + .milliseconds(12)
            metrics.end = metrics.start + .milliseconds(41.7)
            response.metrics = metrics
            return .success(response)
        }
        _ = await (PrintLoader(sink: sink.write) --> mock).load(HTTPRequest(host: "example.com"))
        #expect(sink.all.last?.hasSuffix(" (head 12.0 ms)") == true, "\(sink.all)")
    }

    @Test func aboveRetryItReportsEachRetryAndTheLastAttempt() async throws {
        let sink = LineSink()
        let clock = ManualClock()
        let mock = MockLoader().then(status: .serviceUnavailable).then(failWith: .timedOut).then(status: .ok)
        let retry = Retry(
            strategy: Backoff.constant(delay: .milliseconds(200), maximumNumberOfAttempts: 3), budget: nil, clock: clock
        )
        let chain = PrintLoader(sink: sink.write) --> retry --> mock
        let load = Task { await chain.load(HTTPRequest(host: "example.com", path: "/flaky")) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(200))
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(200))
        _ = try await load.finished()
        let tag = try #require(mock.receivedRequests.first?.loadID).description
        let lines = sink.all
        #expect(lines.count == 4)
        #expect(lines[0] == "→ \(tag) GET https://example.com/flaky")
        #expect(
            lines[1] == "↻ \(tag) 503 Service Unavailable GET https://example.com/flaky · attempt 1 · retry in 200.0 ms"
        )
        #expect(lines[2] == "↻ \(tag) timedOut GET https://example.com/flaky · attempt 2 · retry in 200.0 ms")
        #expect(lines[3].hasPrefix("← \(tag) 200 OK GET https://example.com/flaky · 0 bytes · "))
        #expect(lines[3].hasSuffix(" (attempt 3)"), "\(lines[3])")
    }

    @Test func belowRetryEachAttemptHasItsLinesUnderTheLoadsTag() async throws {
        let sink = LineSink()
        let mock = MockLoader().then(failWith: .cannotConnect, message: "refused").then(status: .ok)
        let retry = Retry(strategy: Backoff.constant(delay: .zero, maximumNumberOfAttempts: 2), budget: nil)
        let chain = Observe { _ in } --> retry --> PrintLoader(sink: sink.write) --> mock
        _ = await chain.load(HTTPRequest(host: "example.com"))
        let tag = try #require(mock.receivedRequests.first?.loadID).description
        let lines = sink.all
        #expect(lines.count == 4)
        #expect(lines[0] == "→ \(tag) GET https://example.com/")
        #expect(
            lines[1].hasPrefix("✕ \(tag) cannotConnect GET https://example.com/ · ") && lines[1].hasSuffix(" — refused")
        )
        #expect(lines[2] == "→ \(tag) GET https://example.com/ (attempt 2)")
        #expect(
            lines[3].hasPrefix("← \(tag) 200 OK GET https://example.com/ · 0 bytes · ")
                && lines[3].hasSuffix(" (attempt 2)"))
    }

    @Test func failuresNameTheCodeAndMessage() async {
        let sink = LineSink()
        let chain = PrintLoader(sink: sink.write) --> MockLoader().then(failWith: .cannotConnect, message: "refused")
        _ = await chain.load(HTTPRequest(method: .post, host: "example.com"))
        #expect(sink.all.last?.contains("✕") == true)
        #expect(sink.all.last?.contains("cannotConnect POST https://example.com/") == true)
        #expect(sink.all.last?.hasSuffix("— refused") == true)
    }

    @Test func headersAreRedacted() async {
        let sink = LineSink()
        let chain =
            PrintLoader(redaction: .standard.adding("X-API-Key"), includesHeaders: true, sink: sink.write)
            --> MockLoader().then(status: .ok, headers: ["Set-Cookie": "session=s3cr3t", "X-Request-Id": "r1"])
        let request = HTTPRequest(
            host: "example.com",
            headers: [
                "Authorization": "Bearer tok3n", "Cookie": "a=s3cr3t", "Proxy-Authorization": "Basic cHc=",
                "x-api-key": "k3y", "Accept": "application/json",
            ]
        )
        _ = await chain.load(request)
        let text = sink.all.joined(separator: "\n")
        for secret in ["tok3n", "s3cr3t", "cHc=", "k3y"] {
            #expect(!text.contains(secret))
        }
        #expect(text.contains("Authorization: Bearer <redacted>"))
        #expect(text.contains("Cookie: <redacted>"))
        #expect(text.contains("x-api-key: <redacted>"))
        #expect(text.contains("Accept: application/json"))
        #expect(text.contains("X-Request-Id: r1"))
    }

    @Test func linesHideSecretQueryItemsInTheURL() async {
        let sink = LineSink()
        let chain =
            PrintLoader(sink: sink.write)
            --> MockLoader().then(status: .ok).then(failWith: .cannotConnect, message: "refused")
        let request = HTTPRequest(
            host: "example.com", path: "/cb",
            query: [URLQueryItem(name: "code", value: "c0de"), URLQueryItem(name: "state", value: "st4te")])
        _ = await chain.load(request)
        _ = await chain.load(request)
        #expect(sink.all.count == 4)
        for line in sink.all {
            #expect(line.contains("GET https://example.com/cb?code=<redacted>&state=st4te"), "\(line)")
            #expect(!line.contains("c0de"))
        }
    }

    @Test func failureMessagesAndCausesAreSearchedForSecrets() async {
        struct Cause: Error, CustomStringConvertible { var description: String { "token=t0k3n rejected" } }
        let sink = LineSink()
        let chain =
            PrintLoader(sink: sink.write)
            --> MockLoader().then { request in
                .failure(
                    HTTPError(
                        .invalidRequest, request: request,
                        message: "the URL 'https://me:pw@example.com/?api_key=k3y' could not be parsed",
                        underlyingError: Cause()))
            }
        _ = await chain.load(HTTPRequest(host: "example.com"))
        let line = sink.all.last ?? ""
        for secret in ["pw@", "k3y", "t0k3n"] {
            #expect(!line.contains(secret), "\(line)")
        }
        #expect(line.contains("'https://me:<redacted>@example.com/?api_key=<redacted>' could not be parsed"))
        #expect(line.contains("(underlying: token=<redacted> rejected)"))
    }

    @Test func headerValuesThatCarryURLsAreSearched() async {
        let sink = LineSink()
        let chain =
            PrintLoader(includesHeaders: true, sink: sink.write)
            --> MockLoader().then(status: .found, headers: ["Location": "https://app.example.com/cb?code=c0de&state=s"])
        _ = await chain.load(HTTPRequest(host: "example.com", headers: ["X-Vault-Token": "hvs.v4ult"]))
        let text = sink.all.joined(separator: "\n")
        #expect(!text.contains("c0de"))
        #expect(!text.contains("v4ult"))
        #expect(text.contains("Location: https://app.example.com/cb?code=<redacted>&state=s"))
        #expect(text.contains("X-Vault-Token: <redacted>"))
    }

    @Test func anAppsOwnNamesAreHiddenToo() async {
        let sink = LineSink()
        let chain =
            PrintLoader(redaction: .standard.adding("sessionKey"), sink: sink.write) --> MockLoader().then(status: .ok)
        _ = await chain.load(HTTPRequest(url: URL(string: "https://example.com/a?session_key=s3ss&page=2")!))
        #expect(sink.all.first?.hasSuffix("GET https://example.com/a?session_key=<redacted>&page=2") == true)
        #expect(!sink.all.joined().contains("s3ss"))
    }

    @Test func redactionNoneShowsEverything() async {
        let sink = LineSink()
        let chain =
            PrintLoader(redaction: .none, includesHeaders: true, sink: sink.write) --> MockLoader().then(status: .ok)
        _ = await chain.load(
            HTTPRequest(
                host: "example.com", query: [URLQueryItem(name: "code", value: "c0de")],
                headers: ["Authorization": "Bearer t0k3n"]))
        #expect(sink.all.first?.hasSuffix("GET https://example.com/?code=c0de [Authorization: Bearer t0k3n]") == true)
    }
}

@Suite(.noHang) struct CURLTests {
    @Test func getRequest() {
        let request = HTTPRequest(host: "example.com", path: "/a b", headers: ["Accept": "application/json"])
        #expect(request.cURLCommand() == "curl 'https://example.com/a%20b' \\\n  -H 'Accept: application/json'")
    }

    @Test func postWithBodyReproducesTheRequestAndRedactsSecrets() {
        let request = HTTPRequest(
            method: .post,
            host: "example.com",
            path: "/people",
            headers: ["Authorization": "Bearer secret-token", "X-Quote": "it's"],
            body: FormBody(["name": "O'Hara"])
        )
        let command = request.cURLCommand()
        #expect(
            command == """
                curl -X 'POST' 'https://example.com/people' \\
                  -H 'Authorization: Bearer <redacted>' \\
                  -H 'X-Quote: it'\\''s' \\
                  -H 'Content-Type: application/x-www-form-urlencoded; charset=utf-8' \\
                  --data-binary 'name=O%27Hara'
                """
        )
        #expect(!command.contains("secret-token"))
        #expect(request.cURLCommand(redaction: .none).contains("Authorization: Bearer secret-token"))
    }

    @Test func binaryBodiesUseANSICQuoting() {
        let request = HTTPRequest(method: .put, host: "example.com", body: DataBody(Data([0x00, 0x41, 0x27, 0xFF])))
        #expect(request.cURLCommand().hasSuffix("--data-binary $'\\x00A\\'\\xFF'"))
    }

    @Test func headUsesTheHeadFlag() {
        #expect(HTTPRequest(method: .head, host: "example.com").cURLCommand() == "curl --head 'https://example.com/'")
    }

    @Test func queryItemsAndJSONBodyFieldsAreRedacted() {
        struct Login: Encodable { var username: String; var password: String; var device: [String: String] }
        let request = HTTPRequest(
            method: .post, host: "example.com", path: "/login",
            query: [URLQueryItem(name: "api_key", value: "k3y"), URLQueryItem(name: "lang", value: "fr")],
            body: JSONBody(Login(username: "zoe", password: "pa55", device: ["pushToken": "pu5h", "os": "linux"]))
        )
        let command = request.cURLCommand()
        for secret in ["k3y", "pa55", "pu5h"] {
            #expect(!command.contains(secret), "\(command)")
        }
        for visible in [
            "'https://example.com/login?api_key=<redacted>&lang=fr'", #""password":"<redacted>""#, "zoe", "linux",
        ] {
            #expect(command.contains(visible), "\(command)")
        }
        // With `.none` the command sends the real request.
        let real = request.cURLCommand(redaction: .none)
        for secret in ["k3y", "pa55", "pu5h"] {
            #expect(real.contains(secret))
        }
    }

    @Test func formAndMultipartBodyFieldsAreRedacted() throws {
        let token = HTTPRequest(
            method: .post, host: "example.com", path: "/token",
            body: FormBody([
                URLQueryItem(name: "grant_type", value: "authorization_code"),
                URLQueryItem(name: "code", value: "c0de"),
                URLQueryItem(name: "code_verifier", value: "v3rifier"),
            ])
        )
        #expect(
            token.cURLCommand().hasSuffix(
                "--data-binary 'grant_type=authorization_code&code=<redacted>&code_verifier=<redacted>'"))
        #expect(token.cURLCommand(redaction: .none).contains("code=c0de&code_verifier=v3rifier"))

        var form = MultipartFormBody(boundary: "B0undary")
        form.addField(named: "user", value: "zoe")
        form.addField(named: "password", value: "pa55")
        form.addFile(named: "avatar", filename: "a.png", contentType: "image/png", data: Data([0x89, 0x50, 0x00]))
        let upload = HTTPRequest(method: .post, host: "example.com", body: form)
        let command = upload.cURLCommand()
        #expect(!command.contains("pa55"))
        #expect(command.contains("zoe"))
        #expect(command.contains("\\x89P\\x00"))  // the file's bytes, unchanged
    }

    @Test func aSecretHeaderOfTheAppsOwnIsRedacted() {
        let request = HTTPRequest(host: "example.com", headers: ["X-Tenant-Key": "t3nant"])
        #expect(request.cURLCommand().contains("X-Tenant-Key: t3nant"))
        #expect(request.cURLCommand(redaction: .standard.adding("X-Tenant-Key")).contains("X-Tenant-Key: <redacted>"))
    }
}

@Suite(.noHang) struct HTTPErrorTests {
    @Test func descriptionNamesCodeMethodURLMessageStatusAndCause() {
        let request = HTTPRequest(method: .post, host: "example.com", path: "/x")
        let response = HTTPResponse(request: request, status: .badGateway)
        let error = HTTPError(
            .invalidResponse,
            request: request,
            message: "bad body",
            response: response,
            underlyingError: URLError(.badServerResponse)
        )
        #expect(
            error.description.hasPrefix(
                "invalidResponse: POST https://example.com/x — bad body (HTTP 502 Bad Gateway) (underlying: "))
        #expect(error.localizedDescription == error.description)
    }

    @Test func eachCodeHasADefaultMessage() {
        let codes: [HTTPError.Code] = [
            .invalidRequest, .cannotConnect, .cancelled, .timedOut, .insecureConnection, .invalidResponse,
            .resetInProgress, .cannotAuthenticate, .unknown,
        ]
        let messages = codes.map { HTTPError($0, request: HTTPRequest()).message }
        #expect(Set(messages).count == codes.count)
        #expect(
            HTTPError(.cancelled, request: HTTPRequest()).description == "cancelled: GET / — the request was cancelled")
    }

    @Test func descriptionsHideSecretsInTheURLTheMessageAndTheCause() throws {
        struct Cause: Error, CustomStringConvertible { var description: String { #"{"error":"bad","id_token":"1d"}"# } }
        let request = HTTPRequest(
            host: "example.com", path: "/cb", query: [URLQueryItem(name: "code", value: "c0de")])
        #expect(request.description == "GET https://example.com/cb?code=<redacted>")
        let response = HTTPResponse(request: request, status: .badGateway)
        #expect(response.description.contains("GET https://example.com/cb?code=<redacted>"))
        let error = HTTPError(
            .invalidResponse, request: request, message: "redirected to https://app/cb#access_token=acc3ss",
            response: response, underlyingError: Cause())
        let text = error.description
        for secret in ["c0de", "acc3ss", "1d\""] {
            #expect(!text.contains(secret), "\(text)")
        }
        #expect(text.contains("redirected to https://app/cb#access_token=<redacted>"))
        #expect(text.contains(#""error":"bad""#))
        #expect(error.localizedDescription == text)
    }

    @Test func anUnparsableURLIsRedactedToo() throws {
        // `URLComponents` cannot take this URL apart (the port is not a number), so the request keeps the raw string.
        let url = try #require(
            URL(dataRepresentation: Data("https://me:pw@example.com:abc/?code=c0de#frag".utf8), relativeTo: nil))
        try #require(URLComponents(url: url, resolvingAgainstBaseURL: true) == nil)
        let request = HTTPRequest(url: url)
        let error = HTTPError(.invalidRequest, request: request)
        for text in [request.description, error.description, request.cURLCommand()] {
            #expect(!text.contains("c0de"), "\(text)")
            #expect(!text.contains("pw@"), "\(text)")
            #expect(text.contains("https://me:<redacted>@example.com:abc/?code=<redacted>"), "\(text)")
        }
        // What validation says about it is redacted in the error's description.
        let invalid = try #require(throws: HTTPError.self) { try request.validate() }
        #expect(!invalid.description.contains("c0de"))
        #expect(!invalid.description.contains("pw@"))
    }
}

/// cURL renderings the fuzzers broke.
@Suite(.noHang) struct CURLFuzzFindingsTests {
    @Test func aQuoteBeforeACombiningMarkCannotEndTheQuoting() {
        var request = HTTPRequest(method: .post, host: "a.b")
        request.body = JSONBody(["text": "'\u{301}; echo INJECTED >&2; : '\u{301}"])
        let command = request.cURLCommand()
        // Every quote inside the body is closed, escaped and reopened: the text stays one argument.
        #expect(command.contains("'\\''\u{301}; echo INJECTED"))
        #expect(!command.contains("\"'\u{301}; echo"))
    }

    @Test func aFormBodysSecretsAreHiddenWhateverContentTypeTheRequestClaims() {
        var request = HTTPRequest(method: .post, host: "a.b")
        request.headers["Content-Type"] = "text/plain"
        request.body = FormBody(["refresh_token": "s3cr3t-value", "user": "ann"])
        let command = request.cURLCommand()
        #expect(!command.contains("s3cr3t-value"))
        #expect(command.contains("user=ann"))
    }
}

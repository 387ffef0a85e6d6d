import Foundation
import HTTP
import Testing

@Suite struct PrintLoaderTests {
    @Test func writesOneLineForTheRequestAndOneForTheResponse() async {
        let sink = LineSink()
        let chain = PrintLoader(sink: sink.write) --> MockLoader().then(status: .ok, body: Data(count: 213))
        let request = HTTPRequest(host: "api.example.com", path: "/people/42")
        _ = await chain.load(request)
        let tag = String(request.id.uuidString.prefix(8))
        #expect(sink.all.count == 2)
        #expect(sink.all.first == "→ \(tag) GET https://api.example.com/people/42")
        let response = sink.all.last ?? ""
        #expect(response.hasPrefix("← \(tag) 200 OK GET https://api.example.com/people/42 · 213 bytes · "))
        // The time is measured, not asserted: a loaded machine takes seconds.
        #expect(response.hasSuffix(" ms") || response.hasSuffix(" s"))
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
}

@Suite struct CURLTests {
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
}

@Suite struct HTTPErrorTests {
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
}

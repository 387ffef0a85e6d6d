import Foundation
import HTTP
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests, responses, errors and header fields seen through reflection — `dump`, `Mirror`, `String(reflecting:)`,
/// what debuggers and crash reporters show — hide what ``Redaction/standard`` hides, and show the rest.
@Suite(.noHang) struct ReflectionRedactionTests {
    private static let secret = "S3CR3TVALUE"

    /// Every view reflection gives of `value`.
    private func views(_ value: Any) -> [(String, String)] {
        var dumped = ""
        dump(value, to: &dumped, maxDepth: 20)
        return [("dump", dumped), ("Mirror", walked(value)), ("String(reflecting:)", String(reflecting: value))]
    }

    /// Each node's label and `String(describing:)`, at any depth.
    private func walked(_ value: Any, depth: Int = 0) -> String {
        guard depth < 20 else { return "" }
        var text = String(describing: value) + "\n"
        for child in Mirror(reflecting: value).children {
            text += (child.label ?? "-") + ": " + walked(child.value, depth: depth + 1)
        }
        return text
    }

    private func expectHidden(
        _ value: Any, showing visible: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (view, text) in views(value) {
            #expect(!text.contains(Self.secret), "\(view) shows the secret:\n\(text)", sourceLocation: sourceLocation)
            // `String(reflecting:)` is the description, which shows less: it only has to hide.
            for shown in visible where view != "String(reflecting:)" {
                #expect(
                    text.contains(shown), "\(view) does not show \(shown):\n\(text)", sourceLocation: sourceLocation)
            }
        }
    }

    private func request() throws -> HTTPRequest {
        let url = try #require(
            URL(
                string:
                    "https://api.example.com/v1/items?page=2&api_key=\(Self.secret)#access_token=\(Self.secret)&state=st8"
            ))
        var request = HTTPRequest(method: .post, url: url)
        request.headers["Authorization"] = "Bearer \(Self.secret)"
        request.headers["X-Api-Key"] = Self.secret
        request.headers["Accept"] = "application/json"
        request.body = FormBody([
            URLQueryItem(name: "client_secret", value: Self.secret), URLQueryItem(name: "grant_type", value: "pw"),
        ])
        request.timeout = .milliseconds(1_250)
        return request
    }

    @Test func headerFieldsHideSecretValuesInEveryView() {
        var headers: HTTPHeaders = ["Authorization": "Basic \(Self.secret)", "Accept": "text/plain"]
        headers.add("session=\(Self.secret); Path=/", for: "Set-Cookie")
        headers.add("https://app.example.com/cb?code=\(Self.secret)&state=xyz", for: "Location")
        headers.add("true", for: "Access-Control-Allow-Credentials")
        expectHidden(
            headers,
            showing: ["Basic <redacted>", "text/plain", "state=xyz", "Access-Control-Allow-Credentials", "true"])
        expectHidden(headers.description, showing: ["Accept: text/plain"])
        for field in headers { expectHidden(field, showing: [field.name]) }
        // The values themselves are untouched: only views hide them.
        #expect(headers["Authorization"] == "Basic \(Self.secret)")
    }

    @Test func aRequestHidesItsSecretsAndShowsTheRest() throws {
        let request = try request()
        expectHidden(
            request,
            showing: [
                "api.example.com/v1/items", "page=2", "api_key=<redacted>", "state=st8", "Bearer <redacted>",
                "application/json", "FormBody", "grant_type=pw", "POST", "1.25",
            ])
        let mirror = Mirror(reflecting: request)
        #expect(mirror.displayStyle == .struct)
        #expect(mirror.children.map(\.label) == ["id", "method", "url", "headers", "body", "options"])
    }

    @Test func aResponseHidesItsSecretsAndItsRequests() throws {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "Set-Cookie": "sid=\(Self.secret)"]
        headers.add("42", for: "Content-Length")
        let response = HTTPResponse(
            request: try request(), status: .ok, headers: headers,
            body: Data(#"{"access_token":"\#(Self.secret)","token_type":"Bearer","expires_in":3600}"#.utf8),
            url: URL(string: "https://api.example.com/final?sig=\(Self.secret)&lang=en"))
        expectHidden(response, showing: ["200", "lang=en", "Bearer", "3600", "42", "api.example.com/v1/items"])
    }

    @Test func anErrorHidesItsSecretsItsUnderlyingErrorsAndItsResponses() throws {
        let request = try request()
        let failingURL = try #require(URL(string: "https://api.example.com/v1/items?token=\(Self.secret)&page=3"))
        let urlError = URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: failingURL])
        let error = HTTPError(
            .timedOut, request: request, message: "no answer from https://api.example.com/?key=\(Self.secret)",
            response: HTTPResponse(request: request, status: .badGateway, body: Data("password=\(Self.secret)".utf8)),
            underlyingError: urlError)
        expectHidden(error, showing: ["timedOut", "URLError", "page=3", "502", "no answer from"])
        expectHidden(HTTPResult.failure(error), showing: ["timedOut"])
    }

    @Test func anUnusableURLIsHiddenAsItsDescriptionHidesIt() throws {
        let request = HTTPRequest(
            url: try #require(URL(string: "ftp://user:\(Self.secret)@files.example.com/?auth=\(Self.secret)")))
        expectHidden(request, showing: ["files.example.com", "auth=<redacted>"])
    }
}

extension ReflectionRedactionTests {
    @Test func aClientIdentityShowsNoPrivateKeyByte() throws {
        // A DER SEQUENCE holding an OCTET STRING of 0xF9 bytes: 249 appears nowhere else in what is shown.
        let key = Data(DER.sequence(DER.element(0x02, [0]), DER.element(0x04, Array(repeating: 0xF9, count: 32))))
        let identity = try ClientIdentity(certificateChain: [TrustFixtures.leafRSA.der], privateKey: key)
        var dumped = ""
        dump(identity, to: &dumped)
        #expect(!dumped.contains("249"), "\(dumped)")
        #expect(dumped.contains("<redacted>"))
        #expect(walked(identity).contains("certificates: 1"))
    }
}

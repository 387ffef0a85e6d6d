import Foundation
import HTTP
import HTTPConnection
import Testing

@Suite(.noHang) struct ResponseErrorTests {
    private let request = HTTPRequest(
        host: "api.example.com", path: "/token", query: [URLQueryItem(name: "client_secret", value: "cl1ent")])

    private func error(_ body: String, headers: HTTPHeaders = [:], url: URL? = nil) -> ResponseError {
        let response = HTTPResponse(request: request, status: .badRequest, headers: headers, body: json(body), url: url)
        return ResponseError(kind: .unacceptableStatus, response: response, expectedType: String.self)
    }

    @Test func theExcerptHidesWhatTheStandardRedactionHides() {
        // Names the excerpt's old list of its own did not know.
        let body = #"{"error":"invalid_grant","code_verifier":"v3rifier","clientAssertion":"a55ert","X-Api-Key":7}"#
        let text = error(body).description
        for secret in ["v3rifier", "a55ert", ":7"] {
            #expect(!text.contains(secret), "\(text)")
        }
        #expect(
            text.hasSuffix(
                #"body: {"error":"invalid_grant","code_verifier":"<redacted>","clientAssertion":"<redacted>","X-Api-Key":"<redacted>"}"#
            ))
    }

    @Test func theURLHidesSecretQueryItems() throws {
        #expect(
            error("").description.hasPrefix(
                "unacceptableStatus: GET https://api.example.com/token?client_secret=<redacted> answered 400 Bad Request"
            ))
        let redirected = try #require(URL(string: "https://other.example.com/cb?code=c0de&state=s#id_token=1d"))
        let text = error("", url: redirected).description
        #expect(text.contains("GET https://other.example.com/cb?code=<redacted>&state=s#id_token=<redacted> answered"))
        #expect(!text.contains("c0de"))
        #expect(!text.contains("cl1ent"))
    }

    @Test func aFormBodyIsReadAsForm() {
        let text = error(
            "access_token=acc3ss&token_type=bearer&scope=read",
            headers: ["Content-Type": "application/x-www-form-urlencoded"]
        ).description
        #expect(text.hasSuffix("body: access_token=<redacted>&token_type=<redacted>&scope=read"))
    }

    @Test func aSecretCutOffByTheExcerptIsHidden() {
        // The excerpt shows 200 characters; the secret starts just before the cut.
        let padding = String(repeating: "x", count: 170)
        let text = error(#"{"padding":"\#(padding)","refresh_token":"r3fresh-r3fresh-r3fresh"}"#).description
        #expect(!text.contains("r3f"))
        #expect(text.hasSuffix("… (226 bytes)"))
        // A body longer than what is read for the excerpt, cut inside a secret.
        let long = #"{"n":1,"refresh_token":""# + String(repeating: "r3fresh", count: 1_000) + #""}"#
        let longText = error(long).description
        #expect(!longText.contains("r3f"))
        #expect(longText.hasSuffix(#"body: {"n":1,"refresh_token":"<redacted>"… (7026 bytes)"#))
    }

    @Test func theExcerptIsPrintableAndShort() {
        let text = error("line one\nline\ttwo\u{0}" + String(repeating: "é", count: 300)).description
        let body = String(text[text.range(of: "body: ")!.upperBound...])
        #expect(!body.unicodeScalars.contains { $0.value < 0x20 })
        #expect(body.hasPrefix("line one line two "))
        #expect(body.hasSuffix("… (618 bytes)"))
        #expect(body.count == 200 + "… (618 bytes)".count)
        #expect(error("").description.hasSuffix("body: (empty)"))
    }

    @Test func kindsAreCodesThatCompareAndPrintByName() {
        let status = error("")
        #expect(status.kind == .unacceptableStatus && status.kind != .undecodable)
        #expect("\(ResponseError.Kind.undecodable)" == "undecodable")
        // A kind added later (here by hand) is a value like the others, and the description starts with its name.
        let custom = ResponseError.Kind(rawValue: "truncated")
        #expect(custom != .undecodable && custom == ResponseError.Kind(rawValue: "truncated"))
        let truncated = ResponseError(
            kind: custom, response: HTTPResponse(request: request, status: .ok), expectedType: String.self)
        #expect(truncated.description.hasPrefix("truncated: GET https://api.example.com/token"), "\(truncated)")
        #expect(Set([ResponseError.Kind.unacceptableStatus, .undecodable, .unacceptableStatus]).count == 2)
    }

    @Test func aServerErrorHidesSecretsInTheURLAndTheDecodedBody() {
        struct Problem: Sendable { var message: String; var sessionToken: String }
        let response = HTTPResponse(request: request, status: .conflict)
        let error = ServerError(body: Problem(message: "locked", sessionToken: "s3ss"), response: response)
        #expect(
            error.description
                == #"serverError: GET https://api.example.com/token?client_secret=<redacted> answered 409 Conflict: Problem(message: "locked", sessionToken: "<redacted>")"#
        )
    }
}

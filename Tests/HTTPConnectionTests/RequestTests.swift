import Foundation
import HTTP
import HTTPConnection
import Testing

@Suite(.noHang) struct RequestTests {
    private func response(_ status: HTTPStatus, _ body: String = "", headers: HTTPHeaders = [:]) -> HTTPResponse {
        HTTPResponse(
            request: HTTPRequest(host: "api.example.com", path: "/people/42"), status: status, headers: headers,
            body: json(body))
    }

    @Test func decodesJSONWithTheDefaultDecoder() throws {
        let person = try Request<Person>.person(42).decode(response(.ok, #"{"id":42,"name":"Zoë"}"#))
        #expect(person == Person(id: 42, name: "Zoë"))
    }

    @Test func decodesWithAnyDecoderPassed() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        struct Named: Decodable, Sendable { var fullName: String }
        let request = Request<Named>(underlyingRequest: HTTPRequest(path: "/"), decoder: decoder)
        #expect(try request.decode(response(.ok, #"{"full_name":"Zoë Example"}"#)).fullName == "Zoë Example")
    }

    @Test func dataStringAndNoContent() throws {
        #expect(try Request<Data>(underlyingRequest: HTTPRequest()).decode(response(.ok, "raw")) == json("raw"))
        #expect(try Request<String>(underlyingRequest: HTTPRequest()).decode(response(.ok, "héllo")) == "héllo")
        let latin1 = HTTPResponse(
            request: HTTPRequest(),
            headers: ["Content-Type": "text/plain; charset=ISO-8859-1"],
            body: Data([0x68, 0xE9])
        )
        #expect(try Request<String>(underlyingRequest: HTTPRequest()).decode(latin1) == "hé")
        try Request<Void>(underlyingRequest: HTTPRequest()).decode(response(.noContent))
        let notUTF8 = HTTPResponse(request: HTTPRequest(), body: Data([0xFF, 0xFE, 0xFD]))
        #expect(throws: ResponseError.self) { try Request<String>(underlyingRequest: HTTPRequest()).decode(notUTF8) }
    }

    @Test func aNon2xxStatusIsAnErrorCarryingTheResponse() throws {
        let error = try #require(throws: ResponseError.self) {
            try Request<Person>.person(42).decode(response(.notFound, #"{"error":"no such person"}"#))
        }
        #expect(error.kind == .unacceptableStatus)
        #expect(error.status == .notFound)
        #expect(error.response.body == json(#"{"error":"no such person"}"#))
        #expect(error.description.contains("answered 404 Not Found, which the request does not accept"))
        #expect(error.description.contains(#"body: {"error":"no such person"}"#))
    }

    @Test func aRequestCanAcceptOtherStatuses() throws {
        let maybe = Request<Person?>(underlyingRequest: HTTPRequest(path: "/people/42")) { response in
            response.status == .notFound ? nil : try JSONDecoder().decode(Person.self, from: response.body)
        }.accepting(.notFound)
        #expect(try maybe.decode(response(.notFound)) == nil)
        #expect(try maybe.decode(response(.ok, #"{"id":1,"name":"A"}"#))?.id == 1)
        #expect(throws: ResponseError.self) { try maybe.decode(response(.internalServerError)) }

        let anything = Request<HTTPStatus>(underlyingRequest: HTTPRequest()) { $0.status }.acceptingAnyStatus()
        #expect(try anything.decode(response(.badGateway)) == .badGateway)
    }

    @Test func typedErrorBodiesAreThrownAsServerErrors() throws {
        let request = Request<Person>.person(42).decodingErrors(as: APIProblem.self)
        let error = try #require(throws: ServerError<APIProblem>.self) {
            try request.decode(response(.conflict, #"{"code":"locked","message":"Try later"}"#))
        }
        #expect(error.body == APIProblem(code: "locked", message: "Try later"))
        #expect(error.response.status == .conflict)
        // A body that is not the error type leaves the plain status error.
        #expect(throws: ResponseError.self) { try request.decode(response(.badGateway, "<html>")) }
        // Accepted statuses still decode normally.
        #expect(try request.decode(response(.ok, #"{"id":42,"name":"Zoë"}"#)).id == 42)
    }

    @Test func decodingFailuresCarryTheStatusAndAnExcerptWithSecretsHidden() throws {
        let body =
            #"{"id":42,"nmae":"Zoë","access_token":"s3cr3t-t0ken","padding":"\#(String(repeating: "x", count: 400))"}"#
        let error = try #require(throws: ResponseError.self) {
            try Request<Person>.person(42).decode(response(.ok, body))
        }
        #expect(error.kind == .undecodable)
        #expect(error.underlyingError is DecodingError)
        let text = error.description
        #expect(
            text.hasPrefix(
                "undecodable: GET https://api.example.com/people/42 answered 200 OK, but its body is not a Person"))
        #expect(text.contains(#"keyNotFound "name" at the top level"#))
        #expect(text.contains(#""access_token":"<redacted>""#))
        #expect(!text.contains("s3cr3t"))
        #expect(text.hasSuffix("bytes)"))  // truncated excerpt
        #expect(text.count < 600)
    }

    @Test func retypingKeepsTheRequestAndItsRules() throws {
        struct Summary: Decodable, Sendable { var id: Int }
        let summary = Request<Person>.person(7).accepting(.accepted).withResponse(Summary.self)
        #expect(summary.underlyingRequest.path == "/people/7")
        #expect(try summary.decode(response(.accepted, #"{"id":7}"#)).id == 7)
        let name = Request<Person>.person(7).map(\.name)
        #expect(try name.decode(response(.ok, #"{"id":7,"name":"Ann"}"#)) == "Ann")
        #expect(throws: ResponseError.self) { try name.decode(response(.notFound)) }
    }
}

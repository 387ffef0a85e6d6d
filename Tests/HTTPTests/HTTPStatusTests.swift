import HTTP
import Testing

@Suite(.noHang) struct HTTPStatusTests {
    @Test(arguments: [
        (100, HTTPStatus.Kind.informational), (204, .success), (304, .redirection), (404, .clientError),
        (503, .serverError), (99, .invalid), (600, .invalid),
    ])
    func kindIsTheFirstDigit(code: Int, kind: HTTPStatus.Kind) {
        #expect(HTTPStatus(rawValue: code).kind == kind)
    }

    @Test func classChecks() {
        #expect(HTTPStatus.ok.isSuccess)
        #expect(HTTPStatus.found.isRedirection)
        #expect(HTTPStatus.notFound.isClientError && !HTTPStatus.notFound.isSuccess)
        #expect(HTTPStatus.serviceUnavailable.isServerError)
        #expect(HTTPStatus.continue.isInformational)
    }

    @Test func descriptionIncludesTheReasonPhraseWhenKnown() {
        #expect(HTTPStatus.notFound.description == "404 Not Found")
        #expect(HTTPStatus(rawValue: 299).description == "299")
        #expect(HTTPStatus.tooManyRequests.reasonPhrase == "Too Many Requests")
        #expect(HTTPStatus.ok < HTTPStatus.notFound)
    }
}

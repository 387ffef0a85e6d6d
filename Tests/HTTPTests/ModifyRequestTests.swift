import Foundation
import HTTP
import Testing

private struct MissingToken: Error {}

@Suite(.noHang) struct ModifyRequestTests {
    @Test func sendsTheModifiedRequest() async {
        let mock = MockLoader().then(status: .ok)
        let chain =
            ModifyRequest { request in
                var copy = request
                copy.headers["X-API-Key"] = "k"
                copy.path = "/v2" + copy.path
                return copy
            } --> mock
        _ = await chain.load(HTTPRequest(host: "example.com", path: "/people"))
        #expect(mock.receivedRequests.first?.headers["x-api-key"] == "k")
        #expect(mock.receivedRequests.first?.path == "/v2/people")
    }

    @Test func aThrowingClosureFailsWithInvalidRequestAndSendsNothing() async {
        let mock = MockLoader().then(status: .ok)
        let chain = ModifyRequest { _ in throw MissingToken() } --> mock
        let result = await chain.load(HTTPRequest(host: "example.com"))
        #expect(result.error?.code == .invalidRequest)
        #expect(result.error?.underlyingError is MissingToken)
        #expect(result.error?.message.contains("ModifyRequest") == true)
        #expect(mock.receivedRequests.isEmpty)
    }

    @Test func aThrownHTTPErrorPassesThroughUnchanged() async {
        let chain = ModifyRequest { request in throw HTTPError(.cannotAuthenticate, request: request) } --> MockLoader()
        let result = await chain.load(HTTPRequest(host: "example.com"))
        #expect(result.error?.code == .cannotAuthenticate)
    }
}

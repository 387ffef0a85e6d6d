import Foundation
import HTTP
import HTTPAuth
import Testing

/// What BasicAuth's errors say: after the server refused the credentials it was given, that refusal — not a missing
/// delegate, which is only why nothing else was tried.
@Suite(.noHang) struct BasicAuthMessagesTests {
    static let challenge: HTTPHeaders = ["WWW-Authenticate": "Basic realm=\"reports\""]

    @Test func credentialsGivenAtInitAndRefusedSayTheServerRefusedThem() async throws {
        let mock = MockLoader().then(status: .unauthorized, headers: Self.challenge)
        let chain = BasicAuth(origins: ["api.example.com"], credentials: ann) --> mock
        let error = try #require(await chain.load(basicRequest()).error)
        #expect(error.code == .cannotAuthenticate)
        #expect(error.message.hasPrefix("the server refused BasicAuth's credentials (HTTP 401)"), "\(error.message)")
        #expect(!error.message.contains("has no delegate"), "\(error.message)")
        #expect(error.response?.status == .unauthorized)
        #expect(!error.description.contains(ann.password), "\(error)")
    }

    @Test func aDelegateWithNoOtherAnswerAfterARefusalSaysTheServerRefusedTheCredentials() async throws {
        let delegate = ScriptedDelegate(answers: [ann, nil])
        let mock = MockLoader().then(status: .unauthorized, headers: Self.challenge)
        let chain = BasicAuth(origins: ["api.example.com"], delegate: delegate) --> mock
        let error = try #require(await chain.load(basicRequest()).error)
        #expect(delegate.timesAsked == 2)
        #expect(error.code == .cannotAuthenticate)
        #expect(
            error.message
                == "the server refused BasicAuth's credentials (HTTP 401), and the delegate provided no others",
            "\(error.message)")
        #expect(error.response?.status == .unauthorized)
        #expect(mock.receivedRequests.count == 1, "nothing was replayed without credentials")
    }

    @Test func withNoCredentialsAndNoDelegateItSaysThereIsNoDelegate() async throws {
        // Nothing was sent, so nothing was refused: the missing delegate is the whole story.
        let mock = MockLoader().then(status: .ok)
        let error = try #require(await (BasicAuth(origins: ["api.example.com"]) --> mock).load(basicRequest()).error)
        #expect(error.message == "BasicAuth has no delegate to ask for credentials")
        #expect(error.response == nil)
        #expect(mock.receivedRequests.isEmpty)
    }

    @Test func aDelegateWithNoAnswerBeforeAnythingWasSentSaysSo() async throws {
        let delegate = ScriptedDelegate(answers: [nil])
        let chain = BasicAuth(origins: ["api.example.com"], delegate: delegate) --> MockLoader()
        let error = try #require(await chain.load(basicRequest()).error)
        #expect(error.message == "the delegate provided no credentials")
        #expect(!error.message.contains("refused"))
    }
}

import Foundation
import HTTP
import Testing

@Suite(.noHang) struct TransportCapabilitiesTests {
    static let linux = TransportCapabilities(
        name: "URLSession on Linux", canEvaluateServerTrust: false, clientIdentityForms: [])
    static let apple = TransportCapabilities(
        name: "URLSession", canEvaluateServerTrust: true, clientIdentityForms: [.secIdentity])

    static func pinned(_ url: String = "https://api.example.test/me") -> HTTPRequest {
        var request = HTTPRequest(url: URL(string: url)!)
        request.serverTrustPolicy = .evaluated(by: try! PublicKeyPinning(pins: [TrustFixtures.root.pin]))
        return request
    }

    static let identity = try! ClientIdentity(
        certificateChain: [TrustFixtures.leafRSA.der], privateKey: Data([0x30, 0]))

    @Test func urlSessionSaysWhatThisPlatformCanDo() {
        #if canImport(Security)
        #expect(TransportCapabilities.urlSession == Self.apple)
        #else
        #expect(TransportCapabilities.urlSession == Self.linux)
        #endif
    }

    @Test func aPinnedRequestOnURLSessionOnLinuxFailsClosedSayingWhy() throws {
        // Given a request with pins, on a transport without server-trust challenges
        let request = Self.pinned()

        // When it is about to be sent
        let refusal = Self.linux.refusal(of: request, with: TLSSettings().resolved(for: request))

        // Then it is refused, unsent, as an insecure connection, and the message says why
        let error = try #require(refusal)
        #expect(error.code == .insecureConnection)
        #expect(error.request.id == request.id)
        #expect(
            error.message
                == "URLSession on Linux cannot evaluate server trust, so the request's public-key pins cannot be "
                + "checked; it was not sent")
        #expect(
            error.description
                == "insecureConnection: GET https://api.example.test/me — URLSession on Linux cannot evaluate server "
                + "trust, so the request's public-key pins cannot be checked; it was not sent")
    }

    @Test func theLoadersEvaluatorFailsClosedTooAndNamesItsType() throws {
        let request = HTTPRequest(url: URL(string: "https://api.example.test/me")!)
        let loader = TLSSettings(serverTrustEvaluator: RecordingEvaluator())

        let error = try #require(Self.linux.refusal(of: request, with: loader.resolved(for: request)))

        #expect(
            error.message
                == "URLSession on Linux cannot evaluate server trust, so the request's server-trust evaluator "
                + "(RecordingEvaluator) cannot be checked; it was not sent")
    }

    @Test func aRequestThatOptsOutOfTheLoadersEvaluatorIsSent() {
        var request = HTTPRequest(url: URL(string: "https://cdn.example.test/a.png")!)
        request.serverTrustPolicy = .platformDefault
        let loader = TLSSettings(serverTrustEvaluator: RecordingEvaluator())
        #expect(Self.linux.refusal(of: request, with: loader.resolved(for: request)) == nil)
    }

    @Test func nothingToCheckIsNoReasonToRefuse() {
        for capabilities in [Self.linux, Self.apple] {
            let request = HTTPRequest(url: URL(string: "https://api.example.test/me")!)
            #expect(capabilities.refusal(of: request, with: TLSSettings()) == nil)
        }
    }

    @Test func aTransportThatCanEvaluateSendsAPinnedRequest() {
        let request = Self.pinned()
        #expect(Self.apple.refusal(of: request, with: TLSSettings().resolved(for: request)) == nil)
    }

    @Test(arguments: ["http://api.example.test/me", "HTTP://127.0.0.1:8080/"])
    func aPinnedPlainHTTPRequestIsRefusedEverywhere(url: String) throws {
        let request = Self.pinned(url)
        for capabilities in [Self.linux, Self.apple] {
            let error = try #require(capabilities.refusal(of: request, with: TLSSettings().resolved(for: request)))
            #expect(error.code == .insecureConnection)
            #expect(
                error.message
                    == "the request is plain \(request.scheme), so there is no certificate for its public-key pins to "
                    + "check; it was not sent")
        }
    }

    @Test func aClientIdentityOnURLSessionOnLinuxFailsClosed() throws {
        var request = HTTPRequest(url: URL(string: "https://mtls.example.test/")!)
        request.clientIdentity = Self.identity

        let error = try #require(Self.linux.refusal(of: request, with: TLSSettings().resolved(for: request)))

        #expect(error.code == .insecureConnection)
        #expect(
            error.message
                == "URLSession on Linux cannot present a client certificate, so the request's client identity cannot "
                + "be used; it was not sent")
        #expect(!error.description.contains(Data([0x30, 0]).base64EncodedString()))
    }

    @Test func aClientIdentityOfAFormTheTransportCannotPresentIsRefused() throws {
        let loader = TLSSettings(clientIdentity: Self.identity)
        let request = HTTPRequest(url: URL(string: "https://mtls.example.test/")!)

        let error = try #require(Self.apple.refusal(of: request, with: loader.resolved(for: request)))

        #expect(
            error.message
                == "URLSession presents client certificates only as SecIdentity, and the request's client identity is "
                + "a certificate chain and private key; it was not sent")
        let portable = TransportCapabilities(
            name: "AsyncHTTPClient", canEvaluateServerTrust: true, clientIdentityForms: [.certificateChainAndPrivateKey]
        )
        #expect(portable.refusal(of: request, with: loader.resolved(for: request)) == nil)
    }

    @Test func aClientIdentityOverPlainHTTPIsNoReasonToRefuse() {
        var request = HTTPRequest(url: URL(string: "http://127.0.0.1:8080/")!)
        request.clientIdentity = Self.identity
        #expect(Self.linux.refusal(of: request, with: TLSSettings().resolved(for: request)) == nil)
    }
}

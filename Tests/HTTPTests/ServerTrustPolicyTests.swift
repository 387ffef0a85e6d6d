import Foundation
import HTTP
import Testing

@Suite(.noHang) struct ServerTrustPolicyTests {
    @Test func aRequestUsesTheLoadersSettingsUnlessItSaysOtherwise() {
        let request = HTTPRequest(host: "api.example.test")
        #expect(request.serverTrustPolicy == .loaderDefault)
        #expect(request.clientIdentity == nil)
    }

    @Test func theOptionsAreSetPerRequest() throws {
        let pinning = try PublicKeyPinning(pins: [TrustFixtures.root.pin])
        let identity = try ClientIdentity(certificateChain: [TrustFixtures.leafRSA.der], privateKey: Data([0x30, 0]))
        var request = HTTPRequest(host: "api.example.test")
        request.serverTrustPolicy = .evaluated(by: pinning)
        request.clientIdentity = identity

        #expect(request.serverTrustPolicy == .evaluated(by: pinning))
        #expect(request.clientIdentity == identity)
        #expect(HTTPRequest(host: "api.example.test").serverTrustPolicy == .loaderDefault)
    }

    @Test func policiesAreEqualWhenTheirEvaluatorsAre() throws {
        let pinning = try PublicKeyPinning(pins: [TrustFixtures.root.pin])
        let samePins = try PublicKeyPinning(pins: ["sha256/" + TrustFixtures.root.pin])
        let policies: [ServerTrustPolicy] = [
            .loaderDefault, .platformDefault, .evaluated(by: pinning), .evaluated(by: RecordingEvaluator()),
            .evaluated(by: try PublicKeyPinning(pins: [TrustFixtures.root.pin], scope: .leafCertificate)),
        ]
        // Each differs from every other
        #expect(Set(policies).count == policies.count)
        // An equal evaluator makes an equal policy, with an equal hash
        #expect(ServerTrustPolicy.evaluated(by: samePins) == .evaluated(by: pinning))
        #expect(
            ServerTrustPolicy.evaluated(by: samePins).hashValue == ServerTrustPolicy.evaluated(by: pinning).hashValue)
        // Evaluators of different types are never equal
        #expect(ServerTrustPolicy.evaluated(by: RecordingEvaluator()) != .evaluated(by: pinning))
    }
}

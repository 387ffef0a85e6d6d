import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct TLSChallengeDecisionTests {
    static let chain = [TrustFixtures.leafRSA.der, TrustFixtures.intermediate.der, TrustFixtures.root.der]

    /// Decides a server-trust challenge for example.test:443, logging the platform's evaluation and the evaluator's.
    private func decide(
        _ settings: TLSSettings, platformFails: Bool = false, log: Locked<[String]>
    ) -> TLSChallengeDecision {
        struct PlatformRefusal: Error, CustomStringConvertible {
            var description: String { "certificate has expired" }
        }
        return settings.decideServerTrust(
            host: "example.test", port: 443,
            platformEvaluation: {
                log.withLock { $0.append("platform") }
                if platformFails { throw PlatformRefusal() }
            },
            trust: {
                log.withLock { $0.append("make trust") }
                return ServerTrust(host: "example.test", port: 443, certificateChain: Self.chain)
            })
    }

    @Test func withoutAnEvaluatorThePlatformDecidesAlone() {
        let log = Locked<[String]>([])
        guard case .performDefaultHandling = decide(TLSSettings(), log: log) else {
            Issue.record("expected default handling")
            return
        }
        #expect(log.value == [])
    }

    @Test func thePlatformEvaluatesFirstThenTheEvaluator() {
        let log = Locked<[String]>([])
        let evaluator = RecordingEvaluator()
        guard case .trustServer = decide(TLSSettings(serverTrustEvaluator: evaluator), log: log) else {
            Issue.record("expected the server to be trusted")
            return
        }
        #expect(log.value == ["platform", "make trust"])
        #expect(evaluator.log.value == ["evaluate example.test:443 (3 certificates)"])
    }

    @Test func aServerThePlatformRefusesNeverReachesTheEvaluator() throws {
        let log = Locked<[String]>([])
        let evaluator = RecordingEvaluator()

        let decision = decide(TLSSettings(serverTrustEvaluator: evaluator), platformFails: true, log: log)

        guard case .reject(let rejection) = decision else {
            Issue.record("expected a rejection")
            return
        }
        #expect(log.value == ["platform"])
        #expect(evaluator.log.value == [])
        let error = rejection.httpError(for: HTTPRequest(host: "example.test"))
        #expect(error.code == .insecureConnection)
        #expect(
            error.message
                == "no secure connection to example.test:443: the platform's trust evaluation failed: certificate has expired"
        )
    }

    @Test func anEvaluatorThatReplacesThePlatformsEvaluationDecidesAlone() {
        let log = Locked<[String]>([])
        let evaluator = RecordingEvaluator(defaultEvaluation: .replaced)
        guard case .trustServer = decide(TLSSettings(serverTrustEvaluator: evaluator), platformFails: true, log: log)
        else {
            Issue.record("expected the server to be trusted")
            return
        }
        #expect(log.value == ["make trust"])
    }

    @Test func aPinMismatchRefusesTheServerWithTheEvaluatorsError() throws {
        let pinning = try PublicKeyPinning(pins: [TrustFixtures.leafP384.pin])

        let decision = decide(TLSSettings(serverTrustEvaluator: pinning), log: Locked([]))

        guard case .reject(let rejection) = decision else {
            Issue.record("expected a rejection")
            return
        }
        let error = rejection.httpError(for: HTTPRequest(host: "example.test"))
        #expect(error.code == .insecureConnection)
        let failure = try #require(error.underlyingError as? PublicKeyPinning.Failure)
        #expect(failure.host == "example.test")
        #expect(error.message == "server trust refused by PublicKeyPinning: \(failure)")
        #expect(
            error.message.hasPrefix("server trust refused by PublicKeyPinning: example.test:443 presented no pinned"))
        // Public keys' pins are no secret: the description keeps them for the developer
        #expect(error.description.contains(TrustFixtures.root.pin))
    }

    @Test func aClientCertificateChallengeGetsTheIdentityOrNone() throws {
        guard case .performDefaultHandling = TLSSettings().decideClientCertificate() else {
            Issue.record("expected default handling without an identity")
            return
        }
        let identity = try ClientIdentity(certificateChain: [TrustFixtures.leafRSA.der], privateKey: Data([0x30, 0]))
        guard case .present(let presented) = TLSSettings(clientIdentity: identity).decideClientCertificate() else {
            Issue.record("expected the identity")
            return
        }
        #expect(presented == identity)
    }
}

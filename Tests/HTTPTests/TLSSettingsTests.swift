import Foundation
import HTTP
import Testing

@Suite(.noHang) struct TLSSettingsTests {
    static let loaderEvaluator = RecordingEvaluator(name: "loader's")
    static let requestEvaluator = RecordingEvaluator(name: "request's")

    static func identity(_ fixture: TrustFixtures.Certificate) -> ClientIdentity {
        // The fixtures are valid certificates and the key a DER SEQUENCE: this cannot fail.
        try! ClientIdentity(certificateChain: [fixture.der], privateKey: Data([0x30, 0]))
    }

    @Test func withoutRequestOptionsTheLoadersSettingsApply() {
        let loader = TLSSettings(
            serverTrustEvaluator: Self.loaderEvaluator, clientIdentity: Self.identity(TrustFixtures.leafRSA))
        #expect(loader.resolved(for: HTTPRequest(host: "a.test")) == loader)
        #expect(TLSSettings().resolved(for: HTTPRequest(host: "a.test")) == TLSSettings())
    }

    @Test func theRequestsPolicyTakesPrecedence() {
        let loader = TLSSettings(serverTrustEvaluator: Self.loaderEvaluator)
        var request = HTTPRequest(host: "a.test")

        request.serverTrustPolicy = .evaluated(by: Self.requestEvaluator)
        #expect(loader.resolved(for: request) == TLSSettings(serverTrustEvaluator: Self.requestEvaluator))
        #expect(TLSSettings().resolved(for: request) == TLSSettings(serverTrustEvaluator: Self.requestEvaluator))

        request.serverTrustPolicy = .platformDefault
        #expect(loader.resolved(for: request).serverTrustEvaluator == nil)

        request.serverTrustPolicy = .loaderDefault
        #expect(loader.resolved(for: request) == loader)
    }

    @Test func theRequestsClientIdentityReplacesTheLoaders() {
        let loader = TLSSettings(
            serverTrustEvaluator: Self.loaderEvaluator, clientIdentity: Self.identity(TrustFixtures.leafRSA))
        var request = HTTPRequest(host: "a.test")
        request.clientIdentity = Self.identity(TrustFixtures.leafP384)

        let settings = loader.resolved(for: request)

        #expect(settings.clientIdentity == Self.identity(TrustFixtures.leafP384))
        #expect(settings.serverTrustEvaluator.map { AnyHashable($0) } == AnyHashable(Self.loaderEvaluator))
    }

    @Test func settingsAreEqualWhenEvaluatorAndIdentityAre() {
        let all = [
            TLSSettings(),
            TLSSettings(serverTrustEvaluator: Self.loaderEvaluator),
            TLSSettings(serverTrustEvaluator: Self.requestEvaluator),
            TLSSettings(clientIdentity: Self.identity(TrustFixtures.leafRSA)),
            TLSSettings(
                serverTrustEvaluator: Self.loaderEvaluator, clientIdentity: Self.identity(TrustFixtures.leafRSA)),
        ]
        #expect(Set(all).count == all.count)
        let copy = TLSSettings(
            serverTrustEvaluator: RecordingEvaluator(name: "loader's"),
            clientIdentity: Self.identity(TrustFixtures.leafRSA))
        #expect(copy == all[4] && copy.hashValue == all[4].hashValue)
    }
}

import Foundation
import HTTP
import Testing

@Suite(.noHang) struct PublicKeyPinningTests {
    /// The fixtures' chain, leaf first: leaf (RSA), intermediate, root.
    static let chain = [TrustFixtures.leafRSA.der, TrustFixtures.intermediate.der, TrustFixtures.root.der]

    private func trust(_ chain: [Data] = chain, host: String = "example.test", port: Int = 443) -> ServerTrust {
        ServerTrust(host: host, port: port, certificateChain: chain)
    }

    // MARK: Pins

    @Test(arguments: TrustFixtures.all)
    func thePinOfACertificateIsOpenSSLs(_ fixture: TrustFixtures.Certificate) throws {
        #expect(try PublicKeyPinning.pin(forCertificate: fixture.der) == fixture.pin)
    }

    @Test func aPinOfSomethingThatIsNotACertificateIsAnError() {
        let error = #expect(throws: TLSConfigurationError.self) {
            try PublicKeyPinning.pin(forCertificate: Data("-----BEGIN CERTIFICATE-----".utf8))
        }
        #expect(
            error?.message
                == "not a DER-encoded X.509 certificate: expected the certificate (tag 0x30), found tag 0x2d at byte 0"
        )
    }

    @Test func pinsAreBase64SHA256DigestsWithOrWithoutThePrefix() throws {
        let pinning = try PublicKeyPinning(pins: [
            " \(TrustFixtures.root.pin)\n", "sha256/\(TrustFixtures.intermediate.pin)",
        ])
        #expect(pinning.pins == [TrustFixtures.root.pin, TrustFixtures.intermediate.pin])
        #expect(pinning.scope == .anyCertificate)
        #expect(pinning.defaultEvaluation == .required)
    }

    @Test(arguments: [
        ("not base64!", "'not base64!' is not a pin: expected the base64 encoding of a 32-byte SHA-256 digest"),
        (
            Data(count: 31).base64EncodedString(),
            "'\(Data(count: 31).base64EncodedString())' is not a pin: expected the base64 encoding of a 32-byte "
                + "SHA-256 digest"
        ),
        ("", "'' is not a pin: expected the base64 encoding of a 32-byte SHA-256 digest"),
    ])
    func aMalformedPinIsRefused(pin: String, message: String) {
        let error = #expect(throws: TLSConfigurationError.self) {
            try PublicKeyPinning(pins: [TrustFixtures.root.pin, pin])
        }
        #expect(error?.message == message)
    }

    @Test func anEmptyPinSetIsRefused() {
        let error = #expect(throws: TLSConfigurationError.self) { try PublicKeyPinning(pins: [String]()) }
        #expect(error?.message == "no pins: a pin set without pins would refuse every server")
    }

    @Test func equalPinSetsAreEqualEvaluators() throws {
        let one = try PublicKeyPinning(pins: [TrustFixtures.root.pin, "sha256/\(TrustFixtures.leafRSA.pin)"])
        let other = try PublicKeyPinning(pins: [TrustFixtures.leafRSA.pin, TrustFixtures.root.pin])
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(one != (try PublicKeyPinning(pins: [TrustFixtures.root.pin], scope: .leafCertificate)))
    }

    // MARK: Evaluation

    @Test(arguments: [TrustFixtures.leafRSA, TrustFixtures.intermediate, TrustFixtures.root])
    func anyCertificateOfTheChainMayCarryThePin(_ pinned: TrustFixtures.Certificate) throws {
        let pinning = try PublicKeyPinning(pins: [pinned.pin])
        #expect(throws: Never.self) { try pinning.evaluate(trust()) }
    }

    @Test func withLeafScopeOnlyTheServersOwnKeyCounts() throws {
        let leafOnly = try PublicKeyPinning(pins: [TrustFixtures.root.pin], scope: .leafCertificate)
        let failure = #expect(throws: PublicKeyPinning.Failure.self) { try leafOnly.evaluate(trust()) }
        #expect(failure?.description.contains("(checked: the leaf certificate only)") == true)

        let leafPinned = try PublicKeyPinning(pins: [TrustFixtures.leafRSA.pin], scope: .leafCertificate)
        #expect(throws: Never.self) { try leafPinned.evaluate(trust()) }
    }

    @Test func aMismatchNamesTheServerAndListsTheChainsPins() throws {
        // Given pins for keys the chain does not have
        let pinning = try PublicKeyPinning(pins: [TrustFixtures.leafP384.pin, TrustFixtures.selfSignedEd25519.pin])

        // When the chain is evaluated
        let failure = #expect(throws: PublicKeyPinning.Failure.self) {
            try pinning.evaluate(trust(host: "api.example.test", port: 8443))
        }

        // Then the failure says which server, and what its pins are, leaf first
        let expectedPins = [TrustFixtures.leafRSA.pin, TrustFixtures.intermediate.pin, TrustFixtures.root.pin]
        #expect(failure?.host == "api.example.test")
        #expect(failure?.port == 8443)
        #expect(failure?.presentedPins == expectedPins)
        #expect(
            failure?.description
                == "api.example.test:8443 presented no pinned public key (checked: any certificate of the chain); "
                + "the chain's pins, leaf first: 1: \"\(expectedPins[0])\", 2: \"\(expectedPins[1])\", "
                + "3: \"\(expectedPins[2])\"")
    }

    @Test func anEmptyChainIsRefused() throws {
        let pinning = try PublicKeyPinning(pins: [TrustFixtures.root.pin])
        let failure = #expect(throws: PublicKeyPinning.Failure.self) { try pinning.evaluate(trust([])) }
        #expect(failure?.presentedPins == [])
        #expect(failure?.description == "example.test:443 presented no certificate, so no pinned public key")
    }

    @Test func anUnreadableCertificateIsListedAndNeverMatches() throws {
        let garbage = Data([0x30, 0x03, 0x02, 0x01, 0x01])
        let pinning = try PublicKeyPinning(pins: [TrustFixtures.root.pin])

        // A readable pinned certificate later in the chain still counts
        #expect(throws: Never.self) { try pinning.evaluate(trust([garbage, TrustFixtures.root.der])) }

        // Unreadable certificates alone are refused, and the failure says why each could not be read
        let failure = #expect(throws: PublicKeyPinning.Failure.self) {
            try pinning.evaluate(trust([garbage, Data()], host: "::1"))
        }
        #expect(failure?.presentedPins == [nil, nil])
        #expect(
            failure?.description
                == "[::1]:443 presented no pinned public key (checked: any certificate of the chain); the chain's pins, "
                + "leaf first: 1: unreadable (not a DER-encoded X.509 certificate: expected the to-be-signed "
                + "certificate (tag 0x30), found tag 0x02 at byte 2), 2: unreadable (not a DER-encoded X.509 "
                + "certificate: expected the certificate, found the end of the input at byte 0)")
    }

    @Test func randomChainsNeverTrapAndPassOnlyWithAPinnedKeyInScope() throws {
        let seed = randomSeed("PublicKeyPinningTests.randomChains")
        var random = SplitMix64(seed: seed)
        let fixtures = TrustFixtures.all
        for _ in 0..<300 {
            let pinned = Array(fixtures.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random)))
            let scope: PublicKeyPinning.Scope = Bool.random(using: &random) ? .anyCertificate : .leafCertificate
            let pinning = try PublicKeyPinning(pins: pinned.map(\.pin), scope: scope)
            var chain: [Data] = []
            var pinsInChain: [String?] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                if Int.random(in: 0..<4, using: &random) == 0 {
                    chain.append(Data(DER.randomBytes(0...40, using: &random)))
                    pinsInChain.append(nil)
                } else {
                    let fixture = fixtures.randomElement(using: &random)!
                    chain.append(fixture.der)
                    pinsInChain.append(fixture.pin)
                }
            }
            let inScope = scope == .leafCertificate ? Array(pinsInChain.prefix(1)) : pinsInChain
            let shouldPass = inScope.contains { $0.map(pinning.pins.contains) ?? false }
            do {
                try pinning.evaluate(trust(chain))
                #expect(shouldPass, "seed \(seed)")
            } catch let failure as PublicKeyPinning.Failure {
                #expect(!shouldPass, "seed \(seed)")
                #expect(failure.presentedPins == pinsInChain, "seed \(seed)")
            }
        }
    }

    // MARK: Certificates made during the run

    @Test(.enabled(if: OpenSSLTool.isAvailable, "needs the openssl command"))
    func pinsMatchOpenSSLForCertificatesMadeNow() throws {
        let directory = try OpenSSLTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = [
            "rsa:1024", "rsa:2048", "ec -pkeyopt ec_paramgen_curve:P-256", "ec -pkeyopt ec_paramgen_curve:P-521",
            "ed25519", "ed448",
        ]
        for (index, key) in keys.enumerated() {
            try OpenSSLTool.shell(
                "openssl req -x509 -newkey \(key) -nodes -keyout \(index).key -subj /CN=run\(index) -days 1 "
                    + "-out \(index).pem",
                in: directory)
            let pem = try String(contentsOf: directory.appendingPathComponent("\(index).pem"), encoding: .utf8)
            let der = try #require(try PEMBlocks.certificates(in: pem).first)
            let expected = try OpenSSLTool.pin(ofCertificateFile: "\(index).pem", in: directory)
            #expect(try PublicKeyPinning.pin(forCertificate: der) == expected, "\(key)")
        }
    }

    // MARK: The TLS servers' certificates (scripts/servers.sh)

    /// The folder `scripts/tls-servers.py certs` wrote: `ca.pem` and each server's `NAME.pem`.
    static let tlsCertificates = TestServers.tlsCAFile?.deletingLastPathComponent()

    private func certificate(_ name: String) throws -> Data {
        let directory = try #require(Self.tlsCertificates)
        let pem = try String(contentsOf: directory.appendingPathComponent("\(name).pem"), encoding: .utf8)
        return try #require(try PEMBlocks.certificates(in: pem).first)
    }

    @Test(.enabled(if: TestServers.tlsCAFile != nil, "needs TLS_CA_FILE: run through scripts/test.sh"))
    func pinningTheTestCAAcceptsItsServersOnly() throws {
        let ca = try certificate("ca")
        let pinning = try PublicKeyPinning(pins: [try PublicKeyPinning.pin(forCertificate: ca)])

        // The chains a client that trusts the CA validates: each server's certificate, then the CA's
        for name in ["trusted", "expired", "wrong-name"] {
            #expect(throws: Never.self, "\(name)") {
                try pinning.evaluate(trust([try certificate(name), ca], host: "127.0.0.1"))
            }
        }
        let selfSigned = try certificate("self-signed")
        let failure = #expect(throws: PublicKeyPinning.Failure.self) {
            try pinning.evaluate(trust([selfSigned], host: "127.0.0.1"))
        }
        #expect(failure?.presentedPins == [try PublicKeyPinning.pin(forCertificate: selfSigned)])

        // Pinned to the CA's key, a leaf-only evaluator refuses even the trusted server
        let leafOnly = try PublicKeyPinning(pins: pinning.pins, scope: .leafCertificate)
        #expect(throws: PublicKeyPinning.Failure.self) {
            try leafOnly.evaluate(trust([try certificate("trusted"), ca], host: "127.0.0.1"))
        }
    }

    @Test(
        .enabled(if: TestServers.tlsCAFile != nil, "needs TLS_CA_FILE: run through scripts/test.sh"),
        .enabled(if: OpenSSLTool.isAvailable, "needs the openssl command"))
    func theTLSServersPinsMatchOpenSSLs() throws {
        let directory = try #require(Self.tlsCertificates)
        for name in ["ca", "self-signed", "expired", "wrong-name", "trusted"] {
            let expected = try OpenSSLTool.pin(ofCertificateFile: "\(name).pem", in: directory)
            #expect(try PublicKeyPinning.pin(forCertificate: try certificate(name)) == expected, "\(name)")
        }
    }

    @Test(
        .enabled(if: TestServers.tlsTrusted != nil, "needs TLS_TRUSTED_URL: run through scripts/test.sh"),
        .enabled(if: OpenSSLTool.isAvailable, "needs the openssl command"))
    func theTrustedServerPresentsTheCertificateWhosePinWeCompute() throws {
        // Given the chain the trusted server sends in its handshake, as openssl s_client shows it
        let url = try #require(TestServers.tlsTrusted)
        let directory = try OpenSSLTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shown = try OpenSSLTool.shell(
            "openssl s_client -connect 127.0.0.1:\(url.port ?? 443) -servername localhost -showcerts", in: directory)
        let presented = try PEMBlocks.certificates(in: String(decoding: shown, as: UTF8.self))

        // Then it is the server's certificate file, and pinning its key (or, with the CA, the CA's) accepts it
        #expect(presented == [try certificate("trusted")])
        let leafPin = try PublicKeyPinning.pin(forCertificate: try #require(presented.first))
        #expect(throws: Never.self) {
            try PublicKeyPinning(pins: [leafPin], scope: .leafCertificate).evaluate(trust(presented, host: "127.0.0.1"))
        }
        let caPin = try PublicKeyPinning.pin(forCertificate: try certificate("ca"))
        #expect(throws: PublicKeyPinning.Failure.self) {
            try PublicKeyPinning(pins: [caPin]).evaluate(trust(presented, host: "127.0.0.1"))
        }
    }
}

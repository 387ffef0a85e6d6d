import Foundation
import HTTP
import Testing

@Suite(.noHang) struct ClientIdentityTests {
    /// Stands in for a private key: a DER SEQUENCE, which is all the identity checks. Not a key: no private key is
    /// kept in this repository.
    static let standInKey = Data(
        DER.sequence(DER.element(0x02, [0]), DER.element(0x04, Array(repeating: 0x5A, count: 32))))

    private func pem(_ label: String, _ data: Data) -> String {
        "-----BEGIN \(label)-----\n\(data.base64EncodedString(options: .lineLength64Characters))\n-----END \(label)-----\n"
    }

    @Test func aChainAndKeyIdentityKeepsBoth() throws {
        let chain = [TrustFixtures.leafRSA.der, TrustFixtures.intermediate.der]
        let identity = try ClientIdentity(certificateChain: chain, privateKey: Self.standInKey)
        #expect(identity.form == .certificateChainAndPrivateKey)
        #expect(identity.certificateChain == chain)
        #expect(identity.privateKey == Self.standInKey)
    }

    @Test func theDescriptionNeverShowsTheKey() throws {
        let identity = try ClientIdentity(certificateChain: [TrustFixtures.leafRSA.der], privateKey: Self.standInKey)
        let texts = [identity.description, identity.debugDescription, "\(identity)", String(reflecting: identity)]
        for text in texts {
            #expect(text == "ClientIdentity(1 certificate, private key <redacted>)")
        }
        let dumped = { () -> String in
            var output = ""
            dump(identity, to: &output)
            return output
        }()
        #expect(!dumped.contains(Self.standInKey.base64EncodedString()))
    }

    @Test func equalChainsAndKeysAreEqualIdentities() throws {
        let one = try ClientIdentity(certificateChain: [TrustFixtures.leafRSA.der], privateKey: Self.standInKey)
        let same = try ClientIdentity(certificateChain: [TrustFixtures.leafRSA.der], privateKey: Self.standInKey)
        let other = try ClientIdentity(certificateChain: [TrustFixtures.leafP384.der], privateKey: Self.standInKey)
        #expect(one == same && one.hashValue == same.hashValue)
        #expect(one != other)
    }

    @Test(arguments: [
        ([Data](), Data([0x30, 0x00]), "a client identity needs at least one certificate"),
        (
            [TrustFixtures.root.der, Data([0x30, 0x00])], Data([0x30, 0x00]),
            "certificate 2 of the client identity is not a DER-encoded X.509 certificate: expected the to-be-signed "
                + "certificate, found the end of the input at byte 2"
        ),
        ([TrustFixtures.root.der], Data(), "the client identity's private key is not a DER-encoded key"),
        (
            [TrustFixtures.root.der], Data([0x02, 0x01, 0x00]),
            "the client identity's private key is not a DER-encoded key"
        ),
        (
            [TrustFixtures.root.der], Data([0x30, 0x00, 0x00]),
            "the client identity's private key is not a DER-encoded key"
        ),
    ])
    func unusableChainsAndKeysAreRefused(chain: [Data], key: Data, message: String) {
        let error = #expect(throws: TLSConfigurationError.self) {
            try ClientIdentity(certificateChain: chain, privateKey: key)
        }
        #expect(error?.message == message)
        #expect(error.map { !"\($0)".contains(key.base64EncodedString()) || key.isEmpty } == true)
    }

    @Test(arguments: ["PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"])
    func aPEMWithTheChainAndAKeyInAnyOrderIsAnIdentity(keyLabel: String) throws {
        let text =
            "Bag Attributes: ignored\n" + pem("CERTIFICATE", TrustFixtures.leafRSA.der) + pem(keyLabel, Self.standInKey)
            + pem("CERTIFICATE", TrustFixtures.intermediate.der)
        let identity = try ClientIdentity(pemEncoded: text)
        #expect(identity.certificateChain == [TrustFixtures.leafRSA.der, TrustFixtures.intermediate.der])
        #expect(identity.privateKey == Self.standInKey)
    }

    @Test func aPEMIdentityNeedsExactlyOneUnencryptedKeyAndACertificate() {
        let certificate = pem("CERTIFICATE", TrustFixtures.leafRSA.der)
        let key = pem("PRIVATE KEY", Self.standInKey)
        let cases: [(String, String)] = [
            (certificate, "the client identity's PEM holds 0 private keys; it needs exactly one"),
            (certificate + key + key, "the client identity's PEM holds 2 private keys; it needs exactly one"),
            (key, "a client identity needs at least one certificate"),
            (
                certificate + pem("ENCRYPTED PRIVATE KEY", Self.standInKey),
                "the client identity's private key is encrypted; decrypt it first (openssl pkey)"
            ),
            (
                "-----BEGIN CERTIFICATE-----\nAQID\n",
                "the client identity is not PEM: the CERTIFICATE block of line 1 has no END line"
            ),
        ]
        for (text, message) in cases {
            let error = #expect(throws: TLSConfigurationError.self) { try ClientIdentity(pemEncoded: text) }
            #expect(error?.message == message)
        }
    }

    @Test(.enabled(if: OpenSSLTool.isAvailable, "needs the openssl command"))
    func aRealKeyAndCertificateFromOpenSSLMakeAnIdentity() throws {
        // Made now and removed at once: a throwaway key never lands in the repository.
        let directory = try OpenSSLTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try OpenSSLTool.shell(
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key "
                + "-subj /CN=client -days 1 -out client.pem && cat client.pem client.key > identity.pem",
            in: directory)
        let text = try String(contentsOf: directory.appendingPathComponent("identity.pem"), encoding: .utf8)

        let identity = try ClientIdentity(pemEncoded: text)

        #expect(identity.certificateChain.count == 1)
        #expect(identity.privateKey?.first == 0x30)
        #expect(!identity.description.contains(identity.privateKey?.base64EncodedString() ?? "?"))
    }
}

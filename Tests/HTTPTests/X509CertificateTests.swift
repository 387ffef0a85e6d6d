import Foundation
import HTTP
import Testing

@Suite(.noHang) struct X509CertificateTests {
    @Test(arguments: TrustFixtures.all)
    func readsTheSubjectPublicKeyInfoOfRealCertificates(_ fixture: TrustFixtures.Certificate) throws {
        let der = [UInt8](fixture.der)
        try #require(!der.isEmpty)

        let certificate = try X509Certificate(derEncoded: der)

        // OpenSSL hashed the DER of the same SubjectPublicKeyInfo: equal digests mean equal bytes.
        let spki = certificate.subjectPublicKeyInfo
        #expect(Data(SHA256.hash(spki)).base64EncodedString() == fixture.pin)
        #expect(spki.first == 0x30)
        #expect(spki.startIndex > 0 && spki.endIndex < der.count)
    }

    @Test func readsAVersion1CertificateWithoutTheVersionField() throws {
        let der = [UInt8](TrustFixtures.version1.der)
        // The to-be-signed certificate starts with the serial number's INTEGER, not [0].
        var reader = DERReader(der[...])
        let outer = try reader.read(.sequence, "the certificate")
        var inside = DERReader(contentsOf: outer, within: reader)
        let tbs = try inside.read(.sequence, "the to-be-signed certificate")
        #expect(tbs.contents.first == 0x02)

        #expect(throws: Never.self) { try X509Certificate(derEncoded: der) }
    }

    @Test(arguments: TrustFixtures.all)
    func everyTruncationOfARealCertificateIsRefused(_ fixture: TrustFixtures.Certificate) {
        let der = [UInt8](fixture.der)
        for count in 0..<der.count {
            #expect(throws: DERReader.Failure.self, "\(count) of \(der.count) bytes") {
                try X509Certificate(derEncoded: Array(der.prefix(count)))
            }
        }
    }

    @Test func trailingBytesAreRefused() {
        let der = [UInt8](TrustFixtures.leafRSA.der)
        let error = #expect(throws: DERReader.Failure.self) { try X509Certificate(derEncoded: der + [0]) }
        #expect(error?.description == "1 unexpected bytes after the certificate at byte \(der.count)")
    }

    @Test func failuresSayWhatWasExpectedAndWhere() {
        let notACertificate = DER.sequence(DER.element(0x02, [1]))
        let error = #expect(throws: DERReader.Failure.self) { try X509Certificate(derEncoded: notACertificate) }
        #expect(error?.description == "expected the to-be-signed certificate (tag 0x30), found tag 0x02 at byte 2")

        let withoutKey = DER.sequence(
            DER.sequence(
                DER.element(0x02, [1]), DER.sequence(), DER.sequence(), DER.sequence(), DER.sequence()),
            DER.sequence(), DER.element(0x03, [0]))
        let missingKey = #expect(throws: DERReader.Failure.self) { try X509Certificate(derEncoded: withoutKey) }
        #expect(
            missingKey?.description == "expected the subject public key info, found the end of the input at byte 15")
    }

    // MARK: Randomised

    @Test func randomlyShapedCertificatesGiveBackTheirPublicKeyInfo() throws {
        let seed = randomSeed("X509CertificateTests.randomlyShaped")
        var random = SplitMix64(seed: seed)
        for _ in 0..<1_000 {
            let (der, publicKeyInfo) = DER.randomCertificate(using: &random)
            let certificate = try #require(try? X509Certificate(derEncoded: der), "seed \(seed)")
            #expect(Array(certificate.subjectPublicKeyInfo) == publicKeyInfo, "seed \(seed)")
        }
    }

    @Test func mutatedCertificatesNeverTrap() {
        let seed = randomSeed("X509CertificateTests.mutated")
        var random = SplitMix64(seed: seed)
        let originals = TrustFixtures.all.map { [UInt8]($0.der) }
        var parsed = 0
        for round in 0..<3_000 {
            var bytes: [UInt8]
            if round.isMultiple(of: 5) {
                bytes = DER.randomCertificate(using: &random).certificate
            } else {
                bytes = originals.randomElement(using: &random)!
            }
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                mutate(&bytes, using: &random)
            }
            guard let certificate = try? X509Certificate(derEncoded: bytes) else { continue }
            parsed += 1
            // What is read lies within the input and is a SEQUENCE.
            let spki = certificate.subjectPublicKeyInfo
            #expect(spki.startIndex >= 0 && spki.endIndex <= bytes.count, "seed \(seed)")
            #expect(spki.first == 0x30, "seed \(seed)")
        }
        print("X509CertificateTests.mutated: \(parsed) of 3000 mutated certificates still parse (seed \(seed))")
    }

    @Test func randomBytesNeverTrap() {
        let seed = randomSeed("X509CertificateTests.randomBytes")
        var random = SplitMix64(seed: seed)
        for _ in 0..<10_000 {
            var bytes = DER.randomBytes(0...200, using: &random)
            if Bool.random(using: &random) { bytes = DER.sequence(bytes) }
            #expect((try? X509Certificate(derEncoded: bytes)) == nil || bytes.first == 0x30, "seed \(seed)")
        }
    }

    /// One random change: a byte flipped or replaced, bytes inserted, removed or duplicated, or a length byte
    /// nudged (where the reader's bounds checks matter most).
    private func mutate(_ bytes: inout [UInt8], using random: inout SplitMix64) {
        guard !bytes.isEmpty else {
            bytes = DER.randomBytes(1...8, using: &random)
            return
        }
        let index = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
        case 1: bytes[index] = UInt8.random(in: 0...255, using: &random)
        case 2: bytes.insert(contentsOf: DER.randomBytes(1...4, using: &random), at: index)
        case 3: bytes.removeSubrange(index..<min(bytes.count, index + Int.random(in: 1...8, using: &random)))
        case 4: bytes.insert(contentsOf: bytes[index..<min(bytes.count, index + 16)], at: index)
        default: bytes[index] = bytes[index] &+ (Bool.random(using: &random) ? 1 : 255)
        }
    }
}

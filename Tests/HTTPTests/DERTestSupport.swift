import Foundation
import HTTP

/// A minimal DER writer for the tests: builds elements whose encoding the reader must take apart exactly.
enum DER {
    /// A length in DER: short form below 128, else the fewest big-endian bytes after `0x80 | count`.
    static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// One element: tag, length, contents.
    static func element(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        [tag] + length(contents.count) + contents
    }

    static func sequence(_ children: [UInt8]...) -> [UInt8] { element(0x30, children.flatMap { $0 }) }

    /// Random bytes of a length in `lengths`.
    static func randomBytes(_ lengths: ClosedRange<Int>, using random: inout SplitMix64) -> [UInt8] {
        (0..<Int.random(in: lengths, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// A certificate with the outline RFC 5280 gives and random contents (serial, names, dates, key, signature),
    /// sometimes without the version field and sometimes with extensions; lengths range over short and long forms.
    ///
    /// - Returns: The certificate and its subject public key info element.
    static func randomCertificate(using random: inout SplitMix64) -> (certificate: [UInt8], publicKeyInfo: [UInt8]) {
        func any(_ lengths: ClosedRange<Int>) -> [UInt8] { randomBytes(lengths, using: &random) }
        let algorithm = sequence(element(0x06, any(1...12)), Bool.random(using: &random) ? element(0x05, []) : [])
        let publicKeyInfo = sequence(algorithm, element(0x03, [0] + any(0...600)))
        let version = Bool.random(using: &random) ? element(0xA0, element(0x02, [2])) : []
        let extensions = Bool.random(using: &random) ? element(0xA3, sequence(any(0...300))) : []
        let tbs = sequence(
            version,
            element(0x02, any(1...20)),
            algorithm,
            element(0x30, any(0...300)),
            sequence(element(0x17, any(13...13)), element(0x18, any(15...15))),
            element(0x30, any(0...300)),
            publicKeyInfo,
            extensions
        )
        return (sequence(tbs, algorithm, element(0x03, [0] + any(0...520))), publicKeyInfo)
    }
}

extension TrustFixtures.Certificate {
    /// The certificate's DER bytes.
    var der: Data {
        // The fixtures are OpenSSL's output: one well-formed CERTIFICATE block each.
        (try? PEMBlocks.certificates(in: pem).first) ?? Data()
    }
}

/// PEM certificate blocks, decoded with Foundation alone (independently of the package's `PEM`).
enum PEMBlocks {
    static func certificates(in text: String) throws -> [Data] {
        var result: [Data] = []
        var base64: String?
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line == "-----BEGIN CERTIFICATE-----" {
                base64 = ""
            } else if line == "-----END CERTIFICATE-----" {
                guard let encoded = base64, let data = Data(base64Encoded: encoded) else {
                    throw CocoaError(.coderReadCorrupt)
                }
                result.append(data)
                base64 = nil
            } else if base64 != nil {
                base64? += line
            }
        }
        return result
    }
}

/// The parts of a DER-encoded X.509 certificate (RFC 5280 §4.1) that pinning needs: its outline, checked, and
/// its subject public key info.
///
/// ```
/// Certificate ::= SEQUENCE {
///     tbsCertificate       SEQUENCE {
///         version              [0] EXPLICIT INTEGER OPTIONAL,
///         serialNumber         INTEGER,
///         signature            AlgorithmIdentifier (SEQUENCE),
///         issuer               Name (SEQUENCE),
///         validity             SEQUENCE,
///         subject              Name (SEQUENCE),
///         subjectPublicKeyInfo SEQUENCE { algorithm SEQUENCE, subjectPublicKey BIT STRING },
///         ... },             -- unique identifiers and extensions, not read
///     signatureAlgorithm   AlgorithmIdentifier (SEQUENCE),
///     signatureValue       BIT STRING }
/// ```
///
/// Nothing is verified — not the signature, dates, names or extensions: that is the platform's trust
/// evaluation's job. Reading is total: any bytes either give a certificate or throw a
/// ``DERReader/Failure`` that names what was expected and where.
package struct X509Certificate {
    /// The certificate exactly as given.
    package let derEncoded: [UInt8]

    /// The whole `subjectPublicKeyInfo` element (tag, length and value): the bytes an RFC 7469 pin hashes.
    package let subjectPublicKeyInfo: ArraySlice<UInt8>

    /// Reads a certificate.
    ///
    /// - Parameter derEncoded: One DER-encoded certificate and nothing else.
    /// - Throws: ``DERReader/Failure`` when the bytes are not a certificate of the outline above.
    package init(derEncoded: [UInt8]) throws(DERReader.Failure) {
        self.derEncoded = derEncoded

        var reader = DERReader(derEncoded[...])
        let certificate = try reader.read(.sequence, "the certificate")
        try reader.expectEnd(of: "the certificate")

        var outline = DERReader(contentsOf: certificate, within: reader)
        let tbs = try outline.read(.sequence, "the to-be-signed certificate")
        _ = try outline.read(.sequence, "the signature algorithm")
        _ = try outline.read(.bitString, "the signature")
        try outline.expectEnd(of: "the signature")

        var fields = DERReader(contentsOf: tbs, within: reader)
        if let version = try fields.readIfPresent(.contextSpecific(0), "the version") {
            var inner = DERReader(contentsOf: version, within: reader)
            _ = try inner.read(.integer, "the version number")
            try inner.expectEnd(of: "the version number")
        }
        _ = try fields.read(.integer, "the serial number")
        _ = try fields.read(.sequence, "the signature algorithm of the to-be-signed certificate")
        _ = try fields.read(.sequence, "the issuer")
        _ = try fields.read(.sequence, "the validity")
        _ = try fields.read(.sequence, "the subject")
        let publicKeyInfo = try fields.read(.sequence, "the subject public key info")

        var key = DERReader(contentsOf: publicKeyInfo, within: reader)
        _ = try key.read(.sequence, "the public key's algorithm")
        _ = try key.read(.bitString, "the public key")
        try key.expectEnd(of: "the public key")

        subjectPublicKeyInfo = publicKeyInfo.encoded
    }
}

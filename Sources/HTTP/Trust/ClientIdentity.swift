public import Foundation

#if canImport(Security)
public import Security
#endif

/// A client certificate and its private key, presented to servers that ask for one (mutual TLS).
///
/// Set it for every request of a loader (`URLSessionLoader(clientIdentity:)`) or for one request
/// (``HTTPRequest/clientIdentity``). A transport presents it when the server asks during the handshake; a
/// server that does not ask never sees it.
///
/// It comes in two forms (``Form``), and each transport takes the one its TLS stack understands:
///
/// | Transport | ``Form/secIdentity`` | ``Form/certificateChainAndPrivateKey`` |
/// |---|---|---|
/// | URLSession on Apple platforms | presented | refused before sending |
/// | URLSession on Linux | refused before sending | refused before sending |
/// | AsyncHTTPClient (`AsyncHTTPClientLoader`) | — | presented |
///
/// ```swift
/// // On Apple platforms: an identity from the keychain or from SecPKCS12Import.
/// let identity = ClientIdentity(secIdentity: keychainIdentity, intermediateCertificates: [intermediate])
///
/// // Anywhere: PEM with the certificate chain (leaf first) and the unencrypted private key.
/// let portable = try ClientIdentity(pemEncoded: String(contentsOf: pemURL, encoding: .utf8))
/// ```
///
/// The private key is a secret: the identity's description never shows it, and neither do errors.
public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// How an identity holds its key: which transports can present it.
    public struct Form: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// A Security framework identity (a certificate and a key reference, typically in the keychain), with
        /// intermediate certificates: what URLSession on Apple platforms presents.
        public static let secIdentity = Form(rawValue: "SecIdentity")

        /// A DER-encoded certificate chain and private key, independent of any platform's key store: what a
        /// transport over its own TLS stack (AsyncHTTPClient) presents.
        public static let certificateChainAndPrivateKey = Form(rawValue: "certificate chain and private key")
    }

    private enum Storage: Hashable, Sendable {
        case chainAndKey(certificates: [Data], privateKey: Data)
        #if canImport(Security)
        case security(SecurityIdentity)
        #endif
    }

    private let storage: Storage

    /// The form of this identity.
    public var form: Form {
        switch storage {
        case .chainAndKey: .certificateChainAndPrivateKey
        #if canImport(Security)
        case .security: .secIdentity
        #endif
        }
    }

    /// The DER-encoded certificates, the client's own first, of a ``Form/certificateChainAndPrivateKey``
    /// identity; empty for a ``Form/secIdentity``.
    public var certificateChain: [Data] {
        switch storage {
        case .chainAndKey(let certificates, _): certificates
        #if canImport(Security)
        case .security: []
        #endif
        }
    }

    /// The DER-encoded private key (PKCS #8, SEC 1 or PKCS #1) of a ``Form/certificateChainAndPrivateKey``
    /// identity; `nil` for a ``Form/secIdentity``. A secret: for the transport, never for logs.
    public var privateKey: Data? {
        switch storage {
        case .chainAndKey(_, let privateKey): privateKey
        #if canImport(Security)
        case .security: nil
        #endif
        }
    }

    /// Creates an identity from a DER-encoded certificate chain and private key.
    ///
    /// - Parameters:
    ///   - certificateChain: The client's certificate first, then the intermediates the server needs to build a
    ///     chain to a root it trusts (not the root itself).
    ///   - privateKey: The unencrypted private key of the first certificate, DER-encoded: PKCS #8
    ///     (`PRIVATE KEY`), SEC 1 (`EC PRIVATE KEY`) or PKCS #1 (`RSA PRIVATE KEY`).
    /// - Throws: ``TLSConfigurationError`` when the chain is empty, a certificate is not a DER-encoded X.509
    ///   certificate, or the key is not a DER `SEQUENCE`. (Whether the key matches the certificate is for the TLS
    ///   stack to find out.)
    public init(certificateChain: [Data], privateKey: Data) throws {
        guard !certificateChain.isEmpty else {
            throw TLSConfigurationError(message: "a client identity needs at least one certificate")
        }
        for (index, certificate) in certificateChain.enumerated() {
            do {
                _ = try X509Certificate(derEncoded: [UInt8](certificate))
            } catch {
                throw TLSConfigurationError(
                    message: "certificate \(index + 1) of the client identity is not a DER-encoded X.509 "
                        + "certificate: \(error)")
            }
        }
        var key = DERReader([UInt8](privateKey)[...])
        guard (try? key.read(.sequence, "the private key")) != nil, key.isAtEnd else {
            throw TLSConfigurationError(message: "the client identity's private key is not a DER-encoded key")
        }
        storage = .chainAndKey(certificates: certificateChain, privateKey: privateKey)
    }

    /// Creates an identity from PEM text holding the certificate chain and the private key.
    ///
    /// - Parameter pemEncoded: `CERTIFICATE` blocks, the client's own first, and one unencrypted `PRIVATE KEY`,
    ///   `EC PRIVATE KEY` or `RSA PRIVATE KEY` block, in any order; text between blocks is ignored.
    /// - Throws: ``TLSConfigurationError`` when the text is not PEM, holds no certificate, no key or more than
    ///   one key, or an encrypted key (decrypt it first, for example with `openssl pkey`).
    public init(pemEncoded: String) throws {
        let blocks: [PEM.Block]
        do {
            blocks = try PEM.blocks(in: pemEncoded)
        } catch {
            throw TLSConfigurationError(message: "the client identity is not PEM: \(error)")
        }
        let keyLabels: Set<String> = ["PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"]
        if blocks.contains(where: { $0.label == "ENCRYPTED PRIVATE KEY" }) {
            throw TLSConfigurationError(
                message: "the client identity's private key is encrypted; decrypt it first (openssl pkey)")
        }
        let keys = blocks.filter { keyLabels.contains($0.label) }
        guard keys.count == 1, let key = keys.first else {
            throw TLSConfigurationError(
                message: "the client identity's PEM holds \(keys.count) private keys; it needs exactly one")
        }
        try self.init(
            certificateChain: blocks.filter { $0.label == "CERTIFICATE" }.map(\.contents), privateKey: key.contents)
    }

    #if canImport(Security)
    /// Creates an identity from a Security framework identity, for URLSession on Apple platforms.
    ///
    /// - Parameters:
    ///   - secIdentity: The client's certificate and private key, from the keychain or `SecPKCS12Import`.
    ///   - intermediateCertificates: The intermediates the server needs to build a chain to a root it trusts.
    public init(secIdentity: SecIdentity, intermediateCertificates: [SecCertificate] = []) {
        storage = .security(SecurityIdentity(identity: secIdentity, intermediates: intermediateCertificates))
    }

    /// The Security framework identity of a ``Form/secIdentity`` identity; `nil` for the other form.
    public var secIdentity: SecIdentity? {
        if case .security(let security) = storage { security.identity } else { nil }
    }

    /// The intermediate certificates of a ``Form/secIdentity`` identity; empty for the other form.
    public var intermediateCertificates: [SecCertificate] {
        if case .security(let security) = storage { security.intermediates } else { [] }
    }
    #endif

    /// The form and the number of certificates; never the key.
    public var description: String {
        switch storage {
        case .chainAndKey(let certificates, _):
            "ClientIdentity(\(certificates.count) certificate\(certificates.count == 1 ? "" : "s"), private key "
                + "<redacted>)"
        #if canImport(Security)
        case .security(let security):
            "ClientIdentity(SecIdentity, \(security.intermediates.count) intermediate certificate"
                + "\(security.intermediates.count == 1 ? "" : "s"))"
        #endif
        }
    }

    public var debugDescription: String { description }
}

#if canImport(Security)
/// A `SecIdentity` and its intermediates, compared by identity.
// Safety: the Security framework's identities and certificates are immutable once made; this box only hands
// them out, and its own fields are constants.
private final class SecurityIdentity: Hashable, @unchecked Sendable {
    let identity: SecIdentity
    let intermediates: [SecCertificate]

    init(identity: SecIdentity, intermediates: [SecCertificate]) {
        self.identity = identity
        self.intermediates = intermediates
    }

    static func == (lhs: SecurityIdentity, rhs: SecurityIdentity) -> Bool {
        lhs.identity === rhs.identity && lhs.intermediates.elementsEqual(rhs.intermediates) { $0 === $1 }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(identity))
        for certificate in intermediates { hasher.combine(ObjectIdentifier(certificate)) }
    }
}
#endif

public import Foundation

/// Trusts a server only when its certificate chain contains a public key you pinned: the SHA-256 hash of a
/// certificate's SubjectPublicKeyInfo, base64-encoded — RFC 7469's `pin-sha256`.
///
/// ```swift
/// let pinning = try PublicKeyPinning(pins: [
///     "d6qzRu9zOECb90Uez27xWltNsj0e1Md7GkYYkVoZWmM=",  // the issuing CA's key (RFC 7469's example pins)
///     "E9CZ9INDbd+2eRQozYqqbQ2yXLVKB9+xcprMF+44U1g=",  // a backup key, not yet in use
/// ])
/// let loader = URLSessionLoader(serverTrustEvaluator: pinning)
///
/// var request = HTTPRequest(host: "api.example.com", path: "/me")
/// request.serverTrustPolicy = .evaluated(by: pinning)  // or for one request only
/// ```
///
/// Get a certificate's pin with ``pin(forCertificate:)``, or with OpenSSL:
///
/// ```
/// openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der \
///     | openssl dgst -sha256 -binary | base64
/// ```
///
/// The platform evaluates the server first (``DefaultTrustEvaluation/required``), so the pins only ever narrow
/// whom you trust: the chain must be valid *and* hold a pinned key. The chain is the validated one, leaf to
/// anchor, so pinning the key of your CA or an intermediate keeps working when the server's own certificate is
/// renewed, and ``Scope/leafCertificate`` pins the server's own key alone. Pin a backup key too, or a key change
/// locks your app out until it is updated.
///
/// A server without a pinned key is refused with a ``Failure`` that names it and lists the pins of the chain it
/// presented — public keys are not secret — so that a wrong pin set is quickly put right.
public struct PublicKeyPinning: ServerTrustEvaluator {
    /// Which certificates of the chain may carry a pinned key.
    @frozen
    public enum Scope: Sendable, Hashable {
        /// Any certificate of the validated chain: the server's, an intermediate's or the root's.
        case anyCertificate
        /// The server's own (leaf) certificate only.
        case leafCertificate
    }

    /// The pins, each the base64 encoding of a 32-byte SHA-256 digest.
    public let pins: Set<String>

    /// Which certificates may carry a pinned key.
    public let scope: Scope

    /// Creates an evaluator that requires one of `pins`.
    ///
    /// - Parameters:
    ///   - pins: Base64-encoded SHA-256 digests of SubjectPublicKeyInfo structures, with or without OkHttp's
    ///     `sha256/` prefix. Whitespace around each is ignored.
    ///   - scope: Which certificates may carry a pinned key; any certificate of the chain by default.
    /// - Throws: ``TLSConfigurationError`` when there are no pins or one is not base64 of 32 bytes: a pin set
    ///   that can never match would refuse every server.
    public init(pins: some Sequence<String>, scope: Scope = .anyCertificate) throws {
        var normalized: Set<String> = []
        for pin in pins {
            var text = pin.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.hasPrefix("sha256/") { text.removeFirst("sha256/".count) }
            guard let digest = Data(base64Encoded: text), digest.count == SHA256.digestByteCount else {
                throw TLSConfigurationError(
                    message: "'\(pin)' is not a pin: expected the base64 encoding of a 32-byte SHA-256 digest")
            }
            normalized.insert(digest.base64EncodedString())
        }
        guard !normalized.isEmpty else {
            throw TLSConfigurationError(message: "no pins: a pin set without pins would refuse every server")
        }
        self.pins = normalized
        self.scope = scope
    }

    /// Trusts the server when a certificate in ``scope`` has a pinned public key.
    ///
    /// - Parameter trust: The server's host, port and validated chain.
    /// - Throws: ``Failure`` when no certificate in scope has a pinned key, or the chain is empty.
    public func evaluate(_ trust: ServerTrust) throws {
        let candidates = scope == .leafCertificate ? Array(trust.certificateChain.prefix(1)) : trust.certificateChain
        // Each pin is the canonical base64 of its digest, as `presentedPins` writes a presented one.
        let presented = trust.certificateChain.map { certificate in
            Result { () throws(TLSConfigurationError) -> String in
                try Self.digest(forCertificate: certificate).base64EncodedString()
            }
        }
        for index in candidates.indices {
            if case .success(let pin) = presented[index], pins.contains(pin) { return }
        }
        throw Failure(
            host: trust.host,
            port: trust.port,
            scope: scope,
            presentedPins: presented.map { try? $0.get() },
            unreadableReasons: presented.map { result in
                if case .failure(let error) = result { error.message } else { nil }
            }
        )
    }

    /// The pin of a certificate: the base64 SHA-256 digest of its SubjectPublicKeyInfo.
    ///
    /// ```swift
    /// let pin = try PublicKeyPinning.pin(forCertificate: Data(contentsOf: certificateURL))  // DER, as in a .cer
    /// ```
    ///
    /// - Parameter certificate: A DER-encoded X.509 certificate.
    /// - Returns: The pin, such as `"d6qzRu9zOECb90Uez27xWltNsj0e1Md7GkYYkVoZWmM="`.
    /// - Throws: ``TLSConfigurationError`` when the bytes are not a DER-encoded certificate.
    public static func pin(forCertificate certificate: Data) throws -> String {
        try digest(forCertificate: certificate).base64EncodedString()
    }

    private static func digest(forCertificate certificate: Data) throws(TLSConfigurationError) -> Data {
        do {
            let parsed = try X509Certificate(derEncoded: [UInt8](certificate))
            return Data(SHA256.hash(parsed.subjectPublicKeyInfo))
        } catch {
            throw TLSConfigurationError(message: "not a DER-encoded X.509 certificate: \(error)")
        }
    }
}

extension PublicKeyPinning {
    /// Why ``PublicKeyPinning`` refused a server: none of the certificates in scope has a pinned key.
    ///
    /// Its description names the server and lists the pins of the certificates it presented, leaf first, to
    /// compare with the pin set:
    ///
    /// ```
    /// api.example.com:443 presented no pinned public key (checked: any certificate of the chain); the chain's
    /// pins, leaf first: 1: "Ll2uM…=", 2: "d6qzR…=", 3: "E9CZ9…="
    /// ```
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The host of the refused server.
        public var host: String
        /// The port of the refused server.
        public var port: Int
        /// Which certificates were checked.
        public var scope: Scope
        /// The pin of each certificate of the chain, leaf first; `nil` for a certificate that could not be read.
        public var presentedPins: [String?]
        /// Why each unreadable certificate could not be read, at the same positions; `nil` for readable ones.
        var unreadableReasons: [String?]

        public var description: String {
            let address = ServerTrust.displayAddress(host: host, port: port)
            guard !presentedPins.isEmpty else {
                return "\(address) presented no certificate, so no pinned public key"
            }
            let checked = scope == .leafCertificate ? "the leaf certificate only" : "any certificate of the chain"
            let list = presentedPins.indices.map { index in
                if let pin = presentedPins[index] { return "\(index + 1): \"\(pin)\"" }
                return "\(index + 1): unreadable (\(unreadableReasons[index] ?? "unknown"))"
            }
            return "\(address) presented no pinned public key (checked: \(checked)); the chain's pins, leaf first: "
                + list.joined(separator: ", ")
        }
    }
}

/// A certificate, key or pin given to configure TLS cannot be used.
///
/// ```swift
/// do {
///     _ = try PublicKeyPinning(pins: ["not base64"])
/// } catch let error as TLSConfigurationError {
///     print(error)  // 'not base64' is not a pin: expected the base64 encoding of a 32-byte SHA-256 digest
/// }
/// ```
public struct TLSConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the value.
    public var message: String

    /// Creates an error.
    ///
    /// - Parameter message: What is wrong.
    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}

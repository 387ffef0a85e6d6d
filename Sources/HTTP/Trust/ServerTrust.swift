public import Foundation

#if canImport(Security)
public import Security
#endif

/// What a ``ServerTrustEvaluator`` sees of a server during a TLS handshake: where the connection goes and the
/// certificates the server is trusted with.
///
/// The transport makes one for each server-trust challenge and hands it to the evaluator at once; it does not
/// outlive the evaluation. (It is not `Sendable`: on Apple platforms it carries the `SecTrust`, which is not.)
///
/// ```swift
/// struct OnlyLoopback: ServerTrustEvaluator {
///     func evaluate(_ trust: ServerTrust) throws {
///         guard trust.host == "127.0.0.1" else { throw URLError(.serverCertificateUntrusted) }
///     }
/// }
/// ```
public struct ServerTrust {
    /// The host the connection is for, as the request names it (a name, or an IP address literal).
    public var host: String

    /// The port the connection is for.
    public var port: Int

    /// The certificates, DER-encoded, leaf (the server's own) first.
    ///
    /// When the platform's evaluation runs first (``DefaultTrustEvaluation/required``), this is the chain the
    /// platform *validated*: from the leaf to the trust anchor, including an intermediate or root the server did
    /// not send. That is what makes pinning an intermediate's or a root's key safe: a certificate the server
    /// merely appends to its chain, without the chain depending on it, is not in the validated chain. When an
    /// evaluator replaces the platform's evaluation (``DefaultTrustEvaluation/replaced``), nothing has validated
    /// the chain: only the leaf is proven, as the handshake shows that the server holds its key.
    public var certificateChain: [Data]

    #if canImport(Security)
    /// On Apple platforms, the trust object of the challenge: for evaluators that need more than the chain
    /// (policies, revocation, `SecTrustEvaluateWithError` with other anchors). `nil` when the value was made from
    /// a chain alone.
    public var secTrust: SecTrust?
    #endif

    /// Creates a server trust from a chain.
    ///
    /// - Parameters:
    ///   - host: The host the connection is for.
    ///   - port: The port the connection is for.
    ///   - certificateChain: The DER-encoded certificates, leaf first; see ``certificateChain`` for which chain
    ///     a transport must pass.
    public init(host: String, port: Int, certificateChain: [Data]) {
        self.host = host
        self.port = port
        self.certificateChain = certificateChain
        #if canImport(Security)
        self.secTrust = nil
        #endif
    }

    #if canImport(Security)
    /// Creates a server trust from a challenge's `SecTrust`, with the chain `SecTrustCopyCertificateChain`
    /// returns: after `SecTrustEvaluateWithError`, the validated chain up to the anchor.
    ///
    /// - Parameters:
    ///   - host: The host the connection is for.
    ///   - port: The port the connection is for.
    ///   - secTrust: The challenge's trust object.
    public init(host: String, port: Int, secTrust: SecTrust) {
        let certificates = (SecTrustCopyCertificateChain(secTrust) as? [SecCertificate]) ?? []
        self.init(
            host: host, port: port, certificateChain: certificates.map { SecCertificateCopyData($0) as Data })
        self.secTrust = secTrust
    }
    #endif

    /// `host:port`, with an IPv6 literal in brackets, for messages.
    static func displayAddress(host: String, port: Int) -> String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(bracketed):\(port)"
    }
}

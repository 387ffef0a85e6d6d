/// Decides whether to trust a server, on top of (or instead of) the platform's own evaluation: the hook for
/// certificate and public-key pinning.
///
/// A transport calls ``evaluate(_:)`` on each server-trust challenge of a request that has an evaluator — the
/// loader's, or the request's own through ``HTTPRequest/serverTrustPolicy``. Return to trust the server; throw to
/// refuse it. Refusal fails the load with ``HTTPError/Code/insecureConnection`` before a byte of the request is
/// sent; the message names the server and includes the error's description, and the error is the
/// ``HTTPError/underlyingError``.
///
/// Evaluation always fails closed:
/// - By default the platform evaluates first (the chain leads to a trusted root, the dates, the host name) and
///   the evaluator only sees servers that pass it. An evaluator that decides alone says so with
///   ``defaultEvaluation``.
/// - Any error thrown refuses the server.
/// - A transport that cannot call the evaluator — URLSession on Linux has no server-trust challenge — refuses the
///   request before sending it (``TransportCapabilities/refusal(of:with:)``), and so does plain `http`, which has
///   no certificate to evaluate. A request with an evaluator is never sent unevaluated.
///
/// ## Implement an evaluator
///
/// ```swift
/// /// Trusts only certificates issued for one organisation, after the platform's evaluation.
/// struct LeafCertificateAllowList: ServerTrustEvaluator {
///     let allowed: Set<Data>  // DER-encoded leaf certificates
///
///     func evaluate(_ trust: ServerTrust) throws {
///         guard let leaf = trust.certificateChain.first, allowed.contains(leaf) else {
///             throw URLError(.serverCertificateUntrusted)
///         }
///     }
/// }
///
/// let loader = URLSessionLoader(serverTrustEvaluator: LeafCertificateAllowList(allowed: [leafDER]))
/// ```
///
/// ``PublicKeyPinning`` is the built-in evaluator. Evaluators are `Hashable` so that a transport can tell requests
/// with the same trust settings (which may share connections) from others (which must not: a reused connection
/// skips the handshake, and the challenge with it).
public protocol ServerTrustEvaluator: Sendable, Hashable {
    /// Whether the platform's own evaluation runs first; ``DefaultTrustEvaluation/required`` unless an evaluator
    /// says otherwise.
    var defaultEvaluation: DefaultTrustEvaluation { get }

    /// Decides whether to trust the server.
    ///
    /// Called on the transport's delegate queue or event loop during the handshake: keep it quick, synchronous
    /// and free of I/O.
    ///
    /// - Parameter trust: The server's host, port and certificate chain.
    /// - Throws: Any error to refuse the server; its description becomes part of the load's error message.
    func evaluate(_ trust: ServerTrust) throws
}

extension ServerTrustEvaluator {
    /// ``DefaultTrustEvaluation/required``: the platform evaluates first.
    public var defaultEvaluation: DefaultTrustEvaluation { .required }
}

/// Whether the platform's trust evaluation runs before a ``ServerTrustEvaluator``.
@frozen
public enum DefaultTrustEvaluation: Sendable, Hashable {
    /// The platform evaluates first — the chain leads to a trusted root, every certificate is within its dates,
    /// the leaf is for the host — and a server that fails is refused without asking the evaluator. The evaluator
    /// sees the validated chain and can only refuse more.
    case required

    /// The evaluator alone decides, with the certificates as the server sent them: to trust a self-signed
    /// certificate or a private authority the platform does not know. It must then check what the platform
    /// would have, the host name included, and trust nothing but the leaf: anyone can send any certificate
    /// after their own. (On Apple platforms the evaluator can still call `SecTrustEvaluateWithError` on
    /// `ServerTrust.secTrust` with anchors of its own.)
    case replaced
}

/// What a transport does with one TLS challenge of a request, decided from the request's ``TLSSettings``.
///
/// The decision is the same on every transport; only its execution differs (URLSession's disposition and
/// credential on Apple platforms, a TLS stack's verification callback elsewhere). Deciding needs no I/O and no
/// lock: the transport calls ``TLSSettings/decideServerTrust(host:port:platformEvaluation:trust:)`` or
/// ``TLSSettings/decideClientCertificate()`` from its challenge callback and acts on the result.
enum TLSChallengeDecision {
    /// Do what the platform does without settings: its own trust evaluation, or no client certificate.
    case performDefaultHandling
    /// Trust the server: the platform's evaluation (where required) and the evaluator both passed.
    case trustServer
    /// Present this identity.
    case present(ClientIdentity)
    /// Refuse: end the handshake, and fail the load with the rejection's error instead of the transport's.
    case reject(TLSRejection)
}

/// Why a handshake was refused: the load's error, recorded by the transport when it refuses a challenge and
/// used in place of the "cancelled" the transport then reports.
struct TLSRejection: Error {
    /// The message of the load's error; names the server.
    var message: String
    /// The evaluator's error, or the platform's evaluation error.
    var underlyingError: (any Error)?

    /// The load's error.
    ///
    /// - Parameter request: The request whose handshake was refused.
    /// - Returns: An ``HTTPError/Code/insecureConnection`` error with this message and underlying error.
    func httpError(for request: HTTPRequest) -> HTTPError {
        HTTPError(.insecureConnection, request: request, message: message, underlyingError: underlyingError)
    }
}

extension TLSSettings {
    /// Decides a server-trust challenge.
    ///
    /// Without an evaluator, the platform decides as usual. With one, the platform's evaluation runs first unless
    /// the evaluator replaces it, and the evaluator then sees the server; any error from either refuses it.
    ///
    /// - Parameters:
    ///   - host: The host the connection is for.
    ///   - port: The port the connection is for.
    ///   - platformEvaluation: Runs the platform's evaluation (on Apple platforms `SecTrustEvaluateWithError`),
    ///     throwing when it fails. Called at most once.
    ///   - trust: Makes what the evaluator sees; called after `platformEvaluation`, so that the chain is the
    ///     validated one.
    /// - Returns: ``TLSChallengeDecision/performDefaultHandling``, ``TLSChallengeDecision/trustServer`` or
    ///   ``TLSChallengeDecision/reject(_:)``.
    func decideServerTrust(
        host: String,
        port: Int,
        platformEvaluation: () throws -> Void,
        trust: () -> ServerTrust
    ) -> TLSChallengeDecision {
        guard let evaluator = serverTrustEvaluator else { return .performDefaultHandling }
        let address = ServerTrust.displayAddress(host: host, port: port)
        if evaluator.defaultEvaluation == .required {
            do {
                try platformEvaluation()
            } catch {
                return .reject(
                    TLSRejection(
                        message: "no secure connection to \(address): the platform's trust evaluation failed: \(error)",
                        underlyingError: error))
            }
        }
        do {
            try evaluator.evaluate(trust())
        } catch {
            return .reject(
                TLSRejection(
                    message: "server trust refused by \(type(of: evaluator)): \(error)", underlyingError: error))
        }
        return .trustServer
    }

    /// Decides a client-certificate challenge: present the identity, or none without one.
    ///
    /// - Returns: ``TLSChallengeDecision/present(_:)`` or ``TLSChallengeDecision/performDefaultHandling``.
    func decideClientCertificate() -> TLSChallengeDecision {
        clientIdentity.map(TLSChallengeDecision.present) ?? .performDefaultHandling
    }
}

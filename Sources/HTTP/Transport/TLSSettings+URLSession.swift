#if canImport(Security)
import Foundation
import Security

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's answer to a TLS challenge: the disposition and credential for the completion handler, and, when
/// the challenge is refused, the error the load fails with (URLSession itself then reports only "cancelled").
struct URLSessionTLSAnswer {
    var disposition: URLSession.AuthChallengeDisposition
    var credential: URLCredential?
    var rejection: TLSRejection?
}

extension TLSSettings {
    /// Answers a server-trust or client-certificate challenge on Apple platforms; `nil` for any other challenge
    /// (HTTP authentication), which the caller handles as before.
    ///
    /// - Server trust, no evaluator: default handling (the system's evaluation).
    /// - Server trust with an evaluator: `SecTrustEvaluateWithError` first (unless the evaluator replaces it),
    ///   then the evaluator with the chain from `SecTrustCopyCertificateChain`; trusted with
    ///   `URLCredential(trust:)`, else the challenge is cancelled and ``URLSessionTLSAnswer/rejection`` says why.
    /// - Client certificate: `URLCredential(identity:certificates:persistence:)` for a
    ///   ``ClientIdentity/Form/secIdentity``; default handling (no certificate) without an identity; cancelled
    ///   for an identity of another form.
    ///
    /// Called from `urlSession(_:task:didReceive:completionHandler:)`, on the session's delegate queue, where the
    /// synchronous `SecTrustEvaluateWithError` may run.
    ///
    /// - Parameter challenge: The challenge.
    /// - Returns: The answer, or `nil` when the challenge is not about TLS.
    func answer(_ challenge: URLAuthenticationChallenge) -> URLSessionTLSAnswer? {
        let space = challenge.protectionSpace
        let decision: TLSChallengeDecision
        switch space.authenticationMethod {
        case NSURLAuthenticationMethodServerTrust:
            guard let secTrust = space.serverTrust else {
                guard serverTrustEvaluator != nil else {
                    return URLSessionTLSAnswer(disposition: .performDefaultHandling, credential: nil, rejection: nil)
                }
                let address = ServerTrust.displayAddress(host: space.host, port: space.port)
                let rejection = TLSRejection(
                    message: "no secure connection to \(address): the server-trust challenge has no trust to evaluate",
                    underlyingError: nil)
                return URLSessionTLSAnswer(
                    disposition: .cancelAuthenticationChallenge, credential: nil, rejection: rejection)
            }
            decision = decideServerTrust(
                host: space.host,
                port: space.port,
                platformEvaluation: {
                    var error: CFError?
                    if !SecTrustEvaluateWithError(secTrust, &error) {
                        throw error.map { $0 as any Error } ?? URLError(.serverCertificateUntrusted)
                    }
                },
                trust: { ServerTrust(host: space.host, port: space.port, secTrust: secTrust) }
            )
            if case .trustServer = decision {
                return URLSessionTLSAnswer(
                    disposition: .useCredential, credential: URLCredential(trust: secTrust), rejection: nil)
            }
        case NSURLAuthenticationMethodClientCertificate:
            decision = decideClientCertificate()
            if case .present(let identity) = decision {
                guard let secIdentity = identity.secIdentity else {
                    let rejection = TLSRejection(
                        message: "URLSession presents client certificates only as \(ClientIdentity.Form.secIdentity), "
                            + "and the request's client identity is a \(identity.form)",
                        underlyingError: nil)
                    return URLSessionTLSAnswer(
                        disposition: .cancelAuthenticationChallenge, credential: nil, rejection: rejection)
                }
                let intermediates = identity.intermediateCertificates
                let credential = URLCredential(
                    identity: secIdentity, certificates: intermediates.isEmpty ? nil : intermediates as [Any],
                    persistence: .forSession)
                return URLSessionTLSAnswer(disposition: .useCredential, credential: credential, rejection: nil)
            }
        default:
            return nil
        }
        if case .reject(let rejection) = decision {
            return URLSessionTLSAnswer(
                disposition: .cancelAuthenticationChallenge, credential: nil, rejection: rejection)
        }
        return URLSessionTLSAnswer(disposition: .performDefaultHandling, credential: nil, rejection: nil)
    }
}
#endif

/// What a transport can do with TLS: call a server-trust evaluator, present client certificates. A transport
/// refuses, before sending, a request whose ``TLSSettings`` ask for more: it fails closed, never silently
/// unpinned.
///
/// ```swift
/// var request = HTTPRequest(host: "api.example.com", path: "/me")
/// request.serverTrustPolicy = .evaluated(by: try PublicKeyPinning(pins: [pin]))
///
/// let settings = TLSSettings().resolved(for: request)
/// let refusal = TransportCapabilities.urlSession.refusal(of: request, with: settings)
/// // On Linux: "URLSession on Linux cannot evaluate server trust, so the request's public-key pins cannot be
/// // checked; it was not sent". On Apple platforms: nil.
/// ```
///
/// | | Server-trust evaluation | Client certificates |
/// |---|---|---|
/// | ``urlSession`` on Apple platforms | yes | ``ClientIdentity/Form/secIdentity`` |
/// | ``urlSession`` on Linux | no: it has no server-trust challenge | no |
/// | `asyncHTTPClient` (a package of its own) | yes | ``ClientIdentity/Form/certificateChainAndPrivateKey`` |
public struct TransportCapabilities: Sendable, Hashable {
    /// The transport's name in messages, such as "URLSession on Linux".
    public var name: String

    /// Whether the transport calls a ``ServerTrustEvaluator`` on server-trust challenges.
    public var canEvaluateServerTrust: Bool

    /// The forms of ``ClientIdentity`` the transport can present; empty when it presents no client certificate.
    public var clientIdentityForms: Set<ClientIdentity.Form>

    /// Describes a transport.
    ///
    /// - Parameters:
    ///   - name: The transport's name in messages.
    ///   - canEvaluateServerTrust: Whether it calls a ``ServerTrustEvaluator`` on server-trust challenges.
    ///   - clientIdentityForms: The forms of ``ClientIdentity`` it can present.
    public init(name: String, canEvaluateServerTrust: Bool, clientIdentityForms: Set<ClientIdentity.Form>) {
        self.name = name
        self.canEvaluateServerTrust = canEvaluateServerTrust
        self.clientIdentityForms = clientIdentityForms
    }

    /// URLSession on this platform. On Apple platforms it evaluates server trust and presents a
    /// ``ClientIdentity/Form/secIdentity``; on Linux (swift-corelibs-foundation over libcurl) it does neither:
    /// there are no TLS challenges at all.
    public static let urlSession: TransportCapabilities = {
        #if canImport(Security)
        TransportCapabilities(name: "URLSession", canEvaluateServerTrust: true, clientIdentityForms: [.secIdentity])
        #else
        TransportCapabilities(name: "URLSession on Linux", canEvaluateServerTrust: false, clientIdentityForms: [])
        #endif
    }()

    /// The error to fail `request` with, unsent, when this transport cannot honour its TLS settings; `nil` when
    /// it can.
    ///
    /// A request is refused, with ``HTTPError/Code/insecureConnection``, when
    /// - it has a server-trust evaluator and the transport cannot call one;
    /// - it has a server-trust evaluator and is plain `http`: there is no certificate to evaluate;
    /// - it is `https` with a client identity of a form the transport cannot present.
    ///
    /// Call it before sending. A transport that follows redirects itself must call it again for each hop (with the
    /// redirected request), so that no hop goes out with less than the request asked for; ``URLSessionLoader``
    /// follows none, and each hop ``FollowRedirects`` sends is a request of its own.
    ///
    /// - Parameters:
    ///   - request: The request about to be sent.
    ///   - settings: Its settings, from ``TLSSettings/resolved(for:)``.
    /// - Returns: The error, or `nil` to send the request.
    public func refusal(of request: HTTPRequest, with settings: TLSSettings) -> HTTPError? {
        let isSecure = request.scheme.lowercased() == "https"
        if let evaluator = settings.serverTrustEvaluator {
            let what =
                evaluator is PublicKeyPinning
                ? "public-key pins" : "server-trust evaluator (\(type(of: evaluator)))"
            if !isSecure {
                return HTTPError(
                    .insecureConnection, request: request,
                    message: "the request is plain \(request.scheme), so there is no certificate for its \(what) "
                        + "to check; it was not sent")
            }
            if !canEvaluateServerTrust {
                return HTTPError(
                    .insecureConnection, request: request,
                    message: "\(name) cannot evaluate server trust, so the request's \(what) cannot be checked; "
                        + "it was not sent")
            }
        }
        if isSecure, let identity = settings.clientIdentity, !clientIdentityForms.contains(identity.form) {
            let message =
                clientIdentityForms.isEmpty
                ? "\(name) cannot present a client certificate, so the request's client identity cannot be used; "
                    + "it was not sent"
                : "\(name) presents client certificates only as "
                    + clientIdentityForms.map(\.rawValue).sorted().joined(separator: " or ")
                    + ", and the request's client identity is a \(identity.form); it was not sent"
            return HTTPError(.insecureConnection, request: request, message: message)
        }
        return nil
    }
}

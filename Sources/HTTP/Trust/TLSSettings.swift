/// The TLS settings a transport applies to one request: the server-trust evaluator to call and the client
/// identity to present.
///
/// A transport loader keeps its defaults as a `TLSSettings` and resolves each request's with
/// ``resolved(for:)``, which applies the request's ``HTTPRequest/serverTrustPolicy`` and
/// ``HTTPRequest/clientIdentity`` over them:
///
/// ```swift
/// let defaults = TLSSettings(serverTrustEvaluator: try PublicKeyPinning(pins: [pin]))
/// let settings = defaults.resolved(for: request)
/// if let refusal = TransportCapabilities.urlSession.refusal(of: request, with: settings) {
///     return .failure(refusal)  // fails closed: e.g. a pin on a transport that cannot check it
/// }
/// ```
///
/// Two requests with equal settings may share a connection; a transport must not let requests with different
/// settings share one, as a reused connection skips the handshake and the server-trust challenge with it.
public struct TLSSettings: Sendable, Hashable {
    /// The evaluator called on server-trust challenges; `nil` for the platform's evaluation alone.
    public var serverTrustEvaluator: (any ServerTrustEvaluator)?

    /// The client certificate presented when a server asks for one; `nil` to present none.
    public var clientIdentity: ClientIdentity?

    /// Creates settings.
    ///
    /// - Parameters:
    ///   - serverTrustEvaluator: The evaluator for server-trust challenges; `nil` (the default) for the
    ///     platform's evaluation alone.
    ///   - clientIdentity: The client certificate for mutual TLS; `nil` (the default) for none.
    public init(serverTrustEvaluator: (any ServerTrustEvaluator)? = nil, clientIdentity: ClientIdentity? = nil) {
        self.serverTrustEvaluator = serverTrustEvaluator
        self.clientIdentity = clientIdentity
    }

    /// The settings for `request`, with these as the loader's defaults.
    ///
    /// - The evaluator: the request's with ``ServerTrustPolicy/evaluated(by:)``, none with
    ///   ``ServerTrustPolicy/platformDefault``, else (``ServerTrustPolicy/loaderDefault``) this one.
    /// - The client identity: the request's when it has one, else this one.
    ///
    /// - Parameter request: The request about to be sent.
    /// - Returns: The settings to send it with.
    /// Whether these are the platform's defaults: no evaluator, no client identity.
    public var isDefault: Bool { serverTrustEvaluator == nil && clientIdentity == nil }

    public func resolved(for request: HTTPRequest) -> TLSSettings {
        var settings = self
        switch request.serverTrustPolicy {
        case .loaderDefault: break
        case .platformDefault: settings.serverTrustEvaluator = nil
        case .evaluated(let evaluator): settings.serverTrustEvaluator = evaluator
        }
        if let identity = request.clientIdentity { settings.clientIdentity = identity }
        return settings
    }

    public static func == (lhs: TLSSettings, rhs: TLSSettings) -> Bool {
        lhs.serverTrustEvaluator.map { AnyHashable($0) } == rhs.serverTrustEvaluator.map { AnyHashable($0) }
            && lhs.clientIdentity == rhs.clientIdentity
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(serverTrustEvaluator.map { AnyHashable($0) })
        hasher.combine(clientIdentity)
    }
}

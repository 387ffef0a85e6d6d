/// How a request's server is trusted, set per request; the loader's evaluator by default.
///
/// ```swift
/// var request = HTTPRequest(host: "api.example.com", path: "/payments")
/// request.serverTrustPolicy = .evaluated(by: try PublicKeyPinning(pins: [paymentsPin]))
///
/// var image = HTTPRequest(host: "cdn.example.net", path: "/avatar.png")
/// image.serverTrustPolicy = .platformDefault  // not the loader's pins: another company's servers
/// ```
///
/// Precedence, for each request: the request's own policy; with ``loaderDefault`` (the default) the evaluator
/// the transport loader was made with (`URLSessionLoader(serverTrustEvaluator:)`); with neither, the platform's
/// evaluation alone. ``TLSSettings/resolved(for:)`` applies these rules.
@frozen
public enum ServerTrustPolicy: Sendable, Hashable, HTTPRequestOption {
    /// The transport loader's evaluator, or the platform's evaluation alone when it has none (the default).
    case loaderDefault
    /// The platform's evaluation alone, even when the loader has an evaluator.
    case platformDefault
    /// This evaluator, in place of the loader's.
    case evaluated(by: any ServerTrustEvaluator)

    public static let defaultOptionValue: ServerTrustPolicy = .loaderDefault

    public static func == (lhs: ServerTrustPolicy, rhs: ServerTrustPolicy) -> Bool {
        switch (lhs, rhs) {
        case (.loaderDefault, .loaderDefault), (.platformDefault, .platformDefault): true
        case (.evaluated(let left), .evaluated(let right)): AnyHashable(left) == AnyHashable(right)
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .loaderDefault: hasher.combine(0)
        case .platformDefault: hasher.combine(1)
        case .evaluated(let evaluator):
            hasher.combine(2)
            hasher.combine(AnyHashable(evaluator))
        }
    }
}

/// The client certificate a request presents for mutual TLS, set per request; `nil` (the default) presents the
/// transport loader's, if it has one.
public enum ClientIdentityOption: HTTPRequestOption {
    public static let defaultOptionValue: ClientIdentity? = nil
}

extension HTTPRequest {
    /// How the server of this request is trusted; ``ServerTrustPolicy/loaderDefault`` by default.
    public var serverTrustPolicy: ServerTrustPolicy {
        get { self[option: ServerTrustPolicy.self] }
        set { self[option: ServerTrustPolicy.self] = newValue }
    }

    /// The client certificate this request presents when the server asks for one, in place of the transport
    /// loader's; `nil` (the default) presents the loader's, if it has one.
    public var clientIdentity: ClientIdentity? {
        get { self[option: ClientIdentityOption.self] }
        set { self[option: ClientIdentityOption.self] = newValue }
    }
}

/// Why a ``DeviceAuthorizationGrant`` got no tokens, where the device flow itself failed: the user declined, the code
/// expired, the flow was cancelled, the device authorization endpoint refused.
///
/// Requests waiting for the tokens fail with `HTTPError.Code.cannotAuthenticate`, this error as their
/// `underlyingError`. Failures at the token endpoint that every grant shares (it could not be reached, it refused the
/// client, its answer was unusable) are ``OAuthError``s, as ``ClientCredentialsGrant``'s are.
///
/// ```swift
/// if case .failure(let error) = result, let reason = error.underlyingError as? DeviceAuthorizationError {
///     switch reason.code {
///     case .accessDenied: showMessage("You declined the sign-in.")
///     case .expired: showMessage("The code expired; try again.")
///     default: showError(reason)
///     }
/// }
/// ```
///
/// Codes are open-ended, as ``OAuthError/Code`` is: a `switch` over them has a `default`. Descriptions never contain
/// the device code, a token or a secret.
public struct DeviceAuthorizationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A category of device flow failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The user declined the device (`access_denied`, RFC 8628 §3.5).
        public static let accessDenied = Code(rawValue: "accessDenied")
        /// The device code expired before the user approved it: the server answered `expired_token`, or its
        /// `expires_in` ran out while the grant waited.
        public static let expired = Code(rawValue: "expired")
        /// The app cancelled the flow (``DeviceAuthorizationGrant/cancelAuthorization()``), or a reset did.
        public static let cancelled = Code(rawValue: "cancelled")
        /// There is no delegate to show the user code.
        public static let noDelegate = Code(rawValue: "noDelegate")
        /// The device authorization endpoint refused the request (RFC 8628 §3.2, RFC 6749 §5.2): see
        /// ``DeviceAuthorizationError/status`` and ``DeviceAuthorizationError/serverErrorCode``.
        public static let authorizationRequestFailed = Code(rawValue: "authorizationRequestFailed")
        /// The device authorization endpoint's answer could not be used; ``DeviceAuthorizationError/reason`` says
        /// why.
        public static let invalidAuthorizationResponse = Code(rawValue: "invalidAuthorizationResponse")
    }

    /// The category of failure.
    public var code: Code
    /// What exactly went wrong, in words, when the code alone does not say.
    public var reason: String?
    /// The HTTP status the device authorization endpoint answered with, for ``Code/authorizationRequestFailed``.
    public var status: Int?
    /// The `error` the server sent, such as `invalid_client` or `access_denied`.
    public var serverErrorCode: String?
    /// The server's `error_description`, when it sent one.
    public var serverErrorDescription: String?

    /// - Parameters:
    ///   - code: The category.
    ///   - reason: What exactly went wrong, in words.
    ///   - status: The server's HTTP status.
    ///   - serverErrorCode: The server's `error` parameter.
    ///   - serverErrorDescription: The server's `error_description` parameter.
    public init(
        _ code: Code, reason: String? = nil, status: Int? = nil, serverErrorCode: String? = nil,
        serverErrorDescription: String? = nil
    ) {
        self.code = code
        self.reason = reason
        self.status = status
        self.serverErrorCode = serverErrorCode
        self.serverErrorDescription = serverErrorDescription
    }

    public var description: String {
        let parenthesized = serverErrorDescription.map { " (\($0))" } ?? ""
        switch code {
        case .accessDenied: return "the user declined the device's authorization (access_denied)" + parenthesized
        case .expired: return "the device code expired before the user approved it" + (reason.map { ": \($0)" } ?? "")
        case .cancelled: return "the device authorization was cancelled"
        case .noDelegate: return "the device authorization grant has no delegate to show the user code"
        case .authorizationRequestFailed:
            return "the device authorization endpoint answered \(status.map(String.init) ?? "no status")"
                + (serverErrorCode.map { ": \($0)" } ?? "") + parenthesized
        case .invalidAuthorizationResponse: return "invalid device authorization response: \(reason ?? "")"
        default: return "\(code)" + (reason.map { ": \($0)" } ?? "")
        }
    }
}

extension DeviceAuthorizationError {
    /// The user declined, with the server's `error_description`, if any.
    public static func accessDenied(description: String? = nil) -> DeviceAuthorizationError {
        DeviceAuthorizationError(.accessDenied, serverErrorCode: "access_denied", serverErrorDescription: description)
    }

    /// The device code expired: `reason` says how it was found out.
    public static func expired(_ reason: String) -> DeviceAuthorizationError {
        DeviceAuthorizationError(.expired, reason: reason)
    }

    /// The flow was cancelled.
    public static let cancelled = DeviceAuthorizationError(.cancelled)

    /// There is no delegate to show the user code.
    public static let noDelegate = DeviceAuthorizationError(.noDelegate)

    /// The device authorization endpoint answered `status`, with the `error` and `error_description` it sent, if any.
    public static func authorizationRequestFailed(
        status: Int, error: String?, description: String?
    )
        -> DeviceAuthorizationError
    {
        DeviceAuthorizationError(
            .authorizationRequestFailed, status: status, serverErrorCode: error, serverErrorDescription: description)
    }

    /// The device authorization endpoint's answer could not be used.
    public static func invalidAuthorizationResponse(_ reason: String) -> DeviceAuthorizationError {
        DeviceAuthorizationError(.invalidAuthorizationResponse, reason: reason)
    }
}

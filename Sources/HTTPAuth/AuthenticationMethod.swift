public import HTTP

/// How a request is authenticated; ``Auth`` routes each request to the loader registered for its method.
///
/// Methods are open-ended: `.basic` and `.oauth` are built in, and an app adds its own:
///
/// ```swift
/// extension AuthenticationMethod {
///     static let apiKey = AuthenticationMethod(rawValue: "apiKey")
/// }
///
/// var request = HTTPRequest(path: "/me")
/// request.authenticationMethod = .oauth
/// ```
public struct AuthenticationMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// HTTP Basic authentication (RFC 7617), handled by ``BasicAuth``.
    public static let basic = AuthenticationMethod(rawValue: "basic")
    /// OAuth 2 bearer tokens.
    public static let oauth = AuthenticationMethod(rawValue: "oauth")
}

extension AuthenticationMethod: HTTPRequestOption {
    /// `nil`: the request needs no authentication.
    public static let defaultOptionValue: AuthenticationMethod? = nil
}

extension HTTPRequest {
    /// How this request is authenticated, or `nil` (the default) when it needs no authentication.
    public var authenticationMethod: AuthenticationMethod? {
        get { self[option: AuthenticationMethod.self] }
        set { self[option: AuthenticationMethod.self] = newValue }
    }
}

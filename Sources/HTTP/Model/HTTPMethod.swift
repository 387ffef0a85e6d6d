/// An HTTP request method, such as `GET` or `POST`.
///
/// Methods are open-ended: the common ones are static constants, and any other token can be
/// created from its raw value.
///
/// ```swift
/// var request = HTTPRequest(path: "/people")
/// request.method = .post
/// let purge = HTTPMethod(rawValue: "PURGE")
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method's token as it appears on the request line, for example `"GET"`.
    public let rawValue: String

    /// Creates a method from its token. Tokens are case-sensitive; the standard ones are upper case.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }

    public static let get: HTTPMethod = "GET"
    public static let head: HTTPMethod = "HEAD"
    public static let post: HTTPMethod = "POST"
    public static let put: HTTPMethod = "PUT"
    public static let patch: HTTPMethod = "PATCH"
    public static let delete: HTTPMethod = "DELETE"
    public static let options: HTTPMethod = "OPTIONS"
    public static let trace: HTTPMethod = "TRACE"
    public static let connect: HTTPMethod = "CONNECT"

    /// Whether the method is *safe* (RFC 9110 §9.2.1): it only reads.
    public var isSafe: Bool {
        self == .get || self == .head || self == .options || self == .trace
    }

    /// Whether repeating the request has the same effect as sending it once (RFC 9110 §9.2.2).
    ///
    /// Retry strategies use this to decide which requests may be sent again without the caller's consent.
    public var isIdempotent: Bool {
        isSafe || self == .put || self == .delete
    }
}

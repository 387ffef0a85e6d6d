import Foundation
public import HTTP

/// A user name and password for HTTP Basic authentication (RFC 7617).
///
/// ```swift
/// var request = HTTPRequest(path: "/reports")
/// request.basicCredentials = BasicCredentials(username: "ann", password: "s3cret")  // this request only
/// ```
public struct BasicCredentials: Sendable, Hashable, Codable, CustomStringConvertible {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// `Basic base64(username:password)`, the credentials encoded as UTF-8 (RFC 7617 §2.1).
    public var authorizationHeaderValue: String {
        "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }

    /// The user name only; the password never appears in descriptions or logs.
    public var description: String { "BasicCredentials(username: \(username), password: <redacted>)" }
}

extension BasicCredentials: HTTPRequestOption {
    /// `nil`: the loader's own credentials apply.
    public static let defaultOptionValue: BasicCredentials? = nil
}

extension HTTPRequest {
    /// Credentials for this request only; a ``BasicAuth`` loader sends them instead of its own.
    public var basicCredentials: BasicCredentials? {
        get { self[option: BasicCredentials.self] }
        set { self[option: BasicCredentials.self] = newValue }
    }
}

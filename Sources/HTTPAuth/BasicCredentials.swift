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

    /// Why these credentials cannot be sent, or `nil` when they can.
    ///
    /// RFC 7617 §2: a user-id containing `:` cannot be told from the password that follows it (the server would
    /// read the user `a` and the password `b:c` from `a:b` and `c`), and neither part may contain control
    /// characters. ``BasicAuth`` refuses such credentials before anything is sent. The message never quotes the
    /// password.
    public var invalidityReason: String? {
        if let colon = username.firstIndex(of: ":") {
            let position = username.distance(from: username.startIndex, to: colon) + 1
            return "the user-id contains ':' (character \(position)), which RFC 7617 §2 forbids: the server would "
                + "read the user-id up to it and take the rest as part of the password"
        }
        for (part, text) in [("user-id", username), ("password", password)] {
            if let control = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
                let hex = String(control.value, radix: 16, uppercase: true)
                let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                return "the \(part) contains the control character \(code), which RFC 7617 §2 forbids"
            }
        }
        return nil
    }

    /// The user name only; the password never appears in descriptions or logs.
    public var description: String { "BasicCredentials(username: \(username), password: <redacted>)" }
}

extension BasicCredentials: HTTPRequestOption {
    /// `nil`: the loader's own credentials apply.
    public static let defaultOptionValue: BasicCredentials? = nil
}

extension HTTPRequest {
    /// Credentials for this request only; a ``HTTPAuth/BasicAuth`` loader sends them instead of its own.
    public var basicCredentials: BasicCredentials? {
        get { self[option: BasicCredentials.self] }
        set { self[option: BasicCredentials.self] = newValue }
    }
}

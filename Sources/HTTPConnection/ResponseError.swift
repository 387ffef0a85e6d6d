public import Foundation
public import HTTP

/// A response arrived but could not be turned into the requested value.
///
/// The description names the request, the status, what went wrong, and the first bytes of the body — with
/// the values of token and password fields hidden — so that a log line is enough to diagnose it:
///
/// ```
/// undecodable: GET https://api.example.com/v1/people/42 answered 200 OK, but its body is not a Person
/// (keyNotFound "name") — body: {"id":42,"nmae":"Zoë"}
/// ```
public struct ResponseError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What was wrong with the response.
    public enum Kind: Sendable, Hashable {
        /// The status is not one the request accepts (by default, anything but 2xx).
        case unacceptableStatus
        /// The status was accepted, but the body could not be decoded.
        case undecodable
    }

    /// What was wrong.
    public var kind: Kind
    /// The response.
    public var response: HTTPResponse
    /// The type the request expected, for messages.
    public var expectedType: String
    /// The decoding error, for ``Kind/undecodable``.
    public var underlyingError: (any Error)?

    public init(kind: Kind, response: HTTPResponse, expectedType: Any.Type, underlyingError: (any Error)? = nil) {
        self.kind = kind
        self.response = response
        self.expectedType = String(describing: expectedType)
        self.underlyingError = underlyingError
    }

    /// The status of the response.
    public var status: HTTPStatus { response.status }

    public var description: String {
        let request = response.request
        var text = "\(kind == .unacceptableStatus ? "unacceptableStatus" : "undecodable"): "
        text += "\(request.method) \(response.url?.absoluteString ?? request.description) answered \(response.status)"
        switch kind {
        case .unacceptableStatus: text += ", which the request does not accept"
        case .undecodable: text += ", but its body is not a \(expectedType)"
        }
        if let underlyingError { text += " (\(Self.summary(of: underlyingError)))" }
        text += " — body: " + BodyExcerpt.make(response.body)
        return text
    }

    public var errorDescription: String? { description }

    /// A one-line account of a decoding error: what was missing or wrong, and where.
    static func summary(of error: any Error) -> String {
        guard let decodingError = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "at the top level" : "at " + keys.joined(separator: ".")
        }
        switch decodingError {
        case .keyNotFound(let key, let context):
            return "keyNotFound \"\(key.stringValue)\" \(path(context))"
        case .typeMismatch(let type, let context):
            return "typeMismatch: expected \(type) \(path(context))"
        case .valueNotFound(let type, let context):
            return "valueNotFound: expected \(type) \(path(context))"
        case .dataCorrupted(let context):
            return "dataCorrupted \(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(decodingError)"
        }
    }
}

/// A server answered with a status the request does not accept, and a body that decoded as the request's
/// error type; see ``Request/decodingErrors(as:decoder:)``.
public struct ServerError<Body: Sendable>: Error, Sendable, CustomStringConvertible {
    /// The decoded error body.
    public var body: Body
    /// The response it came with.
    public var response: HTTPResponse

    public init(body: Body, response: HTTPResponse) {
        self.body = body
        self.response = response
    }

    public var description: String {
        "serverError: \(response.request.method) \(response.url?.absoluteString ?? response.request.description) "
            + "answered \(response.status): \(body)"
    }
}

/// The first bytes of a body, printable and with secrets hidden, for error messages.
enum BodyExcerpt {
    static let limit = 200

    /// JSON and form fields whose values never appear in an excerpt.
    static let secretFields = [
        "access_token", "refresh_token", "id_token", "token", "password", "client_secret", "secret", "code",
    ]

    static func make(_ body: Data) -> String {
        guard !body.isEmpty else { return "(empty)" }
        var text = String(decoding: body.prefix(4_096), as: UTF8.self)
        for field in secretFields {
            text = redact(field, in: text)
        }
        let printable = String(text.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
        guard printable.count > limit || body.count > 4_096 else { return printable }
        return String(printable.prefix(limit)) + "… (\(body.count) bytes)"
    }

    /// Replaces the value of `"field": "…"` (JSON) and `field=…` (form) with `<redacted>`.
    private static func redact(_ field: String, in text: String) -> String {
        var result = text
        for pattern in ["\"\(field)\"\\s*:\\s*\"[^\"]*\"", "(?<=[?&\\s]|^)\(field)=[^&\\s]*"] {
            guard let expression = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else {
                continue
            }
            let range = NSRange(result.startIndex..., in: result)
            let template = pattern.hasPrefix("\"") ? "\"\(field)\":\"<redacted>\"" : "\(field)=<redacted>"
            result = expression.stringByReplacingMatches(in: result, range: range, withTemplate: template)
        }
        return result
    }
}

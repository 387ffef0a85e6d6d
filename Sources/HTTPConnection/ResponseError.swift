public import Foundation
public import HTTP

/// A response arrived but could not be turned into the requested value.
///
/// The description names the request, the status, what went wrong, and the first bytes of the body — with
/// secrets hidden by `Redaction.standard` there and in the URL — so that a log line is enough to diagnose
/// it:
///
/// ```
/// undecodable: GET https://api.example.com/v1/people/42 answered 200 OK, but its body is not a Person
/// (keyNotFound "name") — body: {"id":42,"nmae":"Zoë"}
/// ```
public struct ResponseError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What was wrong with the response: a code, compared with `==` (more may be added, so a `switch` over it
    /// needs a `default`).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The status is not one the request accepts (by default, anything but 2xx).
        public static let unacceptableStatus = Kind(rawValue: "unacceptableStatus")
        /// The status was accepted, but the body (or a line or an event of a stream) could not be decoded.
        public static let undecodable = Kind(rawValue: "undecodable")
    }

    /// What was wrong.
    public var kind: Kind
    /// The response.
    public var response: HTTPResponse
    /// The type the request expected, for messages.
    public var expectedType: String
    /// The decoding error, for ``Kind/undecodable``.
    public var underlyingError: (any Error)?
    /// For a body read line by line (``Connection/lines(for:maximumLineLength:)``,
    /// ``Connection/jsonLines(for:maximumLineLength:)``), the number of the line that did not decode,
    /// from 1; the ``response``'s body is then that line (its first 4 KiB). `nil` for a whole body.
    public var line: Int?

    public init(kind: Kind, response: HTTPResponse, expectedType: Any.Type, underlyingError: (any Error)? = nil) {
        self.kind = kind
        self.response = response
        self.expectedType = String(describing: expectedType)
        self.underlyingError = underlyingError
    }

    /// The status of the response.
    public var status: HTTPStatus { response.status }

    /// What was wrong, with secrets hidden by `Redaction.standard`: `"<kind>: <METHOD> <URL> answered
    /// <status>, … (<decoding error>) — body: <excerpt>"`.
    public var description: String {
        let redaction = Redaction.standard
        var text = "\(kind): "
        text += "\(response.request.method) \(BodyExcerpt.displayURL(of: response)) answered \(response.status)"
        if kind == .unacceptableStatus {
            text += ", which the request does not accept"
        } else if let line {
            text += ", but its line \(line) is not a \(expectedType)"
        } else {
            text += ", but its body is not a \(expectedType)"
        }
        if let underlyingError { text += " (\(redaction.display(body: Self.summary(of: underlyingError))))" }
        text += line == nil ? " — body: " : " — line: "
        text += BodyExcerpt.make(response.body, contentType: response.headers["Content-Type"])
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

    /// `"serverError: <METHOD> <URL> answered <status>: <body>"`, with secrets hidden by
    /// `Redaction.standard` in the URL and in the decoded body's description.
    public var description: String {
        "serverError: \(response.request.method) \(BodyExcerpt.displayURL(of: response)) "
            + "answered \(response.status): \(Redaction.standard.display(body: String(describing: body)))"
    }
}

/// The first bytes of a body, printable and with secrets hidden, for error messages.
enum BodyExcerpt {
    /// The most characters an excerpt shows.
    static let limit = 200
    /// The most bytes of a body that are read to make an excerpt.
    static let scanLimit = 4_096

    /// Up to ``limit`` characters of `body`, with what `redaction` hides replaced (also a value the excerpt cuts
    /// off) and control characters shown as spaces; when cut, followed by `… (<n> bytes)`.
    static func make(_ body: Data, contentType: String? = nil, redaction: Redaction = .standard) -> String {
        guard !body.isEmpty else { return "(empty)" }
        // Redacted before it is cut to `limit`, so that every name is seen whole next to its value.
        let redacted = redaction.display(
            body: String(decoding: body.prefix(scanLimit), as: UTF8.self), contentType: contentType)
        let printable = String(redacted.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
        guard printable.count > limit || body.count > scanLimit else { return printable }
        return String(printable.prefix(limit)) + "… (\(body.count) bytes)"
    }

    /// The URL a response came from, with secrets hidden, or the request's when it has none.
    static func displayURL(of response: HTTPResponse) -> String {
        response.url.map { Redaction.standard.display(url: $0.absoluteString) } ?? response.request.description
    }
}

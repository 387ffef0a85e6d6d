/// An HTTP response status code, such as `200 OK` or `404 Not Found`.
///
/// Any status is a *response*: the HTTP layer never turns a status into an error. Interpreting it is
/// the business of the connection layer and of retry and authentication strategies.
public struct HTTPStatus: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    /// The numeric code, for example `404`.
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    public init(integerLiteral value: Int) {
        self.rawValue = value
    }

    /// The class of a status code: its first digit.
    @frozen
    public enum Kind: Sendable, Hashable {
        /// 1xx
        case informational
        /// 2xx
        case success
        /// 3xx
        case redirection
        /// 4xx
        case clientError
        /// 5xx
        case serverError
        /// Anything outside 100...599.
        case invalid
    }

    /// The class this status belongs to.
    public var kind: Kind {
        switch rawValue {
        case 100..<200: .informational
        case 200..<300: .success
        case 300..<400: .redirection
        case 400..<500: .clientError
        case 500..<600: .serverError
        default: .invalid
        }
    }

    /// `true` for 1xx.
    public var isInformational: Bool { kind == .informational }
    /// `true` for 2xx.
    public var isSuccess: Bool { kind == .success }
    /// `true` for 3xx.
    public var isRedirection: Bool { kind == .redirection }
    /// `true` for 4xx.
    public var isClientError: Bool { kind == .clientError }
    /// `true` for 5xx.
    public var isServerError: Bool { kind == .serverError }

    public static func < (lhs: HTTPStatus, rhs: HTTPStatus) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        if let phrase = reasonPhrase { "\(rawValue) \(phrase)" } else { "\(rawValue)" }
    }

    /// The standard reason phrase for well-known codes, for example `"Not Found"` for 404.
    public var reasonPhrase: String? { Self.reasonPhrases[rawValue] }

    public static let `continue`: HTTPStatus = 100
    public static let switchingProtocols: HTTPStatus = 101
    public static let ok: HTTPStatus = 200
    public static let created: HTTPStatus = 201
    public static let accepted: HTTPStatus = 202
    public static let nonAuthoritativeInformation: HTTPStatus = 203
    public static let noContent: HTTPStatus = 204
    public static let resetContent: HTTPStatus = 205
    public static let partialContent: HTTPStatus = 206
    public static let multipleChoices: HTTPStatus = 300
    public static let movedPermanently: HTTPStatus = 301
    public static let found: HTTPStatus = 302
    public static let seeOther: HTTPStatus = 303
    public static let notModified: HTTPStatus = 304
    public static let temporaryRedirect: HTTPStatus = 307
    public static let permanentRedirect: HTTPStatus = 308
    public static let badRequest: HTTPStatus = 400
    public static let unauthorized: HTTPStatus = 401
    public static let paymentRequired: HTTPStatus = 402
    public static let forbidden: HTTPStatus = 403
    public static let notFound: HTTPStatus = 404
    public static let methodNotAllowed: HTTPStatus = 405
    public static let notAcceptable: HTTPStatus = 406
    public static let requestTimeout: HTTPStatus = 408
    public static let conflict: HTTPStatus = 409
    public static let gone: HTTPStatus = 410
    public static let preconditionFailed: HTTPStatus = 412
    public static let contentTooLarge: HTTPStatus = 413
    public static let unsupportedMediaType: HTTPStatus = 415
    public static let unprocessableContent: HTTPStatus = 422
    public static let tooEarly: HTTPStatus = 425
    public static let preconditionRequired: HTTPStatus = 428
    public static let tooManyRequests: HTTPStatus = 429
    public static let internalServerError: HTTPStatus = 500
    public static let notImplemented: HTTPStatus = 501
    public static let badGateway: HTTPStatus = 502
    public static let serviceUnavailable: HTTPStatus = 503
    public static let gatewayTimeout: HTTPStatus = 504

    private static let reasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
        412: "Precondition Failed", 413: "Content Too Large", 415: "Unsupported Media Type",
        422: "Unprocessable Content", 425: "Too Early", 428: "Precondition Required", 429: "Too Many Requests",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout",
    ]
}

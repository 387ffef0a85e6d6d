public import Foundation

/// The result of loading a request: a response, or an error explaining why there is none.
public typealias HTTPResult = Result<HTTPResponse, HTTPError>

extension Result where Success == HTTPResponse, Failure == HTTPError {
    /// The response, when the load produced one.
    public var response: HTTPResponse? {
        if case .success(let response) = self { response } else { nil }
    }

    /// The error, when the load failed.
    public var error: HTTPError? {
        if case .failure(let error) = self { error } else { nil }
    }
}

/// Why a request produced no usable response.
///
/// An error always carries the request it concerns, a ``Code`` that loaders and strategies branch on, a
/// message for people, and, where there was one, the response and the underlying error.
///
/// ```swift
/// switch await loader.load(request) {
/// case .success(let response): print(response.status)
/// case .failure(let error) where error.code == .cancelled: break
/// case .failure(let error): print(error)  // "cannotConnect: GET https://… — could not connect …"
/// }
/// ```
public struct HTTPError: Error, Sendable {
    /// A category of failure. Codes are open-ended; loaders outside this module may add their own.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The request is malformed and was not sent: no host, a bad path, a header that would inject
        /// other headers, a body that failed to encode.
        public static let invalidRequest = Code(rawValue: "invalidRequest")
        /// No connection to the server could be made or kept: refused, unreachable, lost, or the end of a
        /// chain with no terminal loader.
        public static let cannotConnect = Code(rawValue: "cannotConnect")
        /// The request was cancelled before it completed.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The server did not answer in time.
        public static let timedOut = Code(rawValue: "timedOut")
        /// A secure connection could not be established or verified.
        public static let insecureConnection = Code(rawValue: "insecureConnection")
        /// The server's answer was not valid HTTP, or could not be read.
        public static let invalidResponse = Code(rawValue: "invalidResponse")
        /// The chain is being reset; the request was refused or interrupted.
        public static let resetInProgress = Code(rawValue: "resetInProgress")
        /// The request needed credentials that could not be obtained.
        public static let cannotAuthenticate = Code(rawValue: "cannotAuthenticate")
        /// The request would have to be sent again — a retry, a replay after a `401`, a redirect that keeps the
        /// body — but its body can be sent only once (see ``HTTPBody/isReplayable``).
        public static let bodyNotReplayable = Code(rawValue: "bodyNotReplayable")
        /// ``FollowRedirects`` reached its limit of redirects for one load; the error keeps the last redirect as its
        /// ``HTTPError/response``.
        public static let tooManyRedirects = Code(rawValue: "tooManyRedirects")
        /// A redirect led back to a request already sent in the same load (the same method and URL), so following
        /// it would go round forever; the error keeps that redirect as its ``HTTPError/response``.
        public static let redirectLoop = Code(rawValue: "redirectLoop")
        /// A redirect's `Location` cannot be followed: it cannot be parsed, is not an `http` or `https` URL (a
        /// `file:` or `javascript:` one), has no host or has user information; the error keeps the redirect as its
        /// ``HTTPError/response``.
        public static let unusableRedirect = Code(rawValue: "unusableRedirect")
        /// Anything else; see ``HTTPError/underlyingError``.
        public static let unknown = Code(rawValue: "unknown")
    }

    /// The fields, in one ``CopyOnWriteBox`` shared by copies until one changes. Errors are rare, but every
    /// result has room for one: boxed, an error makes ``HTTPResult`` — held in every async frame a request
    /// passes through, and in every parked request — the size of a response instead of twice that.
    private struct Fields: Sendable {
        var code: Code
        var request: HTTPRequest
        var response: HTTPResponse?
        var underlyingError: (any Error)?
        var message: String
        /// Boxed: see `MetricsBox`.
        var metrics: MetricsBox?
    }

    private var storage: CopyOnWriteBox<Fields>

    /// The identity of the storage this error shares with its copies: for tests that check a change made no copy.
    package var storageIdentifier: ObjectIdentifier { ObjectIdentifier(storage) }

    private mutating func uniqueStorage() -> CopyOnWriteBox<Fields> {
        CopyOnWriteBox.unique(&storage)
    }

    /// The category of failure.
    public var code: Code {
        get { storage.value.code }
        set { uniqueStorage().value.code = newValue }
    }
    /// The request that failed.
    public var request: HTTPRequest {
        get { storage.value.request }
        set { uniqueStorage().value.request = newValue }
    }
    /// The response, when one was received but could not be used.
    public var response: HTTPResponse? {
        get { storage.value.response }
        set { uniqueStorage().value.response = newValue }
    }
    /// The error that caused this one, such as a `URLError` or an `EncodingError`.
    public var underlyingError: (any Error)? {
        get { storage.value.underlyingError }
        set { uniqueStorage().value.underlyingError = newValue }
    }
    /// What went wrong, for people; part of ``description``.
    public var message: String {
        get { storage.value.message }
        set { uniqueStorage().value.message = newValue }
    }

    /// What the failed transfer took, as the terminal measured it, when it got as far as the transport: a transfer
    /// that failed half-way (timed out after the response head, lost its connection) still says when it started,
    /// what it sent and received. When the error keeps a ``response``, that response may carry metrics of its own.
    public var metrics: HTTPMetrics? {
        get { storage.value.metrics?.metrics }
        set { uniqueStorage().value.metrics = newValue.map(MetricsBox.init) }
    }

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The category.
    ///   - request: The request that failed.
    ///   - message: What went wrong, in a phrase; defaults to a phrase for the code.
    ///   - response: The response, if one was received.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code,
        request: HTTPRequest,
        message: String? = nil,
        response: HTTPResponse? = nil,
        underlyingError: (any Error)? = nil
    ) {
        storage = CopyOnWriteBox(
            Fields(
                code: code, request: request, response: response, underlyingError: underlyingError,
                message: message ?? Self.defaultMessage(for: code), metrics: nil))
    }

    private static func defaultMessage(for code: Code) -> String {
        switch code {
        case .invalidRequest: "the request is invalid"
        case .cannotConnect: "could not connect to the server"
        case .cancelled: "the request was cancelled"
        case .timedOut: "the server did not answer in time"
        case .insecureConnection: "a secure connection could not be established"
        case .invalidResponse: "the server's response could not be read"
        case .resetInProgress: "the loader chain is being reset"
        case .cannotAuthenticate: "credentials could not be obtained"
        case .bodyNotReplayable: "the request's body cannot be sent again"
        case .tooManyRedirects: "the server redirected the request too many times"
        case .redirectLoop: "the server's redirects lead round in a loop"
        case .unusableRedirect: "the server redirected the request to a location that cannot be followed"
        default: "the request failed"
        }
    }
}

extension HTTPError: CustomStringConvertible, LocalizedError {
    /// `"<code>: <METHOD> <URL> — <message> [(HTTP <status>)] [(underlying: <error>)]"`, with secrets hidden by
    /// ``Redaction/standard``: in the URL's query, and in the message and the underlying error wherever they
    /// quote a URL, a JSON member, a `name=value` or a `name: value` pair.
    public var description: String {
        let redaction = Redaction.standard
        var text = "\(code): \(request.method) \(request.displayURL) — \(redaction.display(text: message))"
        if let response { text += " (HTTP \(response.status))" }
        if let cause = underlyingErrorDescription { text += " (underlying: \(redaction.display(text: cause)))" }
        return text
    }

    /// The underlying error in a form fit for one log line, or `nil` when there is none — or when the message
    /// already names it, as a message that quotes its cause does ("could not write the body to /tmp/x: <error>"):
    /// a line names the cause once. An underlying `HTTPError` is its code and message (its request is this one's, or
    /// the one before a retry), and its own cause where its message does not name that.
    var underlyingErrorDescription: String? {
        guard let underlyingError else { return nil }
        let text = Self.summary(of: underlyingError)
        return message.contains(text) ? nil : text
    }

    /// `error` in a form fit for one log line.
    private static func summary(of error: any Error) -> String {
        switch error {
        case let urlError as URLError:
            return urlError.code.displayName
        case let httpError as HTTPError:
            let cause = httpError.underlyingErrorDescription.map { " (underlying: \($0))" } ?? ""
            return "\(httpError.code) — \(httpError.message)\(cause)"
        default:
            return "\(error)"
        }
    }

    public var errorDescription: String? { description }
}

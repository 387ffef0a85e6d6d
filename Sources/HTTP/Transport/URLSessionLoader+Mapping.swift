#if canImport(FoundationNetworking)
import Foundation
#else
public import Foundation
#endif

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension HTTPRequest {
    /// The `URLRequest` that sends this request, after validating it.
    ///
    /// Header fields are the request's own followed by the body's ``HTTPBody/additionalHeaders``; the
    /// ``timeout`` option becomes the request's `timeoutInterval`. A body in memory becomes `httpBody`; a body
    /// that streams (a file, a sequence) becomes `httpBodyStream`.
    ///
    /// - Throws: ``HTTPError`` with ``HTTPError/Code/invalidRequest`` when the request is malformed or its
    ///   body fails to encode (see ``validate()``).
    ///   A ``StreamBody`` cannot be put in a `URLRequest` (its sequence is consumed when
    ///   ``URLSessionLoader`` sends it) and fails the same way.
    public func urlRequest() throws(HTTPError) -> URLRequest {
        var prepared = try preparedForURLSession()
        if prepared.spool != nil {
            throw HTTPError(
                .invalidRequest, request: self,
                message: "the body (\(type(of: body))) is an AsyncSequence, which a URLRequest cannot hold")
        }
        if let file = prepared.uploadFile {
            prepared.urlRequest.httpBodyStream = InputStream(url: file)
        }
        return prepared.urlRequest
    }

    /// The `URLRequest` that sends this request and where its body comes from: in memory or a stream in the
    /// request, or a whole file to upload (which URLSession sends with its length).
    func preparedForURLSession() throws(HTTPError) -> PreparedRequest {
        let url = try validatedURL()  // built once: building a URL is not free
        try validateMethod()
        try validateHeaderFields()
        try validateBodyAllowed()
        var urlRequest = URLRequest(url: url)
        if method != .get { urlRequest.httpMethod = method.rawValue }  // GET is URLRequest's own default
        let source = try bodySource()
        // Fields with the same name (ignoring case) are sent as one, their values joined with commas, as
        // `URLRequest.addValue` would; the whole set is handed over at once, which costs a fraction of
        // adding the fields one by one.
        var fields: [(name: String, value: String)] = []
        for field in headersIncludingBody {
            if let same = fields.firstIndex(where: { HTTPHeaders.namesMatch($0.name, field.name) }) {
                fields[same].value += "," + field.value
            } else {
                fields.append((field.name, field.value))
            }
        }
        #if !canImport(FoundationNetworking)
        // A body stream goes with chunked transfer coding unless the request names its length. (On Linux,
        // swift-corelibs-foundation sends every body stream chunked, so the length is not added there: a request
        // with both would be malformed. A whole file is uploaded with its length on both.)
        if let length = source?.length, source?.inMemory == nil, source?.wholeFile == nil, source?.segments != nil,
            !fields.contains(where: { HTTPHeaders.namesMatch($0.name, "Content-Length") })
        {
            fields.append(("Content-Length", String(length)))
        }
        #endif
        if !fields.isEmpty {
            var all = [String: String](minimumCapacity: fields.count)
            for field in fields { all[field.name] = field.value }
            urlRequest.allHTTPHeaderFields = all
        }
        var uploadFile: URL?
        var spool: HTTPBodySource?
        if let source {
            if let data = source.inMemory {
                urlRequest.httpBody = data
            } else if let file = source.wholeFile {
                uploadFile = file
            } else if let segments = source.segments {
                urlRequest.httpBodyStream = BodyInputStream(segments: segments)
            } else {
                spool = source
            }
        }
        if let timeout {
            // URLSession converts the interval to whole milliseconds and beyond; a week is forever to HTTP.
            let interval = min(max(0.001, timeout.seconds), 7 * 24 * 3_600)
            #if canImport(FoundationNetworking)
            urlRequest.timeoutInterval = interval.rounded(.up)  // corelibs truncates to whole seconds
            #else
            urlRequest.timeoutInterval = interval
            #endif
        }
        return PreparedRequest(urlRequest: urlRequest, uploadFile: uploadFile, spool: spool, bodyLength: source?.length)
    }
}

extension HTTPResponse {
    /// A response built from what `URLSession` returned. Its header fields are converted when first read.
    init(request: HTTPRequest, urlResponse: HTTPURLResponse, body: Data) {
        self.init(
            request: request,
            status: HTTPStatus(rawValue: urlResponse.statusCode),
            headers: URLResponseHeaders(response: urlResponse),
            body: body,
            url: urlResponse.url
        )
    }
}

/// The header fields of an `HTTPURLResponse`.
// Safety: the response is never mutated after URLSession hands it over.
private struct URLResponseHeaders: HeaderSource, @unchecked Sendable {
    let response: HTTPURLResponse

    func headerFields() -> HTTPHeaders {
        // URLSession hands the fields over as a dictionary; sorting them by name makes the order stable.
        let all = response.allHeaderFields
        var fields: [(sortKey: String, field: HTTPHeaders.Field)] = []
        fields.reserveCapacity(all.count)
        for (key, value) in all {
            guard let name = key as? String else { continue }
            let text = value as? String ?? "\(value)"
            // URLSession folds repeated fields into one with commas; Set-Cookie lines must stay apart.
            let values = HTTPHeaders.namesMatch(name, "Set-Cookie") ? SetCookie.unfolded(text) : [text]
            for value in values { fields.append((name.lowercased(), HTTPHeaders.Field(name: name, value: value))) }
        }
        fields.sort { $0.sortKey < $1.sortKey }
        return HTTPHeaders(fields.map(\.field))
    }
}

extension HTTPError {
    /// Maps an error from `URLSession` to an ``HTTPError`` with the matching code, keeping it as the
    /// underlying error.
    ///
    /// The message names the server and keeps the transport's own explanation — libcurl's text on Linux
    /// ("SSL certificate problem: self-signed certificate"), URLSession's on Apple platforms — without the
    /// request's query, its header values or any URL's query (see ``TransportErrorText``).
    ///
    /// TLS failures become ``HTTPError/Code/insecureConnection`` on both paths: Apple platforms report them with
    /// their own codes (`secureConnectionFailed`, `serverCertificateUntrusted`, …); swift-corelibs-foundation
    /// has no code for them and reports `URLError.unknown` (-1), recognised by libcurl's text.
    init(request: HTTPRequest, transportError error: any Error) {
        guard let urlError = error as? URLError else {
            let cause = TransportErrorText.scrubbed(error.localizedDescription, for: request, failingURL: nil)
            self.init(
                .unknown,
                request: request,
                message: "the transport failed" + (cause.map { ": \($0)" } ?? ""),
                underlyingError: error
            )
            return
        }
        if urlError.code == .cancelled {
            // Cancelled by the caller (or by the loader declining a challenge): URLSession's text adds nothing.
            self.init(.cancelled, request: request, message: "the request was cancelled", underlyingError: urlError)
            return
        }
        let explanation = TransportErrorText.explanation(of: urlError)
        let cause = explanation.flatMap {
            TransportErrorText.scrubbed($0, for: request, failingURL: urlError.failingURL)
        }
        let target = Self.target(of: urlError.failingURL, request: request)
        let code: Code
        let phrase: String
        switch urlError.code {
        case _ where TransportErrorText.isSecureConnectionFailure(urlError.code, explanation: explanation):
            code = .insecureConnection
            phrase = "no secure connection to \(target)"
        case .unknown where TransportErrorText.isLostConnection(explanation):
            // swift-corelibs-foundation reports a connection closed before the body's end — libcurl's "transfer
            // closed with N bytes remaining to read" — as URLError.unknown; Apple platforms as
            // networkConnectionLost. Either way the connection was lost, and a download can resume.
            code = .cannotConnect
            phrase = "the connection to \(target) was lost before the response was complete"
        case .timedOut:
            code = .timedOut
            phrase = "\(target) did not answer in time"
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
            .networkConnectionLost, .internationalRoamingOff, .callIsActive, .dataNotAllowed, .resourceUnavailable:
            code = .cannotConnect
            phrase = "could not reach \(target)"
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData,
            .zeroByteResource, .dataLengthExceedsMaximum, .httpTooManyRedirects, .redirectToNonExistentLocation:
            code = .invalidResponse
            phrase = "the response from \(target) could not be used"
        case .badURL, .unsupportedURL:
            code = .invalidRequest
            phrase = "URLSession rejected the URL"
        case .userAuthenticationRequired, .userCancelledAuthentication:
            code = .cannotAuthenticate
            phrase = "\(target) required authentication"
        default:
            code = .unknown
            phrase = "the transport failed"
        }
        let message = phrase + (cause.map { ": \($0)" } ?? "") + " (\(urlError.code.displayName))"
        self.init(code, request: request, message: message, underlyingError: urlError)
    }

    /// `host:port` of the URL that failed, or `"the server"`.
    private static func target(of failingURL: URL?, request: HTTPRequest) -> String {
        let host = failingURL?.host ?? request.host
        let port = failingURL != nil ? failingURL?.port : request.port
        guard let host else { return "the server" }
        return host + (port.map { ":\($0)" } ?? "")
    }
}

/// The text a transport error carries, made fit for an ``HTTPError/message``.
enum TransportErrorText {
    /// The longest explanation kept, in characters; libcurl's are at most 255 bytes.
    static let maximumLength = 300

    /// The explanation `error` carries: its `NSLocalizedDescription`, else its underlying error's; `nil` when
    /// it has none. (The `localizedDescription` of a `URLError` without one is only a generic sentence around
    /// the code's number.) swift-corelibs-foundation puts libcurl's error text in both.
    static func explanation(of error: URLError) -> String? {
        if let text = error.userInfo[NSLocalizedDescriptionKey] as? String, !text.isEmpty { return text }
        guard let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error else { return nil }
        let text = (underlying as NSError).userInfo[NSLocalizedDescriptionKey] as? String
        return text?.isEmpty == false ? text : nil
    }

    /// Whether libcurl's text says the connection ended before the whole body had arrived.
    static func isLostConnection(_ explanation: String?) -> Bool {
        guard let explanation else { return false }
        return explanation.contains("transfer closed with") || explanation.contains("Connection died")
            || explanation.contains("Recv failure") || explanation.contains("Send failure")
    }

    /// Whether a `URLError` reports that no secure connection could be made: one of the TLS codes Apple
    /// platforms use, or, from swift-corelibs-foundation, `URLError.unknown` with libcurl's text about TLS
    /// ("SSL certificate problem: …", "SSL: no alternative certificate subject name matches …",
    /// "OpenSSL SSL_connect: …", "…:SSL routines::wrong version number", GnuTLS's "… certificate …").
    static func isSecureConnectionFailure(_ code: URLError.Code, explanation: String?) -> Bool {
        switch code {
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
            return true
        case .unknown:
            // A read or write that fails on a connection already secured ("OpenSSL SSL_read: … unexpected eof")
            // is a lost connection, not a failure to secure one.
            guard let explanation, !explanation.contains("SSL_read"), !explanation.contains("SSL_write") else {
                return false
            }
            return ["SSL", "TLS", "schannel"].contains { explanation.contains($0) }
                || explanation.range(of: "certificate", options: .caseInsensitive) != nil
        default:
            return false
        }
    }

    /// `text` as one line of at most ``maximumLength`` characters, with nothing secret the request could have
    /// put into it: the request's query and fragment and the values of its query items and header fields (those
    /// of four characters or more) are replaced by `<redacted>`, and so are the user info, query and fragment of
    /// any URL in the text. `nil` when nothing is left.
    static func scrubbed(_ text: String, for request: HTTPRequest, failingURL: URL?) -> String? {
        var secrets: [String] = []
        for part in [request.percentEncodedQuery, failingURL?.query, request.fragment, failingURL?.fragment] {
            guard let part, !part.isEmpty else { continue }
            secrets.append(part)
            for pair in part.split(separator: "&") {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let value = String(pair[pair.index(after: equals)...])
                secrets.append(value)
                if let decoded = PercentEncoding.decode(value) { secrets.append(decoded) }
            }
        }
        secrets += request.headersIncludingBody.map(\.value)
        secrets += secrets.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        // Longest first, so that a secret containing another one goes whole; before the line is made one line,
        // so that a secret with a line break in it is still found.
        var line = text
        for secret in Set(secrets).sorted(by: { $0.count > $1.count })
        where secret.count >= 4 && !secret.allSatisfy(\.isWhitespace) {
            line = line.replacingOccurrences(of: secret, with: "<redacted>")
        }
        line = String(
            String.UnicodeScalarView(line.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        line = line.split(separator: " ", omittingEmptySubsequences: false).map(withoutURLSecrets)
            .joined(separator: " ")
        line = line.trimmingCharacters(in: .whitespaces)
        while line.hasSuffix(".") { line.removeLast() }
        if line.count > maximumLength { line = line.prefix(maximumLength - 1) + "…" }
        return line.isEmpty ? nil : line
    }

    /// A word of text; if it holds a URL (`scheme://…`), without the URL's user info, query and fragment.
    private static func withoutURLSecrets(_ word: Substring) -> String {
        var url = String(word)
        guard let schemeEnd = url.range(of: "://") else { return url }
        let authorityEnd = url[schemeEnd.upperBound...].firstIndex { "/?#".contains($0) } ?? url.endIndex
        if let at = url[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@") {
            url.replaceSubrange(schemeEnd.upperBound...at, with: "<redacted>@")
        }
        if let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            url.replaceSubrange(url.index(after: cut)..., with: "<redacted>")
        }
        return url
    }
}

extension URLError.Code {
    /// `URLError.cannotConnectToHost (-1004)`: the name where it is a common one, and always the number
    /// (`URLError code -1`).
    var displayName: String {
        guard let name else { return "URLError code \(rawValue)" }
        return "URLError.\(name) (\(rawValue))"
    }

    private var name: String? {
        switch self {
        case .cancelled: "cancelled"
        case .timedOut: "timedOut"
        case .cannotConnectToHost: "cannotConnectToHost"
        case .cannotFindHost: "cannotFindHost"
        case .dnsLookupFailed: "dnsLookupFailed"
        case .notConnectedToInternet: "notConnectedToInternet"
        case .networkConnectionLost: "networkConnectionLost"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .serverCertificateHasBadDate: "serverCertificateHasBadDate"
        case .serverCertificateUntrusted: "serverCertificateUntrusted"
        case .serverCertificateHasUnknownRoot: "serverCertificateHasUnknownRoot"
        case .serverCertificateNotYetValid: "serverCertificateNotYetValid"
        case .clientCertificateRejected: "clientCertificateRejected"
        case .clientCertificateRequired: "clientCertificateRequired"
        case .appTransportSecurityRequiresSecureConnection: "appTransportSecurityRequiresSecureConnection"
        case .badServerResponse: "badServerResponse"
        case .cannotParseResponse: "cannotParseResponse"
        case .cannotDecodeContentData: "cannotDecodeContentData"
        case .httpTooManyRedirects: "httpTooManyRedirects"
        case .badURL: "badURL"
        case .unsupportedURL: "unsupportedURL"
        case .userAuthenticationRequired: "userAuthenticationRequired"
        case .zeroByteResource: "zeroByteResource"
        default: nil
        }
    }
}

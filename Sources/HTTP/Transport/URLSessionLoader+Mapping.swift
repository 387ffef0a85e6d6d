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
    /// ``timeout`` option becomes the request's `timeoutInterval`.
    ///
    /// - Throws: ``HTTPError`` with ``HTTPError/Code/invalidRequest`` when the request is malformed or its
    ///   body fails to encode (see ``validate()``).
    public func urlRequest() throws(HTTPError) -> URLRequest {
        let url = try validatedURL()  // built once: building a URL is not free
        try validateHeaderFields()
        try validateBodyAllowed()
        var urlRequest = URLRequest(url: url)
        if method != .get { urlRequest.httpMethod = method.rawValue }  // GET is URLRequest's own default
        let body = try encodedBody()
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
        if !fields.isEmpty {
            var all = [String: String](minimumCapacity: fields.count)
            for field in fields { all[field.name] = field.value }
            urlRequest.allHTTPHeaderFields = all
        }
        urlRequest.httpBody = body
        if let timeout {
            // URLSession converts the interval to whole milliseconds and beyond; a week is forever to HTTP.
            let interval = min(max(0.001, timeout.seconds), 7 * 24 * 3_600)
            #if canImport(FoundationNetworking)
            urlRequest.timeoutInterval = interval.rounded(.up)  // corelibs truncates to whole seconds
            #else
            urlRequest.timeoutInterval = interval
            #endif
        }
        return urlRequest
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
            fields.append((name.lowercased(), HTTPHeaders.Field(name: name, value: value as? String ?? "\(value)")))
        }
        fields.sort { $0.sortKey < $1.sortKey }
        return HTTPHeaders(fields.map(\.field))
    }
}

extension HTTPError {
    /// Maps an error from `URLSession` to an ``HTTPError`` with the matching code, keeping it as the
    /// underlying error.
    init(request: HTTPRequest, transportError error: any Error) {
        guard let urlError = error as? URLError else {
            self.init(
                .unknown,
                request: request,
                message: "the transport failed: \(error.localizedDescription)",
                underlyingError: error
            )
            return
        }
        let code: Code
        let message: String
        let target = request.url.map { "\($0.host ?? "?")\($0.port.map { ":\($0)" } ?? "")" } ?? "the server"
        switch urlError.code {
        case .cancelled:
            code = .cancelled
            message = "the request was cancelled"
        case .timedOut:
            code = .timedOut
            message = "\(target) did not answer in time"
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
            .networkConnectionLost, .internationalRoamingOff, .callIsActive, .dataNotAllowed, .resourceUnavailable:
            code = .cannotConnect
            message = "could not reach \(target) (\(urlError.code.displayName))"
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
            code = .insecureConnection
            message = "no secure connection to \(target) (\(urlError.code.displayName))"
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData,
            .zeroByteResource, .dataLengthExceedsMaximum, .httpTooManyRedirects, .redirectToNonExistentLocation:
            code = .invalidResponse
            message = "the response from \(target) could not be used (\(urlError.code.displayName))"
        case .badURL, .unsupportedURL:
            code = .invalidRequest
            message = "URLSession rejected the URL (\(urlError.code.displayName))"
        case .userAuthenticationRequired, .userCancelledAuthentication:
            code = .cannotAuthenticate
            message = "\(target) required authentication (\(urlError.code.displayName))"
        default:
            code = .unknown
            message = "the transport failed (\(urlError.code.displayName))"
        }
        self.init(code, request: request, message: message, underlyingError: urlError)
    }
}

extension URLError.Code {
    /// `URLError.cannotConnectToHost (-1004)`: the name where it is a common one, and always the number.
    var displayName: String {
        let names: [URLError.Code: String] = [
            .cannotConnectToHost: "cannotConnectToHost", .timedOut: "timedOut", .cancelled: "cancelled",
            .cannotFindHost: "cannotFindHost",
            .dnsLookupFailed: "dnsLookupFailed", .notConnectedToInternet: "notConnectedToInternet",
            .networkConnectionLost: "networkConnectionLost", .secureConnectionFailed: "secureConnectionFailed",
            .serverCertificateUntrusted: "serverCertificateUntrusted", .badServerResponse: "badServerResponse",
            .cannotParseResponse: "cannotParseResponse", .cannotDecodeContentData: "cannotDecodeContentData",
            .httpTooManyRedirects: "httpTooManyRedirects", .badURL: "badURL", .unsupportedURL: "unsupportedURL",
            .userAuthenticationRequired: "userAuthenticationRequired", .zeroByteResource: "zeroByteResource",
        ]
        return "URLError." + (names[self].map { "\($0) (\(rawValue))" } ?? "code \(rawValue)")
    }
}

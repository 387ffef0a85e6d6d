package import HTTP

/// The names the OpenTelemetry semantic conventions give to what the three integrations report, and the few of the
/// package's own, so that a log line, a metric and a span of one load use the same key for the same thing.
///
/// Shared by `HTTPLogging`, `HTTPMetricsIntegration` and `HTTPTracing`; not public API.
package enum Conventions {
    /// `http.request.method`: the method, or `_OTHER` for one the conventions do not know (see
    /// `HTTPRequest.conventionalMethod`).
    package static let method = "http.request.method"
    /// `http.request.method_original`: the method as sent, when ``method`` is `_OTHER`.
    package static let originalMethod = "http.request.method_original"
    /// `http.request.resend_count`: how many times the request was sent before this attempt (retries and redirects).
    package static let resendCount = "http.request.resend_count"
    /// `http.response.status_code`.
    package static let statusCode = "http.response.status_code"
    /// `server.address`: the host the request is sent to.
    package static let serverAddress = "server.address"
    /// `server.port`: the port, explicit or the scheme's default.
    package static let serverPort = "server.port"
    /// `url.scheme`.
    package static let urlScheme = "url.scheme"
    /// `url.full`: the absolute URL, its secrets redacted.
    package static let urlFull = "url.full"
    /// `error.type`: an `HTTPError.Code` (`cannotConnect`, `timedOut`, …) or, for a response with a `4xx` or
    /// `5xx` status, the status code.
    package static let errorType = "error.type"
    /// `error.message`: an error's message, its secrets redacted.
    package static let errorMessage = "error.message"

    // The package's own names, for what the conventions do not name.

    /// `http.load_id`: the `LoadID` that groups a load's attempts and events.
    package static let loadID = "http.load_id"
    /// `http.response.status_class`: `1xx` … `5xx`, the bounded form of the status for metric dimensions.
    package static let statusClass = "http.response.status_class"

    /// The methods RFC 9110 and RFC 5789 define: the conventions' set of known methods.
    private static let knownMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY",
    ]

    /// Whether the conventions know `method` by name.
    package static func isKnown(_ method: HTTPMethod) -> Bool {
        knownMethods.contains(method.rawValue)
    }
}

extension HTTPRequest {
    /// The method as `Conventions.method` names it: one of the known methods, or `_OTHER` — a bounded value, fit
    /// for a metric dimension or a span name.
    package var conventionalMethod: String {
        Conventions.isKnown(method) ? method.rawValue : "_OTHER"
    }

    /// The port the request goes to: its own, or its scheme's default.
    package var effectivePort: Int? {
        port ?? Origin.defaultPort(forScheme: scheme)
    }

    /// The URL as text, with the values `redaction` hides replaced: query items, fragment parameters and the password
    /// of user information. Built from the parts even when they do not form a valid URL (no host yet), so a relative
    /// request shows its path.
    package func redactedURL(_ redaction: Redaction) -> String {
        var text = ""
        if let host {
            text = "\(scheme)://\(host)"
            if let port { text += ":\(port)" }
        }
        text += percentEncodedPath
        if let percentEncodedQuery { text += "?" + percentEncodedQuery }
        return redaction.display(url: text)
    }
}

extension HTTPStatus {
    /// `1xx`, `2xx`, `3xx`, `4xx` or `5xx`; `invalid` for a status outside 100...599.
    package var statusClass: String {
        switch kind {
        case .informational: "1xx"
        case .success: "2xx"
        case .redirection: "3xx"
        case .clientError: "4xx"
        case .serverError: "5xx"
        case .invalid: "invalid"
        }
    }
}

extension Result where Success == HTTPResponse, Failure == HTTPError {
    /// The response's status, if the result is a response.
    package var status: HTTPStatus? {
        if case .success(let response) = self { response.status } else { nil }
    }

    /// `Conventions.errorType` of the result: the error's code, or a `4xx` or `5xx` status as its code; `nil` for a
    /// success.
    package var errorType: String? {
        switch self {
        case .success(let response):
            response.status.rawValue >= 400 ? String(response.status.rawValue) : nil
        case .failure(let error):
            error.code.rawValue
        }
    }

    /// Whether the load was given up by its caller rather than failed: cancelled by its task, or refused or ended
    /// by a reset of the chain.
    package var isAbandoned: Bool {
        guard case .failure(let error) = self else { return false }
        return error.code == .cancelled || error.code == .resetInProgress
    }
}

extension Duration {
    /// The duration in seconds, as the conventions measure durations.
    package var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension Result where Success == HTTPResponse, Failure == HTTPError {
    /// The request of the response or of the error: the copy last sent, or refused.
    package var sentRequest: HTTPRequest {
        switch self {
        case .success(let response): response.request
        case .failure(let error): error.request
        }
    }
}

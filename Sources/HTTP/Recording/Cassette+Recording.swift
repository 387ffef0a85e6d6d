import Foundation

extension Cassette.Request {
    /// `request` as it is sent — the URL without its fragment, the body's header fields included — with the values
    /// `redaction` hides replaced. A ``ReplayLoader`` matches requests in this form.
    init(recording request: HTTPRequest, redaction: Redaction) {
        let headers = request.headersIncludingBody
        let body = (try? request.encodedBody()).flatMap { $0 }
        self.init(
            method: request.method,
            url: request.displayURL(redaction: redaction),
            headers: headers.redacted(by: redaction),
            body: body.flatMap {
                Cassette.Body(recording: $0, contentType: headers["Content-Type"], redaction: redaction)
            }
        )
    }
}

extension Cassette.Response {
    /// `response` with the values `redaction` hides replaced.
    init(recording response: HTTPResponse, redaction: Redaction) {
        let headers = response.headers
        var url: String?
        if let responseURL = response.url?.absoluteString, responseURL != response.request.url?.absoluteString {
            url = redaction.display(url: responseURL)
        }
        self.init(
            status: response.status,
            headers: headers.redacted(by: redaction),
            body: Cassette.Body(recording: response.body, contentType: headers["Content-Type"], redaction: redaction),
            url: url
        )
    }

    /// The response this recording answers `request` with.
    func response(answering request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(
            request: request, status: status, headers: headers, body: body?.data ?? Data(),
            url: url.flatMap { URL(string: $0) })
    }
}

extension Cassette.Body {
    /// `data` as text with hidden values replaced when it is UTF-8, as bytes otherwise; `nil` when it is empty.
    init?(recording data: Data, contentType: String?, redaction: Redaction) {
        guard !data.isEmpty else { return nil }
        if let text = String(validating: data, as: UTF8.self) {
            self = .text(redaction.display(body: text, contentType: contentType))
        } else {
            self = .binary(data)
        }
    }
}

extension Cassette.Entry {
    /// Whether a load that ended with `result` is recorded: not when it was cancelled, refused by a reset or
    /// invalid — nothing was exchanged with a server then, or nothing that says anything about it.
    static func records(_ result: HTTPResult) -> Bool {
        guard case .failure(let error) = result else { return true }
        return ![.cancelled, .resetInProgress, .invalidRequest].contains(error.code)
    }

    /// The entry for `request`, which got `result` after `duration`.
    init(
        sequence: Int, request: HTTPRequest, result: HTTPResult, startedAt: Date, duration: Duration,
        redaction: Redaction
    ) {
        var response: Cassette.Response?
        var failure: Cassette.Failure?
        switch result {
        case .success(let received):
            response = Cassette.Response(recording: received, redaction: redaction)
        case .failure(let error):
            response = error.response.map { Cassette.Response(recording: $0, redaction: redaction) }
            failure = Cassette.Failure(code: error.code, message: redaction.display(text: error.message))
        }
        self.init(
            sequence: sequence, loadID: request.id, attempt: request.attemptNumber, startedAt: startedAt,
            duration: duration, request: Cassette.Request(recording: request, redaction: redaction),
            response: response, failure: failure)
    }
}

extension HTTPHeaders {
    /// These fields with the values `redaction` hides replaced.
    func redacted(by redaction: Redaction) -> HTTPHeaders {
        HTTPHeaders(map { Field(name: $0.name, value: redaction.display($0.value, for: $0.name)) })
    }
}

import Foundation

extension HTTPResponse: CustomReflectable {
    /// The status, the URL, the header fields, the body and the request, with what ``Redaction/standard`` hides
    /// replaced: `dump`, `Mirror`, debuggers' `po` and crash reporters never show a secret (see
    /// ``HTTPRequest/customMirror``).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "status": status, "url": url.map { Redaction.standard.display(url: $0.absoluteString) } as Any,
                "headers": headers.redacted, "body": bodySummary, "request": request,
                "metrics": metrics.map { Redaction.standard.display(text: "\($0)") } as Any,
            ],
            displayStyle: .struct)
    }

    /// The body as a mirror shows it: where it went, or an excerpt with secrets hidden.
    private var bodySummary: String {
        if let fileURL { return "written to \(fileURL.path)" }
        if bodyStream != nil { return "streamed" }
        if body.isEmpty { return "empty" }
        return Redaction.standard.excerpt(of: body, contentType: headers["Content-Type"])
    }
}

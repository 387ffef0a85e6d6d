import Foundation

extension HTTPError: CustomReflectable {
    /// The code, the message, the request, the response and the underlying error, with what ``Redaction/standard``
    /// hides replaced: `dump`, `Mirror`, debuggers' `po` and crash reporters never show a secret (see
    /// ``HTTPRequest/customMirror``). The underlying error is shown as its type and its description with secrets
    /// hidden: a `URLError`'s user information carries the failing URL, query and all.
    public var customMirror: Mirror {
        let redaction = Redaction.standard
        let underlying = underlyingError.map { "\(type(of: $0)): " + redaction.display(text: "\($0)") }
        return Mirror(
            self,
            children: [
                "code": code, "message": redaction.display(text: message), "request": request,
                "response": response as Any, "underlyingError": underlying as Any,
                "metrics": metrics.map { redaction.display(text: "\($0)") } as Any,
            ],
            displayStyle: .struct)
    }
}

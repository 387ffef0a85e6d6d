extension HTTPHeaders {
    /// A copy with each value ``Redaction/standard`` hides replaced, as ``Redaction/display(_:for:)`` shows it:
    /// `Authorization: Bearer <redacted>`, a `Location` with its `code` query item hidden.
    var redacted: HTTPHeaders {
        HTTPHeaders(map { Field(name: $0.name, value: Redaction.standard.display($0.value, for: $0.name)) })
    }
}

extension HTTPHeaders: CustomReflectable {
    /// The fields in order, each value ``Redaction/standard`` hides replaced: `dump`, `Mirror`, debuggers' `po`
    /// and crash reporters never show a secret, and the children are redacted copies, so no code that walks the
    /// mirror can read one either.
    public var customMirror: Mirror {
        Mirror(self, unlabeledChildren: Array(redacted), displayStyle: .collection)
    }
}

extension HTTPHeaders.Field: CustomReflectable {
    /// The name and the value, a value ``Redaction/standard`` hides for this name replaced.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "value": Redaction.standard.display(value, for: name)])
    }
}

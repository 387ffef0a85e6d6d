import Foundation

extension HTTPRequest: CustomReflectable {
    /// The method, the URL, the header fields, the body and the options, with what ``Redaction/standard`` hides
    /// replaced — query items, fragment parameters, user information, header values, form and JSON fields, secrets
    /// in an option's description: `dump`, `Mirror`, debuggers' `po` and crash reporters never show a secret.
    ///
    /// The children are redacted copies (text, and ``HTTPHeaders`` with the hidden values replaced), so code that
    /// walks the mirror cannot read a secret either. A debugger that reads memory directly (LLDB's `frame variable`)
    /// ignores mirrors.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "id": id, "method": method, "url": displayURLWithFragment, "headers": headers.redacted,
                "body": bodySummary, "options": optionSummaries,
            ],
            displayStyle: .struct)
    }

    /// The URL as ``description`` shows it, with the fragment (where an implicit grant puts its `access_token`).
    var displayURLWithFragment: String {
        guard let fragment, unusableURL == nil else { return displayURL }
        return Redaction.standard.display(url: displayURL(redaction: .none) + "#" + fragment)
    }

    /// The body as a mirror shows it: its type and, for one in memory, an excerpt with secrets hidden.
    var bodySummary: String {
        guard !body.isEmpty else { return "empty" }
        let kind = "\(type(of: body))"
        if let file = body as? FileBody { return "\(kind): \(file.url.path)" }
        if body is StreamBody { return "\(kind): streamed" }
        guard let data = try? encodedBody() else { return "\(kind): not encodable" }
        let contentType = body.additionalHeaders["Content-Type"] ?? headers["Content-Type"]
        return "\(kind): " + Redaction.standard.excerpt(of: data, contentType: contentType)
    }

    /// Each option set on the request, as its type and its value's description with secrets hidden.
    var optionSummaries: [String] {
        storage.value.options.map { entry in
            guard let box = entry.box as? any ReflectableOptionBox else { return "\(type(of: entry.box))" }
            return Redaction.standard.display(text: box.summary)
        }
    }
}

/// An option's box, which can describe its value without knowing the option's type.
protocol ReflectableOptionBox {
    /// `Type: value`.
    var summary: String { get }
}

extension OptionBox: ReflectableOptionBox {
    var summary: String { "\(Value.self): \(String(describing: value))" }
}

extension Redaction {
    /// The most characters a mirror's excerpt of a body shows.
    static let excerptLimit = 1_000

    /// Up to ``excerptLimit`` characters of `body` with what this redaction hides replaced (a value the excerpt
    /// cuts off included), followed by `… (<n> bytes)` when cut.
    func excerpt(of body: Data, contentType: String?) -> String {
        // Redacted before it is cut, so that every name is seen whole next to its value.
        let scanned = body.prefix(4 * Self.excerptLimit)
        let redacted = display(body: String(decoding: scanned, as: UTF8.self), contentType: contentType)
        guard redacted.count > Self.excerptLimit || body.count > scanned.count else { return redacted }
        return String(redacted.prefix(Self.excerptLimit)) + "… (\(body.count) bytes)"
    }
}

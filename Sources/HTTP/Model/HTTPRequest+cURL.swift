import Foundation

extension HTTPRequest {
    /// A `curl` command line that sends this request, for reproducing it in a terminal or a bug report.
    ///
    /// Everything `redaction` hides is replaced by a placeholder — header fields, query items, and the fields of
    /// form, JSON and multipart bodies (a token request's `refresh_token`, `code`, …) — so the command is safe to
    /// paste into a ticket; pass ``Redaction/none`` for a command that really authenticates. The body is sent
    /// byte for byte (`--data-binary`), using `$'…'` quoting when it is not printable text.
    ///
    /// ```swift
    /// print(request.cURLCommand())
    /// // curl -X POST 'https://api.example.com/v1/people' \
    /// //   -H 'Authorization: Bearer <redacted>' \
    /// //   -H 'Content-Type: application/json; charset=utf-8' \
    /// //   --data-binary '{"name":"Zoë"}'
    /// ```
    ///
    /// A ``FileBody`` is referred to (`--data-binary @path`), not read; a ``StreamBody`` is not shown.
    public func cURLCommand(redaction: Redaction = .standard) -> String {
        var lines: [String] = []
        var encodedBody: Data?
        var bodyProblem: String?
        var bodyArgument: String?
        if let file = body as? FileBody {
            bodyArgument = "--data-binary " + Self.shellQuote("@" + file.url.path)
        } else if body is StreamBody {
            bodyProblem = "the body streams from an AsyncSequence and is not shown"
        } else {
            do { encodedBody = try self.encodedBody() } catch { bodyProblem = redaction.display(text: error.message) }
        }

        let url = Self.shellQuote(displayURL(redaction: redaction))
        switch method {
        case .get where encodedBody == nil && bodyArgument == nil: lines.append("curl \(url)")
        case .head: lines.append("curl --head \(url)")
        default: lines.append("curl -X \(Self.shellQuote(method.rawValue)) \(url)")
        }
        let headers = headersIncludingBody
        for field in headers {
            lines.append("-H " + Self.shellQuote("\(field.name): \(redaction.display(field.value, for: field.name))"))
        }
        if let encodedBody {
            // Redacted as what the body is, whatever Content-Type the request claims for it.
            let kind = body.additionalHeaders["Content-Type"] ?? headers["Content-Type"]
            let shown = redaction.redacting(body: Array(encodedBody), contentType: kind)
            lines.append("--data-binary " + Self.shellQuote(Data(shown)))
        }
        if let bodyArgument { lines.append(bodyArgument) }
        var command = lines.joined(separator: " \\\n  ")
        if let bodyProblem { command += "\n# \(bodyProblem)" }
        return command
    }

    /// Quotes text for a POSIX shell: `'…'`, or `$'…'` with escapes when it holds control characters.
    static func shellQuote(_ text: String) -> String {
        shellQuote(Data(text.utf8))
    }

    static func shellQuote(_ bytes: Data) -> String {
        let isPlain =
            String(data: bytes, encoding: .utf8) != nil
            && !bytes.contains { $0 < 0x20 && $0 != 0x0A && $0 != 0x09 || $0 == 0x7F }
        if isPlain {
            // Byte by byte: a quote followed by a combining mark is one Character, which a replacement over
            // Characters would not see, and the rest of the text would run as shell code.
            var quoted: [UInt8] = [UInt8(ascii: "'")]
            for byte in bytes {
                if byte == UInt8(ascii: "'") { quoted += Array("'\\''".utf8) } else { quoted.append(byte) }
            }
            quoted.append(UInt8(ascii: "'"))
            return String(decoding: quoted, as: UTF8.self)
        }
        var quoted = "$'"
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "'"): quoted += "\\'"
            case UInt8(ascii: "\\"): quoted += "\\\\"
            case 0x20...0x7E: quoted.unicodeScalars.append(Unicode.Scalar(byte))
            default: quoted += String(format: "\\x%02X", byte)
            }
        }
        return quoted + "'"
    }
}

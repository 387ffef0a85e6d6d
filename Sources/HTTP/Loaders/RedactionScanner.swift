/// Finds name/value pairs in bytes — JSON members, `name=value` parameters, `multipart/form-data` fields, the
/// user information of URLs — and writes the bytes again with the values a ``Redaction`` hides replaced by
/// `<redacted>`.
///
/// A scanner, not a parser: it reads any bytes without failing, keeps every byte it does not replace, and errs on
/// the side of hiding. Text may be cut off anywhere (a body excerpt): a value that runs to the end of the text —
/// an unterminated JSON string, an unbalanced object, the last form value — is hidden like a complete one.
/// Values that carry pairs of their own (JSON inside a JSON string, a URL with a query inside a query item) are
/// searched too, down to ``maximumDepth``; below that, such a value is hidden whole.
struct RedactionScanner {
    let redaction: Redaction
    /// The redacted bytes written so far.
    var output: [UInt8] = []

    init(redaction: Redaction) {
        self.redaction = redaction
    }

    static let maximumDepth = 8
    private static let placeholder = Array("<redacted>".utf8)
    private static let quotedPlaceholder = Array("\"<redacted>\"".utf8)
    private static let singleQuotedPlaceholder = Array("'<redacted>'".utf8)

    /// Whether a byte can begin something the text scanner acts on: a JSON string, `=`, or `:` (of a label or
    /// of `://`). Text without any of them is left as it is.
    static func mayStartPair(_ byte: UInt8) -> Bool {
        byte == Byte.quote || byte == Byte.equals || byte == Byte.colon
    }

    // MARK: - Bodies

    /// A body: form bodies as parameters, `multipart/form-data` part by part, anything else as text.
    mutating func scanBody(_ bytes: ArraySlice<UInt8>, contentType: String?) {
        let type = contentType.map { Array($0.utf8.drop { $0 == Byte.space }.map(Self.lowercased)) } ?? []
        if type.starts(with: "application/x-www-form-urlencoded".utf8) {
            scanParameters(bytes, depth: 0)
        } else if type.starts(with: "multipart/".utf8), let boundary = Self.boundary(inContentType: contentType ?? "") {
            scanMultipart(bytes, boundary: boundary)
        } else {
            scanText(bytes, depth: 0)
        }
    }

    // MARK: - URLs

    /// A URL as text: the password of its user information, `name=value` pairs in its path, its query and its
    /// fragment.
    mutating func scanURL(_ url: ArraySlice<UInt8>) {
        var index = url.startIndex
        // scheme "://" authority, where the scheme is letters, digits, "+", "-" and ".".
        if let separator = Self.firstIndex(of: Self.schemeSeparator, in: url, from: url.startIndex),
            url[url.startIndex..<separator].allSatisfy(Self.schemeBytes.contains)
        {
            let authorityStart = separator + 3
            let authorityEnd = url[authorityStart...].firstIndex(where: Self.authorityEnds.contains) ?? url.endIndex
            if let at = url[authorityStart..<authorityEnd].lastIndex(of: Byte.at) {
                output += url[url.startIndex..<authorityStart]
                writeUserInformation(url[authorityStart..<at])
                index = at
            }
        }
        let pathEnd = url[index...].firstIndex { $0 == Byte.questionMark || $0 == Byte.hash } ?? url.endIndex
        let path = url[index..<pathEnd]
        if path.contains(Byte.equals) { scanText(path, depth: 1) } else { output += path }
        guard pathEnd < url.endIndex else { return }
        var partStart = pathEnd
        if url[pathEnd] == Byte.questionMark {
            let queryEnd = url[(pathEnd + 1)...].firstIndex(of: Byte.hash) ?? url.endIndex
            output.append(Byte.questionMark)
            scanParameters(url[(pathEnd + 1)..<queryEnd], depth: 0)
            partStart = queryEnd
        }
        guard partStart < url.endIndex else { return }
        output.append(Byte.hash)
        scanParameters(url[(partStart + 1)...], depth: 0)
    }

    /// `user:<redacted>`, or `<redacted>` when the user information is a single token.
    private mutating func writeUserInformation(_ userInformation: ArraySlice<UInt8>) {
        guard !userInformation.isEmpty else { return }
        if let colon = userInformation.firstIndex(of: Byte.colon) {
            output += userInformation[userInformation.startIndex...colon]
            if colon + 1 < userInformation.endIndex { output += Self.placeholder }
        } else {
            output += Self.placeholder
        }
    }

    // MARK: - Parameters

    /// `name=value` pairs separated by `&`, as in a query or a form body. A hidden value runs to the next `&`;
    /// names are also looked for after `;`, which some servers accept as a separator.
    mutating func scanParameters(_ bytes: ArraySlice<UInt8>, depth: Int) {
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: Byte.ampersand) ?? bytes.endIndex
            scanPair(bytes[start..<end], depth: depth)
            guard end < bytes.endIndex else { return }
            output.append(Byte.ampersand)
            start = end + 1
        }
    }

    private mutating func scanPair(_ pair: ArraySlice<UInt8>, depth: Int) {
        guard let equals = pair.firstIndex(of: Byte.equals) else {
            // No value. A pair with quotes or colons in it is JSON or text sent as a form, perhaps.
            if pair.contains(where: Self.mayStartPair) { scanText(pair, depth: depth + 1) } else { output += pair }
            return
        }
        let name = pair[pair.startIndex..<equals]
        output += pair[pair.startIndex...equals]
        let value = pair[(equals + 1)...]
        let lastName = name.lastIndex(of: Byte.semicolon).map { name[($0 + 1)...] }
        if redaction.hides(rawName: name) || lastName.map({ redaction.hides(rawName: $0) }) == true {
            if !value.isEmpty { output += Self.placeholder }
        } else {
            writeParameterValue(value, depth: depth)
        }
    }

    /// A value that is not hidden itself, searched for pairs of its own: a URL with a query, JSON, `a;b=c`.
    private mutating func writeParameterValue(_ value: ArraySlice<UInt8>, depth: Int) {
        let isEncoded = value.contains { $0 == Byte.percent || $0 == Byte.plus }
        guard isEncoded || value.contains(where: Self.mayStartPair) else {
            output += value
            return
        }
        guard depth < Self.maximumDepth else {
            output += Self.placeholder
            return
        }
        let decoded = isEncoded ? Redaction.formDecoded(value) : Array(value)
        var inner = RedactionScanner(redaction: redaction)
        inner.scanText(decoded[...], depth: depth + 1)
        if inner.output == decoded {
            output += value
        } else if isEncoded {
            Self.percentEncode(inner.output, into: &output)
        } else {
            output += inner.output
        }
    }

    // MARK: - Text

    /// Any text: JSON members (`"name": value`), labelled values (`name: value`, `'name': 'value'`, as Swift and
    /// Python print values and HTTP writes header fields), `name=value` pairs, and URLs with user information
    /// (`scheme://user:password@`).
    mutating func scanText(_ text: ArraySlice<UInt8>, depth: Int) {
        var copied = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            switch text[index] {
            case Byte.quote:
                output += text[copied..<index]
                index = scanString(in: text, at: index, depth: depth)
                copied = index
            case Byte.equals:
                let name = Self.name(before: index, in: text)
                var valueStart = index + 1
                while valueStart < text.endIndex, Self.isBlank(text[valueStart]) { valueStart += 1 }
                if !name.isEmpty, redaction.hides(rawName: name) {
                    output += text[copied..<valueStart]
                    index = hideLabelledValue(in: text, at: valueStart, bareValueEnd: Self.textValueEnd)
                    copied = index
                    continue
                }
                let valueEnd = Self.textValueEnd(in: text, from: valueStart)
                let value = text[valueStart..<valueEnd]
                if value.contains(where: { $0 == Byte.percent || $0 == Byte.plus }) {
                    // Percent-encoded: what it encodes may hold pairs (`next=https%3A%2F%2F…%3Fcode%3D…`).
                    output += text[copied..<valueStart]
                    writeParameterValue(value, depth: depth)
                    index = valueEnd
                    copied = index
                } else {
                    index += 1
                }
            case Byte.colon:
                guard index + 2 < text.endIndex, text[index + 1] == Byte.slash, text[index + 2] == Byte.slash else {
                    // `label: value`, as Swift, Python and YAML write values and HTTP writes header fields.
                    if let label = Self.label(beforeColon: index, in: text), redaction.hides(rawName: label) {
                        var valueStart = index + 1
                        while valueStart < text.endIndex, Self.isBlank(text[valueStart]) { valueStart += 1 }
                        output += text[copied..<valueStart]
                        index = hideLabelledValue(in: text, at: valueStart, bareValueEnd: Self.labelledValueEnd)
                        copied = index
                    } else {
                        index += 1
                    }
                    continue
                }
                let authorityStart = index + 3
                let authorityEnd =
                    text[authorityStart...].firstIndex(where: Self.authorityInTextEnds.contains) ?? text.endIndex
                if let at = text[authorityStart..<authorityEnd].lastIndex(of: Byte.at) {
                    output += text[copied..<authorityStart]
                    writeUserInformation(text[authorityStart..<at])
                    copied = at
                    index = at + 1
                } else {
                    index = authorityStart
                }
            default:
                index += 1
            }
        }
        output += text[copied..<text.endIndex]
    }

    /// A JSON string at `quote`: a member's name, whose value is hidden when the name is, or a string value,
    /// searched for pairs of its own. Returns where scanning goes on.
    private mutating func scanString(in text: ArraySlice<UInt8>, at quote: Int, depth: Int) -> Int {
        let (end, isTerminated) = Self.stringEnd(in: text, at: quote)
        if isTerminated {
            var colon = end
            while colon < text.endIndex, Self.isWhitespace(text[colon]) { colon += 1 }
            if colon < text.endIndex, text[colon] == Byte.colon {
                var valueStart = colon + 1
                while valueStart < text.endIndex, Self.isWhitespace(text[valueStart]) { valueStart += 1 }
                output += text[quote..<valueStart]
                let name = Self.jsonUnescaped(text[(quote + 1)..<(end - 1)])
                guard redaction.hides(rawName: name) else { return valueStart }
                let valueEnd = Self.jsonValueEnd(in: text, at: valueStart)
                if valueEnd > valueStart { output += Self.quotedPlaceholder }
                return valueEnd
            }
        }
        writeStringValue(text[quote..<end], isTerminated: isTerminated, depth: depth)
        return end
    }

    /// A JSON string value (with its quotes), searched for pairs: JSON or a URL inside a string. When something
    /// in it is hidden, it is written again as a JSON string.
    private mutating func writeStringValue(_ string: ArraySlice<UInt8>, isTerminated: Bool, depth: Int) {
        let content = string.dropFirst().dropLast(isTerminated ? 1 : 0)
        guard content.contains(where: { $0 == Byte.backslash || Self.mayStartPair($0) }) else {
            output += string
            return
        }
        guard depth < Self.maximumDepth else {
            output += Self.quotedPlaceholder
            return
        }
        let decoded = Self.jsonUnescaped(content)
        var inner = RedactionScanner(redaction: redaction)
        inner.scanText(decoded[...], depth: depth + 1)
        if inner.output == decoded {
            output += string
            return
        }
        output.append(Byte.quote)
        Self.jsonEscape(inner.output, into: &output)
        if isTerminated { output.append(Byte.quote) }
    }

    // MARK: - Multipart

    /// A `multipart/form-data` body: a part named by a hidden name has its content replaced; other parts that
    /// are not files are searched as text. Bytes that do not look like parts are searched as text.
    mutating func scanMultipart(_ body: ArraySlice<UInt8>, boundary: [UInt8]) {
        let delimiter = Array("--".utf8) + boundary
        let crlf = Array("\r\n".utf8)
        guard var index = Self.firstIndex(of: delimiter, in: body, from: body.startIndex) else {
            scanText(body, depth: 0)
            return
        }
        scanText(body[body.startIndex..<index], depth: 1)
        while index < body.endIndex {
            guard let lineEnd = Self.firstIndex(of: crlf, in: body, from: index + delimiter.count) else {
                output += body[index...]
                return
            }
            let headersStart = lineEnd + 2
            output += body[index..<headersStart]
            guard let headersEnd = Self.firstIndex(of: crlf + crlf, in: body, from: headersStart) else {
                scanText(body[headersStart...], depth: 1)
                return
            }
            let contentStart = headersEnd + 4
            output += body[headersStart..<contentStart]
            let next = Self.firstIndex(of: crlf + delimiter, in: body, from: contentStart)
            let content = body[contentStart..<(next ?? body.endIndex)]
            let (name, isFile) = Self.partName(inHeaders: body[headersStart..<headersEnd])
            if let name, redaction.hides(rawName: name) {
                if !content.isEmpty { output += Self.placeholder }
            } else if isFile {
                output += content
            } else {
                scanText(content, depth: 1)
            }
            guard let next else { return }
            output += crlf
            index = next + 2
        }
    }

    /// The `name` parameter of a part's `Content-Disposition`, and whether it has a `filename`.
    private static func partName(inHeaders headers: ArraySlice<UInt8>) -> (name: ArraySlice<UInt8>?, isFile: Bool) {
        let lowered = headers.map(lowercased)
        let isFile = firstIndex(of: Array("filename".utf8), in: lowered[...], from: 0) != nil
        var from = 0
        while let found = firstIndex(of: Array("name=".utf8), in: lowered[...], from: from) {
            from = found + 1
            guard found > 0, lowered[found - 1] == Byte.semicolon || isBlank(lowered[found - 1]) else { continue }
            let valueStart = headers.startIndex + found + 5
            guard valueStart < headers.endIndex else { return (nil, isFile) }
            if headers[valueStart] == Byte.quote {
                let end = headers[(valueStart + 1)...].firstIndex(of: Byte.quote) ?? headers.endIndex
                return (headers[(valueStart + 1)..<end], isFile)
            }
            let end = headers[valueStart...].firstIndex { $0 == Byte.semicolon || isWhitespace($0) } ?? headers.endIndex
            return (headers[valueStart..<end], isFile)
        }
        return (nil, isFile)
    }

    /// The `boundary` parameter of a `multipart/…` content type.
    static func boundary(inContentType contentType: String) -> [UInt8]? {
        let bytes = Array(contentType.utf8)
        let lowered = bytes.map(lowercased)
        guard let found = firstIndex(of: Array("boundary=".utf8), in: lowered[...], from: 0) else { return nil }
        var value = bytes[(found + 9)...]
        if value.first == Byte.quote {
            value = value.dropFirst()
            value = value[..<(value.firstIndex(of: Byte.quote) ?? value.endIndex)]
        } else {
            value = value[..<(value.firstIndex { $0 == Byte.semicolon || isWhitespace($0) } ?? value.endIndex)]
        }
        return value.isEmpty ? nil : Array(value)
    }

    // MARK: - Lexical helpers

    /// Where the JSON string starting at `quote` ends (after its closing quote), and whether it is closed.
    private static func stringEnd(in text: ArraySlice<UInt8>, at quote: Int) -> (end: Int, isTerminated: Bool) {
        var index = quote + 1
        while index < text.endIndex {
            switch text[index] {
            case Byte.backslash: index += 2
            case Byte.quote: return (index + 1, true)
            default: index += 1
            }
        }
        return (text.endIndex, false)
    }

    /// Where a JSON value starting at `start` ends: a string, a whole object or array (to the end of the text
    /// when it is cut off), or anything else up to `,`, `}`, `]` or the end of the line.
    private static func jsonValueEnd(in text: ArraySlice<UInt8>, at start: Int) -> Int {
        guard start < text.endIndex else { return start }
        switch text[start] {
        case Byte.quote:
            return stringEnd(in: text, at: start).end
        case Byte.openBrace, Byte.openBracket:
            var level = 0
            var index = start
            while index < text.endIndex {
                switch text[index] {
                case Byte.quote:
                    index = stringEnd(in: text, at: index).end
                    continue
                case Byte.openBrace, Byte.openBracket:
                    level += 1
                case Byte.closeBrace, Byte.closeBracket:
                    level -= 1
                    if level == 0 { return index + 1 }
                default:
                    break
                }
                index += 1
            }
            return text.endIndex
        default:
            return text[start...].firstIndex {
                $0 == Byte.comma || $0 == Byte.closeBrace || $0 == Byte.closeBracket || $0 == Byte.lineFeed
                    || $0 == Byte.carriageReturn
            } ?? text.endIndex
        }
    }

    /// Where an unquoted `name=value` value starting at `start` ends, in free text.
    private static func textValueEnd(in text: ArraySlice<UInt8>, from start: Int) -> Int {
        text[start...].firstIndex(where: textValueEnds.contains) ?? text.endIndex
    }

    /// The name before the `=` at `equals` in free text (blanks around `=` allowed), possibly empty.
    private static func name(before equals: Int, in text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var end = equals
        while end > text.startIndex, isBlank(text[end - 1]) { end -= 1 }
        var start = end
        while start > text.startIndex, !isNameStop(text[start - 1]) { start -= 1 }
        return text[start..<end]
    }

    /// The label before the `:` at `colon` in free text — bare (`password:`) or in single quotes
    /// (`'password':`, as Python prints a dictionary) — if there is one. (A label in double quotes is a JSON
    /// member's name, which ``scanString(in:at:depth:)`` handles with its colon.)
    private static func label(beforeColon colon: Int, in text: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var end = colon
        while end > text.startIndex, isBlank(text[end - 1]) { end -= 1 }
        guard end > text.startIndex else { return nil }
        if text[end - 1] == Byte.apostrophe {
            let closing = end - 1
            guard let opening = text[text.startIndex..<closing].lastIndex(of: Byte.apostrophe),
                opening + 1 < closing
            else { return nil }
            return text[(opening + 1)..<closing]
        }
        var start = end
        while start > text.startIndex, !isNameStop(text[start - 1]) { start -= 1 }
        return start < end ? text[start..<end] : nil
    }

    /// Writes a placeholder for the value of a hidden `name=` or `label:` starting at `start` and returns where
    /// it ends: a string in double or single quotes (to the end of the text when it is not closed), an object or
    /// array, or a bare value ending where `bareValueEnd` says.
    private mutating func hideLabelledValue(
        in text: ArraySlice<UInt8>, at start: Int, bareValueEnd: (ArraySlice<UInt8>, Int) -> Int
    ) -> Int {
        guard start < text.endIndex else { return start }
        let end: Int
        switch text[start] {
        case Byte.quote:
            output += Self.quotedPlaceholder
            return Self.stringEnd(in: text, at: start).end
        case Byte.apostrophe:
            output += Self.singleQuotedPlaceholder
            return text[(start + 1)...].firstIndex(of: Byte.apostrophe).map { $0 + 1 } ?? text.endIndex
        case Byte.openBrace, Byte.openBracket:
            end = Self.jsonValueEnd(in: text, at: start)
        default:
            end = bareValueEnd(text, start)
        }
        if end > start { output += Self.placeholder }
        return end
    }

    /// Where a bare value after `label:` ends: at `,`, `)`, `}`, `]` or the end of the line, so that a header
    /// field's whole value (`Authorization: Bearer …`, `Cookie: a=1; b=2`) is hidden.
    private static func labelledValueEnd(in text: ArraySlice<UInt8>, from start: Int) -> Int {
        text[start...].firstIndex(where: labelledValueEnds.contains) ?? text.endIndex
    }

    private static let schemeSeparator = Array("://".utf8)
    /// The bytes of a URL scheme.
    private static let schemeBytes = PercentEncoding.AllowedBytes(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
    /// The bytes that end a URL's authority.
    private static let authorityEnds = PercentEncoding.AllowedBytes("/?#")
    /// The bytes that end the authority of a URL quoted in free text.
    private static let authorityInTextEnds = PercentEncoding.AllowedBytes("/?#\"'<>\\ \t\r\n")
    /// The bytes that end a bare value after `label:` in free text.
    private static let labelledValueEnds = PercentEncoding.AllowedBytes(",)}]\r\n")
    /// The bytes that end an unquoted `name=value` value in free text.
    private static let textValueEnds = PercentEncoding.AllowedBytes("&;#\"'<>, \t\r\n")
    /// The bytes that end a name in free text.
    private static let nameStops = PercentEncoding.AllowedBytes("&;?#/,\"'{}()<>|=:\\ \t\r\n")

    private static func isNameStop(_ byte: UInt8) -> Bool { nameStops.contains(byte) }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == Byte.space || byte == Byte.tab }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        isBlank(byte) || byte == Byte.lineFeed || byte == Byte.carriageReturn
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }

    /// The first occurrence of `needle` in `haystack` at or after `from`.
    private static func firstIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>, from: Int) -> Int? {
        guard let first = needle.first, from <= haystack.endIndex else { return nil }
        var index = from
        while index + needle.count <= haystack.endIndex {
            if haystack[index] == first, haystack[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    // MARK: - Decoding and encoding

    /// The bytes a JSON string's content stands for. Malformed or cut-off escapes are kept as they are.
    static func jsonUnescaped(_ content: ArraySlice<UInt8>) -> [UInt8] {
        guard content.contains(Byte.backslash) else { return Array(content) }
        var result: [UInt8] = []
        result.reserveCapacity(content.count)
        var index = content.startIndex
        while index < content.endIndex {
            let byte = content[index]
            guard byte == Byte.backslash, index + 1 < content.endIndex else {
                result.append(byte)
                index += 1
                continue
            }
            let escaped = content[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "n"): result.append(Byte.lineFeed)
            case UInt8(ascii: "r"): result.append(Byte.carriageReturn)
            case UInt8(ascii: "t"): result.append(Byte.tab)
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(content, at: index) else {
                    result += content[(index - 2)..<index]
                    continue
                }
                index += 4
                if (0xD800..<0xDC00).contains(scalar), index + 1 < content.endIndex,
                    content[index] == Byte.backslash, content[index + 1] == UInt8(ascii: "u"),
                    let low = hex4(content, at: index + 2), (0xDC00..<0xE000).contains(low)
                {
                    scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    index += 6
                }
                result += Array(String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8)
            default: result.append(escaped)
            }
        }
        return result
    }

    private static func hex4(_ bytes: ArraySlice<UInt8>, at start: Int) -> UInt32? {
        guard start + 4 <= bytes.endIndex else { return nil }
        var value: UInt32 = 0
        for byte in bytes[start..<start + 4] {
            guard let digit = Redaction.hexValue(byte) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Writes `bytes` as the content of a JSON string.
    private static func jsonEscape(_ bytes: [UInt8], into output: inout [UInt8]) {
        for byte in bytes {
            switch byte {
            case Byte.quote: output += [Byte.backslash, Byte.quote]
            case Byte.backslash: output += [Byte.backslash, Byte.backslash]
            case Byte.lineFeed: output += [Byte.backslash, UInt8(ascii: "n")]
            case Byte.carriageReturn: output += [Byte.backslash, UInt8(ascii: "r")]
            case Byte.tab: output += [Byte.backslash, UInt8(ascii: "t")]
            case 0..<0x20: output += Array("\\u00".utf8) + [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            default: output.append(byte)
            }
        }
    }

    /// The bytes a redacted, decoded value may keep when it is encoded again: what a query allows, except the
    /// separators `&`, `=`, `;`, `#` and `+`, and with `<` and `>` so that `<redacted>` stays legible.
    private static let reencodingAllowed = PercentEncoding.AllowedBytes(PercentEncoding.unreserved + "!$'()*,/:?@[]<>")

    private static func percentEncode(_ bytes: [UInt8], into output: inout [UInt8]) {
        for byte in bytes {
            if reencodingAllowed.contains(byte) {
                output.append(byte)
            } else {
                output += [Byte.percent, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}

/// The ASCII bytes the scanner looks for.
private enum Byte {
    static let tab = UInt8(ascii: "\t")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let quote = UInt8(ascii: "\"")
    static let apostrophe = UInt8(ascii: "'")
    static let hash = UInt8(ascii: "#")
    static let percent = UInt8(ascii: "%")
    static let ampersand = UInt8(ascii: "&")
    static let plus = UInt8(ascii: "+")
    static let comma = UInt8(ascii: ",")
    static let slash = UInt8(ascii: "/")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let equals = UInt8(ascii: "=")
    static let questionMark = UInt8(ascii: "?")
    static let at = UInt8(ascii: "@")
    static let openBracket = UInt8(ascii: "[")
    static let backslash = UInt8(ascii: "\\")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
}

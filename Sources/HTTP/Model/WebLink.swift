/// One link of a `Link` header field (RFC 8288 §3): a target, its relation types and its other parameters.
///
/// ```swift
/// // Link: <https://api.example.com/items?page=3>; rel="next", <https://api.example.com/items?page=9>; rel="last"
/// let next = response.links.first { $0.relations.contains("next") }?.target
/// ```
public struct WebLink: Sendable, Hashable {
    /// The target, a URI reference as written between `<` and `>`; resolve it against the response's URL.
    public var target: String
    /// The relation types of `rel`, lowercased (`rel="next last"` is two); empty when there is none.
    public var relations: [String]
    /// The other parameters, their names lowercased; for a parameter given twice, the first value.
    public var parameters: [String: String]

    public init(target: String, relations: [String], parameters: [String: String] = [:]) {
        self.target = target
        self.relations = relations
        self.parameters = parameters
    }

    /// The links of one `Link` field value. A link-value that is not `<…>` with parameters is skipped; the rest are
    /// read. Nothing a server sends traps.
    public static func parse(_ fieldValue: String) -> [WebLink] {
        var scanner = Scanner(Array(fieldValue.unicodeScalars))
        var links: [WebLink] = []
        while !scanner.isAtEnd {
            scanner.skip { $0 == " " || $0 == "\t" || $0 == "," }
            guard !scanner.isAtEnd else { break }
            guard scanner.peek == "<" else {
                scanner.skipLinkValue()
                continue
            }
            scanner.advance()
            let target = scanner.take { $0 != ">" }
            guard scanner.peek == ">" else { break }  // unterminated: nothing more to read
            scanner.advance()
            var relations: [String]?
            var parameters: [String: String] = [:]
            while true {
                scanner.skip { $0 == " " || $0 == "\t" }
                guard scanner.peek == ";" else { break }
                scanner.advance()
                scanner.skip { $0 == " " || $0 == "\t" }
                let name = scanner.take { !["=", ";", ",", " ", "\t"].contains($0) }.lowercased()
                scanner.skip { $0 == " " || $0 == "\t" }
                var value = ""
                if scanner.peek == "=" {
                    scanner.advance()
                    scanner.skip { $0 == " " || $0 == "\t" }
                    value =
                        scanner.peek == "\""
                        ? scanner.takeQuotedString() : scanner.take { ![";", ",", " ", "\t"].contains($0) }
                }
                guard !name.isEmpty else { continue }
                if name == "rel" {
                    // RFC 8288 §3.3: a second rel is ignored.
                    if relations == nil {
                        relations = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.lowercased() }
                    }
                } else if parameters[name] == nil {
                    parameters[name] = value
                }
            }
            // Whatever follows up to the next link-value is not a parameter: skipped.
            if scanner.peek != "," { scanner.skipLinkValue() }
            links.append(WebLink(target: target, relations: relations ?? [], parameters: parameters))
        }
        return links
    }

    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var isAtEnd: Bool { index >= scalars.count }
        var peek: Unicode.Scalar? { isAtEnd ? nil : scalars[index] }
        mutating func advance() { index += 1 }

        mutating func skip(while predicate: (Unicode.Scalar) -> Bool) {
            while let scalar = peek, predicate(scalar) { index += 1 }
        }

        mutating func take(while predicate: (Unicode.Scalar) -> Bool) -> String {
            var text = String.UnicodeScalarView()
            while let scalar = peek, predicate(scalar) {
                text.append(scalar)
                index += 1
            }
            return String(text)
        }

        /// A quoted-string's content, its escapes undone; the opening quote is at `index`.
        mutating func takeQuotedString() -> String {
            advance()
            var text = String.UnicodeScalarView()
            while let scalar = peek, scalar != "\"" {
                if scalar == "\\", index + 1 < scalars.count { advance() }
                if let escaped = peek { text.append(escaped) }
                advance()
            }
            if peek == "\"" { advance() }
            return String(text)
        }

        /// Skips to the comma that ends this link-value (outside quotes and `<…>`), or the end.
        mutating func skipLinkValue() {
            var inQuotes = false
            var inTarget = false
            while let scalar = peek {
                switch scalar {
                case "\"" where !inTarget: inQuotes.toggle()
                case "\\" where inQuotes: advance()
                case "<" where !inQuotes: inTarget = true
                case ">" where !inQuotes: inTarget = false
                case "," where !inQuotes && !inTarget: return
                default: break
                }
                advance()
            }
        }
    }
}

extension HTTPResponse {
    /// The links of the response's `Link` fields, in order (RFC 8288).
    public var links: [WebLink] {
        headers.values(for: "Link").flatMap(WebLink.parse)
    }
}

extension HTTPRequest {
    /// This request sent to the target of `response`'s first link with `relation` (`"next"`, `"prev"`, …), or `nil`
    /// when there is none or its target cannot be sent (not `http` or `https`, no host, user information, a malformed
    /// escape): for following pages (RFC 8288 `rel="next"`), each a load of its own through the chain.
    ///
    /// The target is resolved against the URL that answered (RFC 3986 §5). The new request is a `GET` without a body,
    /// with this request's header fields and options — the authentication method, the retry strategy — except the
    /// credentials this request carried in its own header fields when the link leads to another origin.
    public func following(link relation: String, in response: HTTPResponse) -> HTTPRequest? {
        let relation = relation.lowercased()
        guard let link = response.links.first(where: { $0.relations.contains(relation) }) else { return nil }
        let base = RedirectRules.base(of: response)
        guard case .success(let target) = Target.resolving(link.target, against: base) else { return nil }
        var next = self
        next.method = .get
        if !(next.body is EmptyBody) { next.body = EmptyBody() }
        for name in RedirectRules.bodyFields where next.headers.contains(name) { next.headers.remove(name) }
        next.setOrigin(scheme: target.scheme, host: target.host, port: target.port)
        next.percentEncodedPath = target.path
        next.percentEncodedQuery = target.query
        next.fragment = target.fragment
        return RedirectRules.withoutCarriedCredentials(next, from: self, answeredBy: base, secrets: .standard)
    }
}

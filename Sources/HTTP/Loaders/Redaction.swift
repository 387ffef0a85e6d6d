public import Foundation

/// Which values are hidden when requests, responses and errors are turned into text: log lines, cURL commands,
/// error descriptions and body excerpts.
///
/// A redaction is one set of names. Wherever a name/value pair appears — a header field, a query item, a URL
/// fragment parameter, a form field, a JSON member at any depth, a `multipart/form-data` field — a value whose
/// name is hidden is replaced by `<redacted>`; so is the password in a URL's user information. The same OAuth
/// parameter (`code`, `refresh_token`, …) travels in a query, a form body and a JSON body, so one set serves all
/// of them.
///
/// Names match loosely, because hiding too much is the safe side: ASCII case and every character other than
/// letters and digits are ignored (`access_token`, `accessToken` and `Access-Token` are one name), and a name
/// also matches when it contains one of ``nameFragments`` (`token` hides `X-Vault-Token` and `session_token`).
///
/// ``standard`` hides the credentials of HTTP and of OAuth 2 / OpenID Connect (`Authorization`, `Cookie`,
/// `access_token`, `code`, `client_secret`, `password`, …) and every name containing `token`, `secret`,
/// `password`, `apikey`, … Add the names your API uses for secrets:
///
/// ```swift
/// let logger = PrintLoader(redaction: .standard.adding("X-Session", "pin"))
/// ```
///
/// Text is scanned, not parsed, so it may be cut off anywhere: a body excerpt ending inside a secret value still
/// hides it.
public struct Redaction: Sendable, Hashable {
    /// The hidden names, lowercased.
    public private(set) var names: Set<String>
    /// Parts of names, lowercased: a name that contains one of them, ignoring case and characters other than
    /// letters and digits, is hidden too.
    public private(set) var nameFragments: Set<String>

    /// ``names``, normalized for matching (see `normalize(_:)`).
    private var matchNames: Set<[UInt8]>
    /// ``nameFragments``, normalized, without empty ones, sorted so that equal redactions compare equal.
    private var matchFragments: [[UInt8]]

    /// Creates a redaction that hides the values of the named fields.
    ///
    /// - Parameters:
    ///   - names: Names whose values are hidden, in header fields, query items, form fields and JSON members.
    ///   - fragments: Parts of names: any name containing one of them is hidden too. Empty ones are ignored.
    public init(
        names: some Sequence<String> = [String](), namesContaining fragments: some Sequence<String> = [String]()
    ) {
        self.names = Set(names.map { $0.lowercased() })
        self.nameFragments = Set(fragments.map { $0.lowercased() })
        matchNames = []
        matchFragments = []
        rebuildMatchers()
    }

    /// Creates a redaction that hides the named header fields and body fields: all of them are ``names``, as one
    /// set serves header fields, query items and body fields alike.
    public init(headerNames: some Sequence<String>, bodyFieldNames: some Sequence<String> = [String]()) {
        self.init(names: Array(headerNames) + Array(bodyFieldNames))
    }

    private mutating func rebuildMatchers() {
        matchNames = Set(names.map { Self.normalize(Array($0.utf8)) })
        matchFragments = Set(nameFragments.map { Self.normalize(Array($0.utf8)) }).filter { !$0.isEmpty }
            .sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Hides the credentials of HTTP and of OAuth 2 / OpenID Connect, and the names that API keys, passwords,
    /// signatures and session identifiers usually go by — and leaves alone the names that only look like them.
    ///
    /// Names: `Authorization` (its scheme stays visible: `Bearer <redacted>`), `Proxy-Authorization`, `Cookie`,
    /// `Set-Cookie`; OAuth's `access_token`, `refresh_token`, `id_token`, `token`, `code`, `code_verifier`,
    /// `client_secret`, `client_assertion`, `assertion`, `password`, `id_token_hint`, `device_code`,
    /// `user_code`, `subject_token`, `actor_token`, `logout_token`; `api_key`, `key` (Google's API key
    /// parameter), `auth` (Firebase's REST API), `sig` (Azure's shared access signature), `credential`,
    /// `credentials`, `X-Amz-Credential`, `access_key`, `otp`, `pwd`, `pass`, `passphrase`, `session`, `sid`,
    /// `phpsessid`. Fragments: `token`, `secret`, `password`, `passwd`, `apikey`, `privatekey`, `signature`,
    /// `sessionid`.
    ///
    /// Short names are names, not fragments, so that the words that contain them stay visible: `key` hides `key`,
    /// `api_key` and `X-API-Key` (through the fragment `apikey`) but not `keyboard`, `monkey` or `Idempotency-Key`;
    /// `code` and `sig` hide only themselves (`codec` and `signed` stay visible); `session` hides `session` and,
    /// through `sessionid`, `JSESSIONID`, but not `session_state`. `credential` is a name too:
    /// `Access-Control-Allow-Credentials` and other CORS fields are not secrets, and stay visible. The long
    /// fragments are matched anywhere in a name, which hides a few names that are not secrets (`tokenizer`): hiding
    /// too much is the safe side.
    public static let standard = Redaction(
        names: [
            "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
            "access_token", "refresh_token", "id_token", "token", "code", "code_verifier", "client_secret",
            "client_assertion", "assertion", "password", "id_token_hint", "device_code", "user_code",
            "subject_token", "actor_token", "logout_token",
            "api_key", "key", "auth", "sig", "credential", "credentials", "x-amz-credential", "access_key", "otp",
            "pwd", "pass", "passphrase", "session", "sid", "phpsessid",
        ],
        namesContaining: [
            "token", "secret", "password", "passwd", "apikey", "privatekey", "signature", "sessionid",
        ]
    )

    /// Hides nothing: output shows every value, so a cURL command made with it really authenticates. Use it only
    /// where the output stays private.
    public static let none = Redaction()

    /// Whether this redaction hides nothing at all.
    var hidesNothing: Bool { matchNames.isEmpty && matchFragments.isEmpty }

    /// This redaction, also hiding values with these names: header fields, query items, form fields and JSON
    /// members.
    ///
    /// ```swift
    /// let redaction = Redaction.standard.adding("X-Session", "pin")
    /// ```
    public func adding(_ names: String...) -> Redaction {
        var copy = self
        copy.names.formUnion(names.map { $0.lowercased() })
        copy.rebuildMatchers()
        return copy
    }

    /// This redaction, also hiding every name that contains one of these fragments (ignoring case and
    /// characters other than letters and digits).
    ///
    /// ```swift
    /// let redaction = Redaction.standard.adding(namesContaining: "pin", "ssn")
    /// ```
    public func adding(namesContaining fragments: String...) -> Redaction {
        var copy = self
        copy.nameFragments.formUnion(fragments.map { $0.lowercased() })
        copy.rebuildMatchers()
        return copy
    }

    /// The names of hidden header fields: the same as ``names``.
    public var headerNames: Set<String> { names }

    /// The names of hidden body fields: the same as ``names``.
    public var bodyFieldNames: Set<String> { names }

    /// This redaction, also hiding the named fields: the same as ``adding(_:)``.
    public func addingBodyFields(_ names: String...) -> Redaction {
        var copy = self
        copy.names.formUnion(names.map { $0.lowercased() })
        copy.rebuildMatchers()
        return copy
    }

    /// Whether values named `name` are hidden: header fields, query items, form fields or JSON members.
    public func hides(_ name: String) -> Bool {
        hides(normalized: Self.normalize(Array(name.utf8)))
    }

    /// Whether values with this name, given as bytes as it appears in text (percent-encoded or not), are hidden.
    ///
    /// `normalize` decodes escapes once, as a configured name is read. A name percent-encoded in a query or form is
    /// one level further from the name it stands for (`%2525` for `%25`), so it is also matched decoded: what
    /// either reading hides is hidden.
    func hides(rawName name: some Collection<UInt8>) -> Bool {
        guard !hidesNothing else { return false }
        if hides(normalized: Self.normalize(name)) { return true }
        guard name.contains(UInt8(ascii: "%")) else { return false }
        return hides(normalized: Self.normalize(Self.formDecoded(Array(name)[...])))
    }

    /// Form decoding: `+` is a space, `%XX` a byte; a malformed escape is kept as it is.
    static func formDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                result.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                result.append(high << 4 | low)
                index += 3
                continue
            } else {
                result.append(byte)
            }
            index += 1
        }
        return result
    }

    func hides(normalized name: [UInt8]) -> Bool {
        if matchNames.contains(name) { return true }
        for fragment in matchFragments where Self.contains(name, fragment) {
            return true
        }
        return false
    }

    /// A header field's value, or a placeholder when field `name` is hidden.
    ///
    /// For `Authorization` and `Proxy-Authorization` the scheme stays visible (`Bearer <redacted>`) since it
    /// tells which credential was used without revealing it. A value that is not hidden is still searched for
    /// hidden parameters, as in a `Location` or `Link` field carrying a URL with a `code` in its query.
    public func display(_ value: String, for name: String) -> String {
        guard !hidesNothing else { return value }
        guard hides(name) else { return display(text: value) }
        if let space = value.firstIndex(of: " "),
            HTTPHeaders.namesMatch(name, "Authorization")
                || HTTPHeaders.namesMatch(name, "Proxy-Authorization")
        {
            return value[..<space] + " <redacted>"
        }
        return "<redacted>"
    }

    /// A URL (or any text meant as one, even one that does not parse) with hidden values replaced: query items,
    /// fragment parameters (where the implicit grant puts an `access_token`) and the password of its user
    /// information (`https://user:<redacted>@host/`, or `https://<redacted>@host/` for a token alone).
    public func display(url: String) -> String {
        // Without `?`, `#`, `@` or `=` there is nothing to hide: most URLs are returned as they are.
        guard !hidesNothing, url.utf8.contains(where: { $0 == 0x3F || $0 == 0x23 || $0 == 0x40 || $0 == 0x3D })
        else { return url }
        var scanner = RedactionScanner(redaction: self)
        scanner.scanURL(Array(url.utf8)[...])
        return String(decoding: scanner.output, as: UTF8.self)
    }

    /// A form body (`name=value&…`) with the values of hidden fields replaced by a placeholder.
    public func display(formBody body: String) -> String {
        display(body: body, contentType: "application/x-www-form-urlencoded")
    }

    /// A body as text, with hidden values replaced.
    ///
    /// A form body is read as `name=value` pairs, a `multipart/form-data` body part by part, and anything else
    /// — JSON, text, a body of unknown type — is searched for JSON members (at any depth, also inside string
    /// values that hold JSON or URLs), `name=value` pairs, labelled values (`name: value`, `'name': 'value'`,
    /// as Swift, Python, YAML and HTTP header fields write them) and URLs with user information.
    ///
    /// - Parameters:
    ///   - body: The body, or the part of it that will be shown; it may end anywhere.
    ///   - contentType: The body's `Content-Type`, if known.
    public func display(body: String, contentType: String? = nil) -> String {
        guard !hidesNothing else { return body }
        return String(decoding: redacting(body: Array(body.utf8), contentType: contentType), as: UTF8.self)
    }

    /// A body's bytes with hidden values replaced, as the text form of `display(body:contentType:)` does; bytes
    /// that are not text stay as they are.
    public func display(body: Data, contentType: String? = nil) -> Data {
        guard !hidesNothing else { return body }
        return Data(redacting(body: Array(body), contentType: contentType))
    }

    /// Free text — a message, an error's description — with hidden values replaced, as for a body of unknown type.
    func display(text: String) -> String {
        guard !hidesNothing, text.utf8.contains(where: RedactionScanner.mayStartPair) else { return text }
        var scanner = RedactionScanner(redaction: self)
        scanner.scanText(Array(text.utf8)[...], depth: 0)
        return String(decoding: scanner.output, as: UTF8.self)
    }

    /// Body bytes with hidden values replaced; bytes that are not UTF-8 stay as they are.
    func redacting(body: [UInt8], contentType: String?) -> [UInt8] {
        guard !hidesNothing else { return body }
        var scanner = RedactionScanner(redaction: self)
        scanner.scanBody(body[...], contentType: contentType)
        return scanner.output
    }

    /// `name` as matched: percent-escapes decoded, ASCII letters lowercased, other ASCII characters dropped
    /// (`Access-Token`, `access_token` and `access%5Ftoken` all become `accesstoken`); non-ASCII bytes are kept.
    static func normalize(_ name: some Collection<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(name.count)
        var index = name.startIndex
        while index != name.endIndex {
            var byte = name[index]
            name.formIndex(after: &index)
            if byte == UInt8(ascii: "%"), index != name.endIndex, let high = hexValue(name[index]) {
                let next = name.index(after: index)
                if next != name.endIndex, let low = hexValue(name[next]) {
                    byte = high << 4 | low
                    index = name.index(after: next)
                }
            }
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): result.append(byte | 0x20)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), 0x80...:
                result.append(byte)
            default: break
            }
        }
        return result
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether `haystack` contains `needle` (non-empty).
    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        let first = needle[0]
        var start = 0
        while start + needle.count <= haystack.count {
            if haystack[start] == first, haystack[start..<start + needle.count].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }
}

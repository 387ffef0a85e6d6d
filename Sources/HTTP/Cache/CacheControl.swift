/// The directives of `Cache-Control` header fields (RFC 9111 §5.2), request and response directives alike, with
/// RFC 5861's `stale-while-revalidate` and `stale-if-error`.
///
/// Parsing never fails and never traps, and reads exactly the grammar: `#cache-directive` (RFC 9110 §5.6.1: elements
/// separated by `OWS "," OWS`, empty ones allowed), each `token [ "=" ( token / quoted-string ) ]` (RFC 9111 §5.2),
/// names compared without case, every field line read (`HTTPHeaders.values(for:)`); unknown directives are ignored.
/// A numeric argument (`max-age`, `s-maxage`, `max-stale`, `min-fresh`, `stale-while-revalidate`, `stale-if-error`)
/// is delta-seconds, `1*DIGIT`, as a token or inside a quoted-string (§5.2: recipients accept both forms); beyond
/// 2³¹ it is read as 2³¹ (§1.2.2). Any other spelling — a sign, a fraction, an exponent, other scripts' digits,
/// single quotes, whitespace around `=`, text after the value — is not read: the directive is ignored, and a
/// `max-age` so spelled makes the response stale at once (``hasInvalidMaxAge``; §4.2.1 encourages it). Following
/// §4.2.1, the first occurrence of a repeated directive wins (the field lists of `no-cache="…"` and `private="…"`
/// add up, and an unqualified one wins over a list).
struct CacheControl: Sendable, Hashable {
    /// `max-age`: the freshness lifetime (response) or the oldest response the client accepts (request).
    var maxAge: Int64?
    /// A `max-age` was present but its value was not delta-seconds.
    var hasInvalidMaxAge = false
    /// `s-maxage`: the freshness lifetime for shared caches; this private cache reads it only for RFC 9111 §3.5.
    var sharedMaxAge: Int64?
    /// `no-cache` without a field-name list (or with one that could not be read, the conservative reading): a stored
    /// response must be revalidated before every use (§5.2.2.4).
    var noCache = false
    /// The fields a qualified `no-cache="a, b"` lists, lowercased: a stored response may be used without
    /// revalidation only without them (§5.2.2.4). Empty when there is none, and irrelevant once ``noCache`` is set.
    var noCacheFields: Set<String> = []
    /// `no-store`.
    var noStore = false
    /// `must-revalidate`.
    var mustRevalidate = false
    /// `public`.
    var isPublic = false
    /// `must-understand` (§5.2.2.3): the response may be stored only by a cache that understands its status, and
    /// such a cache ignores its `no-store`.
    var mustUnderstand = false
    /// `private`, qualified or not: a private cache may store the response.
    var isPrivate = false
    /// The fields a qualified `private="a, b"` lists, lowercased: a shared cache may store the response, but not
    /// them (§5.2.2.7). Empty when `private` is absent or unqualified (or its list could not be read).
    var privateFields: Set<String> = []
    /// Whether `private` appeared without a field-name list (or with one that could not be read): a shared cache
    /// must not store the response at all.
    var isPrivateUnqualified = false
    /// `stale-while-revalidate`: seconds after it becomes stale during which a response may be served while it
    /// is revalidated in the background.
    var staleWhileRevalidate: Int64?
    /// `stale-if-error`: seconds after it becomes stale during which a response may be served when revalidating
    /// it fails.
    var staleIfError: Int64?
    /// `max-stale` (request): how stale a response the client accepts; ``MaxStale/any`` without a value.
    var maxStale: MaxStale?
    /// `min-fresh` (request): how long the response must stay fresh.
    var minFresh: Int64?
    /// `only-if-cached` (request).
    var onlyIfCached = false

    /// The value of `max-stale`.
    enum MaxStale: Sendable, Hashable {
        case any
        case seconds(Int64)

        /// Whether a response `staleness` seconds past its lifetime is acceptable.
        func allows(_ staleness: Double) -> Bool {
            switch self {
            case .any: true
            case .seconds(let limit): staleness <= Double(limit)
            }
        }
    }

    /// The greatest delta-seconds value kept; larger ones are read as this (RFC 9111 §1.2.2).
    static let maximumDeltaSeconds: Int64 = 2_147_483_648

    /// No directives.
    init() {}

    /// The directives of every `Cache-Control` field in `headers`.
    init(_ headers: HTTPHeaders) {
        self.init()
        for value in headers.values(for: "Cache-Control") { read(value) }
    }

    /// The directives of one field value.
    init(parsing value: String) {
        self.init()
        read(value)
    }

    private mutating func read(_ value: String) {
        let bytes = Array(value.utf8)
        var position = 0
        while position < bytes.count {
            let (name, argument, next) = Self.directive(in: bytes, from: position)
            position = next
            apply(name, argument)
        }
    }

    /// A directive's argument as RFC 9111 §5.2 spells it: `token [ "=" ( token / quoted-string ) ]`.
    enum Argument: Equatable {
        /// No `=`.
        case absent
        /// A token, or the content of a quoted-string with its quoted-pairs unescaped.
        case value([UInt8])
        /// Anything else: whitespace around `=`, nothing after it, an unterminated or invalid quoted-string, text
        /// after the value. A numeric directive spelled so is ignored (a `max-age` makes the response stale).
        case malformed

        /// The argument as delta-seconds, `nil` unless it is one.
        var deltaSeconds: Int64? {
            guard case .value(let bytes) = self else { return nil }
            return CacheControl.deltaSeconds(bytes)
        }

        /// The argument's field-name list, `nil` unless it is one.
        var fieldNames: Set<String>? {
            guard case .value(let bytes) = self else { return nil }
            return CacheControl.fieldNames(bytes)
        }
    }

    /// Records one directive; a repeated one keeps its first value, and a numeric one whose argument is not
    /// delta-seconds is ignored (`max-age`: the response is stale, §4.2.1).
    private mutating func apply(_ name: [UInt8], _ argument: Argument) {
        switch String(decoding: name, as: UTF8.self) {
        case "max-age":
            guard maxAge == nil, !hasInvalidMaxAge else { return }
            if let seconds = argument.deltaSeconds { maxAge = seconds } else { hasInvalidMaxAge = true }
        case "s-maxage":
            if sharedMaxAge == nil { sharedMaxAge = argument.deltaSeconds }
        case "no-cache":
            if let fields = argument.fieldNames {
                noCacheFields.formUnion(fields)
            } else {
                noCache = true
            }
        case "no-store": noStore = true
        case "must-revalidate": mustRevalidate = true
        case "public": isPublic = true
        case "must-understand": mustUnderstand = true
        case "private":
            isPrivate = true
            if let fields = argument.fieldNames {
                privateFields.formUnion(fields)
            } else {
                isPrivateUnqualified = true
            }
        case "stale-while-revalidate":
            if staleWhileRevalidate == nil { staleWhileRevalidate = argument.deltaSeconds }
        case "stale-if-error":
            if staleIfError == nil { staleIfError = argument.deltaSeconds }
        case "max-stale":
            guard maxStale == nil else { return }
            if argument == .absent {
                maxStale = .any
            } else {
                maxStale = argument.deltaSeconds.map { .seconds($0) }
            }
        case "min-fresh":
            if minFresh == nil { minFresh = argument.deltaSeconds }
        case "only-if-cached": onlyIfCached = true
        default: break
        }
    }

    /// The list element starting at `start` (RFC 9110 §5.6.1: elements separated by `OWS "," OWS`, empty ones
    /// allowed): its name, lowercased (empty when it does not start with a token), its argument, and where the
    /// next element starts. A comma inside a quoted-string does not end an element.
    static func directive(in bytes: [UInt8], from start: Int) -> (name: [UInt8], argument: Argument, next: Int) {
        var index = start
        func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }
        skipWhitespace()
        var name: [UInt8] = []
        while index < bytes.count, isTokenCharacter(bytes[index]) {
            let byte = bytes[index]
            name.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
            index += 1
        }
        var argument = Argument.absent
        var isInQuotes = false
        if !name.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                isInQuotes = true
                var value: [UInt8] = []
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") {
                        isInQuotes = false
                        index += 1
                        break
                    }
                    if byte == UInt8(ascii: "\\") {
                        guard index + 1 < bytes.count, isQuotedPairCharacter(bytes[index + 1]) else { break }
                        value.append(bytes[index + 1])
                        index += 2
                    } else {
                        guard isQuotedTextCharacter(byte) else { break }
                        value.append(byte)
                        index += 1
                    }
                }
                argument = isInQuotes ? .malformed : .value(value)
            } else {
                var value: [UInt8] = []
                while index < bytes.count, isTokenCharacter(bytes[index]) {
                    value.append(bytes[index])
                    index += 1
                }
                argument = value.isEmpty ? .malformed : .value(value)
            }
        }
        if !isInQuotes { skipWhitespace() }
        if isInQuotes || (index < bytes.count && bytes[index] != UInt8(ascii: ",")) {
            // Not `OWS ","` after the element: it is malformed. Skip to the next comma outside a quoted-string.
            if !name.isEmpty { argument = .malformed }
            while index < bytes.count {
                let byte = bytes[index]
                if isInQuotes {
                    if byte == UInt8(ascii: "\\") {
                        index += 1
                    } else if byte == UInt8(ascii: "\"") {
                        isInQuotes = false
                    }
                } else if byte == UInt8(ascii: "\"") {
                    isInQuotes = true
                } else if byte == UInt8(ascii: ",") {
                    break
                }
                index += 1
            }
        }
        return (name, argument, index + 1)
    }

    /// The field names of a qualified directive's argument (`"a, B"` → `a`, `b`), lowercased; `nil` when it names
    /// none or a member is not a token (RFC 9110 §5.6.2), so that the directive counts as unqualified.
    static func fieldNames(_ argument: [UInt8]) -> Set<String>? {
        var names: Set<String> = []
        for member in argument.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            var name = member[...]
            while let first = name.first, first == 0x20 || first == 0x09 { name.removeFirst() }
            while let last = name.last, last == 0x20 || last == 0x09 { name.removeLast() }
            guard !name.isEmpty else { continue }  // empty list elements are allowed (RFC 9110 §5.6.1)
            guard name.allSatisfy(isTokenCharacter) else { return nil }
            names.insert(String(decoding: name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self))
        }
        return names.isEmpty ? nil : names
    }

    /// Whether `byte` is a `tchar` (RFC 9110 §5.6.2).
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Whether `byte` may stand in a quoted-string as it is (`qdtext`, RFC 9110 §5.6.4): HTAB, SP, visible
    /// characters but `"` and `\`, and obs-text.
    private static func isQuotedTextCharacter(_ byte: UInt8) -> Bool {
        byte == 0x09 || byte == 0x20 || byte == 0x21 || (0x23...0x5B).contains(byte) || (0x5D...0x7E).contains(byte)
            || byte >= 0x80
    }

    /// Whether `byte` may follow `\` in a quoted-pair (RFC 9110 §5.6.4): HTAB, SP, a visible character or obs-text.
    private static func isQuotedPairCharacter(_ byte: UInt8) -> Bool {
        byte == 0x09 || byte == 0x20 || (0x21...0x7E).contains(byte) || byte >= 0x80
    }

    /// Decimal digits as seconds, at most ``maximumDeltaSeconds``; `nil` for anything else (a sign, a fraction,
    /// nothing).
    static func deltaSeconds(_ bytes: [UInt8]) -> Int64? {
        guard !bytes.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = min(value * 10 + Int64(byte - UInt8(ascii: "0")), maximumDeltaSeconds)
        }
        return value
    }
}

import Foundation

extension HTTPRequest {
    /// Checks that the request can be sent, without sending it or encoding its body.
    ///
    /// Terminal loaders call this before sending; you can call it to find a mistake early.
    ///
    /// - Throws: ``HTTPError`` with code ``HTTPError/Code/invalidRequest`` and a message naming the problem:
    ///   an unparsable URL, no host, a bad scheme or port, a path that does not start with `/`, or a header
    ///   whose name is not an HTTP token or whose value contains CR, LF, NUL, other control characters or
    ///   non-ASCII characters (which could smuggle in extra headers).
    public func validate() throws(HTTPError) {
        _ = try validatedURL()
        try validateHeaderFields()
    }

    /// Checks the request's own header fields (not the body's).
    func validateHeaderFields() throws(HTTPError) {
        for field in headers {
            if let problem = Self.problem(withHeaderName: field.name) ?? Self.problem(withHeaderValue: field.value) {
                throw invalid("header field '\(Self.printable(field.name))' \(problem)")
            }
        }
    }

    /// The URL to send to, after checking each part.
    func validatedURL() throws(HTTPError) -> URL {
        if let unparsableURL {
            throw invalid("the URL '\(unparsableURL)' could not be parsed")
        }
        guard let host else {
            throw invalid("the request has no host; set one, or send it through ApplyEnvironment")
        }
        let schemeIsValid =
            scheme.utf8.first.map(Self.isASCIILetter) == true
            && scheme.utf8.allSatisfy { Self.isASCIILetter($0) || Self.isASCIIDigit($0) || "+-.".utf8.contains($0) }
        guard schemeIsValid else {
            throw invalid("the scheme '\(Self.printable(scheme))' is not a valid URL scheme")
        }
        if let problem = Self.problem(withHost: host) {
            throw invalid("the host '\(Self.printable(host))' \(problem)")
        }
        if let port, !(0...65535).contains(port) {
            throw invalid("the port \(port) is outside 0...65535")
        }
        if !percentEncodedPath.isEmpty && !percentEncodedPath.hasPrefix("/") {
            throw invalid("the path '\(Self.printable(path))' must start with '/'")
        }
        guard
            let url = Self.url(
                scheme: scheme, host: host, port: port, path: percentEncodedPath,
                query: percentEncodedQuery, fragment: fragment)
        else {
            throw invalid("the URL could not be formed from its parts (\(displayURL))")
        }
        return url
    }

    /// The URL with these parts, which have been checked.
    ///
    /// Most requests have an ASCII host and no fragment: their URL is the parts joined, parsed strictly, which
    /// costs half of what `URLComponents` does. Anything else — or a string the strict parser refuses — goes
    /// through `URLComponents`, which encodes a fragment and an international host.
    private static func url(
        scheme: String, host: String, port: Int?, path: String, query: String?, fragment: String?
    ) -> URL? {
        if fragment == nil, host.utf8.allSatisfy({ $0 < 0x80 }) {
            var text = scheme + "://" + host
            if let port { text += ":" + String(port) }
            text += path
            if let query { text += "?" + query }
            if let url = URL(string: text, encodingInvalidCharacters: false) { return url }
        }
        var components = URLComponents()
        components.scheme = scheme
        components.host = host
        components.port = port
        components.percentEncodedPath = path
        components.percentEncodedQuery = query
        components.fragment = fragment
        return components.url
    }

    /// The header fields to send: the request's own, then each of the body's
    /// ``HTTPBody/additionalHeaders`` that the request does not set itself.
    public var headersIncludingBody: HTTPHeaders {
        let extra = body.additionalHeaders
        guard !extra.isEmpty, !body.isEmpty else { return headers }
        var merged = headers
        for (name, value) in extra.sorted(by: { $0.key < $1.key }) where !merged.contains(name) {
            merged.add(value, for: name)
        }
        return merged
    }

    /// The encoded body, or `nil` when it is empty.
    func encodedBody() throws(HTTPError) -> Data? {
        guard !body.isEmpty else { return nil }
        do {
            return try body.encode()
        } catch {
            throw HTTPError(
                .invalidRequest,
                request: self,
                message: "the body (\(type(of: body))) could not be encoded",
                underlyingError: error
            )
        }
    }

    /// Why `host` cannot be a URL host, or `nil` when it can: a registered name (internationalized names
    /// allowed) or an IP literal such as `127.0.0.1` or `[::1]`.
    static func problem(withHost host: String) -> String? {
        if host.hasPrefix("[") {
            let literal = host.dropFirst().dropLast()
            guard host.hasSuffix("]"), !literal.isEmpty,
                literal.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." })
            else { return "is not a valid IPv6 literal" }
            return nil
        }
        // Non-ASCII bytes belong to an international name, which is not checked further here.
        guard let bad = host.utf8.firstIndex(where: { $0 < 0x80 && !hostBytes[Int($0)] }) else { return nil }
        return "contains \(describe(host.unicodeScalars[bad])), which is not allowed in a host name"
    }

    private func invalid(_ message: String) -> HTTPError {
        HTTPError(.invalidRequest, request: self, message: message)
    }

    /// Why `name` cannot be a header field name, or `nil` when it can (an RFC 9110 token).
    static func problem(withHeaderName name: String) -> String? {
        if name.isEmpty { return "has an empty name" }
        // Every byte before the first bad one is ASCII, so the bad one starts a scalar.
        guard let bad = name.utf8.firstIndex(where: { !tokenBytes[Int($0)] }) else { return nil }
        return "has a name that is not an HTTP token (it contains \(describe(name.unicodeScalars[bad])))"
    }

    /// Why `value` cannot be a header field value, or `nil` when it can.
    static func problem(withHeaderValue value: String) -> String? {
        // Every byte before the first bad one is ASCII, so the bad one starts a scalar.
        guard let bad = value.utf8.firstIndex(where: { $0 != 0x09 && !(0x20...0x7E).contains($0) }) else {
            return nil
        }
        let scalar = value.unicodeScalars[bad]
        switch scalar.value {
        case 0x0D, 0x0A, 0x00:
            return "has a value containing \(describe(scalar)), which could inject header fields"
        case 0x7F, 0x01...0x1F:
            return "has a value containing the control character \(describe(scalar))"
        default:
            return "has a value containing the non-ASCII character \(describe(scalar)); percent-encode it"
        }
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte | 0x20)
    }

    private static func isASCIIDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte)
    }

    /// Which bytes may appear in an RFC 9110 token (a header field name), indexed by byte.
    private static let tokenBytes = byteTable(alsoAllowing: "!#$%&'*+-.^_`|~")
    /// Which ASCII bytes may appear in a registered host name (RFC 3986 unreserved), indexed by byte.
    private static let hostBytes = byteTable(alsoAllowing: "-._~")

    /// A table of the 256 bytes: ASCII letters, digits and the bytes of `others` are allowed.
    private static func byteTable(alsoAllowing others: String) -> [Bool] {
        (0...255).map { byte in
            let byte = UInt8(byte)
            return isASCIILetter(byte) || isASCIIDigit(byte) || others.utf8.contains(byte)
        }
    }

    private static func describe(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\r": "CR"
        case "\n": "LF"
        case "\0": "NUL"
        default:
            scalar.isASCII && scalar.value >= 0x20
                ? "'\(scalar)'" : "U+" + String(scalar.value, radix: 16, uppercase: true)
        }
    }

    /// `text` with control characters escaped, safe to put inside a message.
    private static func printable(_ text: String) -> String {
        text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? $0.escaped(asASCII: true) : String($0) }
            .joined()
    }
}

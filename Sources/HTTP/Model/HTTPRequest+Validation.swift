public import Foundation

extension HTTPRequest {
    /// Checks that the request can be sent, without sending it or encoding its body.
    ///
    /// Terminal loaders call this before sending; you can call it to find a mistake early. No request, however
    /// its parts were set, makes it trap: every problem is an error.
    ///
    /// - Throws: ``HTTPError`` with code ``HTTPError/Code/invalidRequest`` and a message naming the part and the
    ///   offending character: a URL that could not be parsed or has no host; a scheme other than `http` or
    ///   `https`; a bad host or port; a path that does not start with `/`; a character that must be
    ///   percent-encoded in ``percentEncodedPath`` or ``percentEncodedQuery`` (a space, a `?` or `#` in a path,
    ///   a `%` not followed by two hex digits, a non-ASCII character); a header field — the request's own or
    ///   its body's — whose name is not an HTTP token or whose value contains CR, LF, NUL, other control
    ///   characters or non-ASCII characters (which could smuggle in extra header fields); or a body on a `GET`,
    ///   `HEAD` or `TRACE` request.
    public func validate() throws(HTTPError) {
        _ = try validatedURL()
        try validateAllButURL()
    }

    /// Checks the request as ``validate()`` does and returns the URL to send it to: the entry point of a terminal
    /// loader of your own, which builds the URL once.
    ///
    /// ```swift
    /// let url: URL
    /// do { url = try request.validatedURLForSending() } catch { return .failure(error) }
    /// ```
    ///
    /// The URL is ``url``: the fragment, if any, is part of it, and a transport does not send it.
    ///
    /// - Returns: The URL, every part checked.
    /// - Throws: ``HTTPError`` with code ``HTTPError/Code/invalidRequest``, as ``validate()``.
    public func validatedURLForSending() throws(HTTPError) -> URL {
        let url = try validatedURL()
        try validateAllButURL()
        return url
    }

    /// Checks the request as ``validatedURLForSending()`` does and returns the URL as text, for a transport that
    /// takes a URL as a string and parses it itself (AsyncHTTPClient): the URL is then parsed once, not twice.
    ///
    /// Every part of the text is checked and percent-encoded where it must be, so it parses as the URL that
    /// ``validatedURLForSending()`` returns.
    ///
    /// - Returns: The URL's text, every part checked.
    /// - Throws: ``HTTPError`` with code ``HTTPError/Code/invalidRequest``, as ``validate()``.
    public func validatedURLStringForSending() throws(HTTPError) -> String {
        let text = try validatedURLText()
        try validateAllButURL()
        return text
    }

    /// The checks of ``validate()`` after the URL's: the method, the header fields, a body the method allows.
    private func validateAllButURL() throws(HTTPError) {
        try validateMethod()
        try validateHeaderFields()
        try validateBodyAllowed()
    }

    /// Checks that the method is an RFC 9110 token: anything else (a space, CR/LF) would rewrite the request line.
    func validateMethod() throws(HTTPError) {
        let name = method.rawValue
        if name.isEmpty { throw invalid("the method is empty") }
        if let bad = Self.firstNonTokenScalar(in: name) {
            throw invalid(
                "the method '\(Describe.printable(name))' is not an HTTP token (it contains "
                    + "\(Describe.scalar(bad))), which could inject another request line")
        }
    }

    /// Checks the header fields that are sent: the request's own, then those its body adds.
    func validateHeaderFields() throws(HTTPError) {
        let ownCount = headers.count
        for (index, field) in headersIncludingBody.enumerated() {
            if let problem = Self.problem(withHeaderName: field.name) ?? Self.problem(withHeaderValue: field.value) {
                let whose = index < ownCount ? "header field" : "the body's header field"
                throw invalid("\(whose) '\(Describe.printable(field.name))' \(problem)")
            }
        }
    }

    /// Refuses content on methods that must not carry any: RFC 9110 gives content in a `GET` or `HEAD`
    /// request no meaning (§9.3.1, §9.3.2) and forbids it in `TRACE` (§9.3.8), servers and proxies may
    /// reject or misread it, and URLSession refuses to send it.
    func validateBodyAllowed() throws(HTTPError) {
        guard !body.isEmpty, [.get, .head, .trace].contains(method) else { return }
        throw invalid(
            "a \(method) request cannot have a body (\(type(of: body))); send the data as query items, or use "
                + "POST or PUT")
    }

    /// The URL to send to, after checking each part.
    func validatedURL() throws(HTTPError) -> URL {
        let text = try validatedURLText()
        // Every part is checked and every character in `text` is one a URL allows, so this parses; should it
        // not, the request fails rather than traps.
        guard let url = URL(string: text, encodingInvalidCharacters: false) else {
            throw invalid("the URL could not be formed from its parts (\(Describe.printable(displayURL)))")
        }
        return url
    }

    /// The text of the URL to send to, after checking each part.
    private func validatedURLText() throws(HTTPError) -> String {
        if let unusableURL {
            throw invalid("the URL '\(displayURL)' \(unusableURL.problem)")  // (displayURL hides its secrets)
        }
        let scheme = scheme
        guard HTTPHeaders.namesMatch(scheme, "https") || HTTPHeaders.namesMatch(scheme, "http") else {
            throw invalid(
                scheme.isEmpty
                    ? "the request has no scheme; use http or https"
                    : "the scheme '\(Describe.printable(scheme))' is not supported; only http and https can be sent")
        }
        guard let host else {
            throw invalid("the request has no host; set one, or send it through ApplyEnvironment")
        }
        let wireHost: String
        switch HostName.check(host) {
        case .valid(let checked): wireHost = checked
        case .invalid(let problem): throw invalid("the host '\(Describe.printable(host))' \(problem)")
        }
        if let port, !(0...65535).contains(port) {
            throw invalid("the port \(port) is outside 0...65535")
        }
        let path = percentEncodedPath
        if let first = path.utf8.first, first != UInt8(ascii: "/") {
            throw invalid("the path '\(Describe.printable(path))' must start with '/'")
        }
        if let problem = PercentEncoding.problem(in: path, allowing: PercentEncoding.pathAllowed) {
            throw invalid("the percent-encoded path \(problem); set `path` to have it encoded")
        }
        if let percentEncodedQuery,
            let problem = PercentEncoding.problem(in: percentEncodedQuery, allowing: PercentEncoding.queryTextAllowed)
        {
            throw invalid("the percent-encoded query \(problem); set `query` to have it encoded")
        }
        let portText = port.map(String.init)
        let fragmentText = fragment.map { PercentEncoding.encode($0, allowing: PercentEncoding.fragmentAllowed) }
        // Built in one buffer of the right size: a terminal does this for every request.
        var text = ""
        text.reserveCapacity(
            scheme.utf8.count + 3 + wireHost.utf8.count + (portText.map { $0.utf8.count + 1 } ?? 0) + path.utf8.count
                + (percentEncodedQuery.map { $0.utf8.count + 1 } ?? 0) + (fragmentText.map { $0.utf8.count + 1 } ?? 0))
        text.append(scheme)
        text.append("://")
        text.append(wireHost)
        if let portText {
            text.append(":")
            text.append(portText)
        }
        text.append(path)
        if let percentEncodedQuery {
            text.append("?")
            text.append(percentEncodedQuery)
        }
        if let fragmentText {
            text.append("#")
            text.append(fragmentText)
        }
        return text
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
        try fromBody { try $0.encode() }
    }

    /// Where a transport reads the body from, or `nil` when it is empty. A body that cannot produce its bytes
    /// fails with ``HTTPError/Code/invalidRequest``, naming its type, as every transport reports it.
    @_spi(Transport) public func bodySource() throws(HTTPError) -> HTTPBodySource? {
        try fromBody { try $0.makeSource() }
    }

    /// `make(body)`, or `nil` for an empty body.
    private func fromBody<Value>(_ make: (any HTTPBody) throws -> Value) throws(HTTPError) -> Value? {
        guard !body.isEmpty else { return nil }
        do {
            return try make(body)
        } catch {
            throw bodyEncodingFailure(error)
        }
    }

    /// The error for a body that could not produce its bytes.
    func bodyEncodingFailure(_ error: any Error) -> HTTPError {
        HTTPError(
            .invalidRequest, request: self, message: "the body (\(type(of: body))) could not be encoded",
            underlyingError: error)
    }

    private func invalid(_ message: String) -> HTTPError {
        HTTPError(.invalidRequest, request: self, message: message)
    }

    /// Why `name` cannot be a header field name, or `nil` when it can (an RFC 9110 token).
    static func problem(withHeaderName name: String) -> String? {
        if name.isEmpty { return "has an empty name" }
        guard let bad = firstNonTokenScalar(in: name) else { return nil }
        return "has a name that is not an HTTP token (it contains \(Describe.scalar(bad)))"
    }

    /// The first character of `name` that an RFC 9110 token may not contain, or `nil` when it is a token.
    static func firstNonTokenScalar(in name: String) -> Unicode.Scalar? {
        let tokenBytes = tokenBytes
        guard let bad = name.firstUTF8Offset(where: { !tokenBytes[Int($0)] }) else { return nil }
        // Every byte before the first bad one is ASCII, so the bad one starts a scalar.
        return name.unicodeScalar(atUTF8Offset: bad)
    }

    /// Why `value` cannot be a header field value, or `nil` when it can.
    static func problem(withHeaderValue value: String) -> String? {
        // Every byte before the first bad one is ASCII, so the bad one starts a scalar.
        guard let bad = value.firstUTF8Offset(where: { $0 != 0x09 && !(0x20...0x7E).contains($0) }) else {
            return nil
        }
        let scalar = value.unicodeScalar(atUTF8Offset: bad)
        switch scalar.value {
        case 0x0D, 0x0A, 0x00:
            return "has a value containing \(Describe.scalar(scalar)), which could inject header fields"
        case 0x7F, 0x01...0x1F:
            return "has a value containing the control character \(Describe.scalar(scalar))"
        default:
            return "has a value containing the non-ASCII character \(Describe.scalar(scalar)); percent-encode it"
        }
    }

    /// Which bytes may appear in an RFC 9110 token (a header field name), indexed by byte.
    static let tokenBytes: [Bool] = (0...255).map { byte in
        let byte = UInt8(byte)
        return (0x61...0x7A).contains(byte | 0x20) || (0x30...0x39).contains(byte)
            || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

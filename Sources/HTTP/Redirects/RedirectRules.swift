import Foundation

/// Where a `3xx` response sends its request: RFC 9110 §15.4's method rules, RFC 3986 §5's reference resolution,
/// the fragment inherited (RFC 9110 §10.2.2) and the credentials kept to their origin — a pure function of the request
/// and the response, with no I/O, that ``FollowRedirects`` drives.
enum RedirectRules {
    /// What a response means for the request that was redirected.
    enum Outcome {
        /// Not a redirect to follow — not a `301`, `302`, `303`, `307` or `308`, or one without `Location` — so the
        /// response is the result.
        case notFollowed
        /// A redirect whose `Location` cannot be followed, and why, as a phrase ("has the scheme 'file', …").
        case unusable(String)
        /// The request to send next.
        case next(HTTPRequest)
    }

    /// The statuses followed: `301`, `302`, `303`, `307`, `308`.
    /// Inlined always: called per byte of every URL part checked, where a call would cost more than the test.
    @inline(__always)
    static func isFollowed(_ status: HTTPStatus) -> Bool {
        switch status.rawValue {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// The header fields that describe a body, removed with the body when a redirect turns the request into a `GET`.
    static let bodyFields = [
        "Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location",
        "Transfer-Encoding",
    ]

    /// The header fields that carry credentials, never sent on to another origin, whatever the redaction says.
    static let credentialFields = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// What `response` means for `request`, the request that was sent and answered with it.
    ///
    /// The `Location` is resolved against the URL that answered: the response's ``HTTPResponse/url`` when the
    /// transport set one, else the request as the terminal sent it (``HTTPResponse/request``), so that what the
    /// loaders below changed (a path prefix, a host) is the base.
    ///
    /// - Parameter secrets: The header fields that are secrets besides ``credentialFields``: those it hides.
    static func next(after response: HTTPResponse, of request: HTTPRequest, secrets: Redaction = .standard) -> Outcome {
        guard isFollowed(response.status) else { return .notFollowed }
        let locations = response.headers.values(for: "Location")
        guard let location = locations.first else { return .notFollowed }
        guard locations.dropFirst().allSatisfy({ $0 == location }) else {
            return .unusable("has \(locations.count) Location fields, which differ")
        }
        let base = base(of: response)
        let target: Target
        switch Target.resolving(location, against: base) {
        case .success(let resolved): target = resolved
        case .failure(let problem): return .unusable(problem.phrase)
        }

        var next = request
        // 301 and 302 for methods other than POST, 307 and 308 keep the method and the body.
        if response.status == .seeOther {
            if request.method != .head { next.method = .get }
            dropBody(of: &next)
        } else if request.method == .post, response.status == .movedPermanently || response.status == .found {
            next.method = .get
            dropBody(of: &next)
        }
        next.setOrigin(scheme: target.scheme, host: target.host, port: target.port)
        next.percentEncodedPath = target.path
        next.percentEncodedQuery = target.query
        if let fragment = target.fragment { next.fragment = fragment }  // else inherited (RFC 9110 §10.2.2)
        return .next(withoutCarriedCredentials(next, from: request, answeredBy: base, secrets: secrets))
    }

    /// The request that was answered with `response`, as far as its URL goes: the response's ``HTTPResponse/url`` when
    /// the transport set one, else the request as the terminal sent it.
    static func base(of response: HTTPResponse) -> HTTPRequest {
        response.explicitURL.map { HTTPRequest(url: $0) } ?? response.request
    }

    /// `next` without the secret header fields it carries over unchanged from `request` — ``credentialFields`` and
    /// those `secrets` hides — when it goes to another origin than `base`, the request answered with the redirect.
    static func withoutCarriedCredentials(
        _ next: HTTPRequest, from request: HTTPRequest, answeredBy base: HTTPRequest, secrets: Redaction
    ) -> HTTPRequest {
        guard next.origin != base.origin else { return next }
        var stripped = next
        for field in next.headers
        where credentialFields.contains(where: field.hasName) || secrets.hides(field.name) {
            if request.headers.values(for: field.name).contains(field.value) { stripped.headers.remove(field.name) }
        }
        return stripped
    }

    private static func dropBody(of request: inout HTTPRequest) {
        request.body = EmptyBody()
        for name in bodyFields where request.headers.contains(name) { request.headers.remove(name) }
    }

    /// The identity of a hop for loop detection: the method and the URL as sent, the fragment left out (it is not
    /// sent); scheme and host compared without case, a missing port as the scheme's default.
    struct HopKey: Hashable {
        var method: HTTPMethod
        var scheme: String
        var host: String?
        var port: Int?
        var path: String
        var query: String?

        init(_ request: HTTPRequest) {
            method = request.method
            scheme = request.scheme.lowercased()
            host = request.host?.lowercased()
            port = request.port ?? Origin.defaultPort(forScheme: scheme)
            path = request.percentEncodedPath.isEmpty ? "/" : request.percentEncodedPath
            query = request.percentEncodedQuery
        }
    }
}

/// A `Location` resolved to the parts of a request: an `http` or `https` URL whose host, path, query and fragment are
/// fit to send.
struct Target: Equatable {
    var scheme: String
    var host: String?
    var port: Int?
    /// Percent-encoded, `/` when the reference leaves it empty.
    var path: String
    /// Percent-encoded.
    var query: String?
    /// Decoded, as ``HTTPRequest/fragment`` holds it; `nil` when the reference has none.
    var fragment: String?

    struct Problem: Error, Equatable {
        var phrase: String
    }

    /// The URI reference `location` (RFC 3986 §4.1) resolved against `base` (§5.2, strict).
    ///
    /// Characters a server should have percent-encoded and did — a space, a non-ASCII letter — are encoded in the
    /// path, query and fragment, as browsers do. The result must be an `http` or `https` URL with a host and no user
    /// information (RFC 9110 §4.2.4: a `user@` in a URL is how phishing hides the real host), a port in range and
    /// well-formed percent-encoding; otherwise the problem says what is wrong, as a phrase that follows "the Location
    /// '…'".
    static func resolving(_ location: String, against base: HTTPRequest) -> Result<Target, Problem> {
        let text = location.trimmingCharacters(in: [" ", "\t"])
        let reference = Reference(text)
        guard reference.hasValidScheme else { return .failure(Problem(phrase: "could not be parsed")) }

        // RFC 3986 §5.2.2.
        var scheme = base.scheme.lowercased()
        var path: String
        var query: String?
        if reference.scheme != nil || reference.authority != nil {
            scheme = reference.scheme?.lowercased() ?? scheme
            path = removingDotSegments(reference.path)
            query = reference.query
        } else if reference.path.isEmpty {
            path = base.percentEncodedPath
            query = reference.query ?? base.percentEncodedQuery
        } else {
            path = removingDotSegments(
                reference.path.hasPrefix("/") ? reference.path : merging(reference.path, into: base))
            query = reference.query
        }
        guard scheme == "http" || scheme == "https" else {
            return .failure(
                Problem(
                    phrase: "has the scheme '\(Describe.printable(scheme))'; only http and https locations are followed"
                ))
        }

        var target = Target(scheme: scheme, host: base.host, port: base.port, path: "/", query: nil, fragment: nil)
        if reference.scheme != nil || reference.authority != nil {
            guard let authority = reference.authority else { return .failure(Problem(phrase: "has no host")) }
            switch Self.hostAndPort(of: authority) {
            case .success(let (host, port)):
                target.host = host
                target.port = port
            case .failure(let problem):
                return .failure(problem)
            }
        }
        // When neither the reference nor the base has a host, the base is a relative request (in a chain with
        // FollowRedirects above ApplyEnvironment), and the next request stays relative too.

        // Once the rest is encoded, the only problem left can be a `%` that starts no `%XX` sequence.
        let encodedPath = PercentEncoding.encode(path, allowing: Self.pathAllowed)
        if PercentEncoding.problem(in: encodedPath, allowing: PercentEncoding.pathAllowed) != nil {
            return .failure(Problem(phrase: "has a '%' in its path that is not followed by two hex digits"))
        }
        target.path = encodedPath.hasPrefix("/") || target.host == nil ? encodedPath : "/" + encodedPath
        if let query {
            let encoded = PercentEncoding.encode(query, allowing: Self.queryAllowed)
            if PercentEncoding.problem(in: encoded, allowing: PercentEncoding.queryTextAllowed) != nil {
                return .failure(Problem(phrase: "has a '%' in its query that is not followed by two hex digits"))
            }
            target.query = encoded
        }
        if let fragment = reference.fragment {
            let encoded = PercentEncoding.encode(fragment, allowing: Self.queryAllowed)
            target.fragment = PercentEncoding.decode(encoded) ?? encoded
        }
        return .success(target)
    }

    /// What stays unencoded while a reference is cleaned up: what RFC 3986 allows, and `%`, whose sequences are
    /// checked afterwards.
    private static let pathAllowed = PercentEncoding.AllowedBytes(PercentEncoding.unreserved + "!$&'()*+,;=:@/%")
    private static let queryAllowed = PercentEncoding.AllowedBytes(PercentEncoding.unreserved + "!$&'()*+,;=:@/?%")

    /// The host (checked, as sent) and port of an authority; user information is refused.
    private static func hostAndPort(of authority: String) -> Result<(String, Int?), Problem> {
        if authority.contains("@") {
            return .failure(Problem(phrase: "has user information (user@host), which is never followed"))
        }
        var host = Substring(authority)
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                return .failure(Problem(phrase: "has an IPv6 host without its closing bracket"))
            }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return .failure(Problem(phrase: "has text after its IPv6 host")) }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        var port: Int?
        if let portText, !portText.isEmpty {
            guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let number = Int(portText), number <= 65_535
            else {
                return .failure(Problem(phrase: "has the port '\(Describe.printable(portText))', which is not one"))
            }
            port = number
        }
        guard let decoded = PercentEncoding.decode(String(host)), !decoded.isEmpty else {
            return .failure(Problem(phrase: "has no host"))
        }
        switch HostName.check(decoded) {
        case .valid: return .success((decoded, port))
        case .invalid(let why): return .failure(Problem(phrase: "has a host that \(why)"))
        }
    }

    /// RFC 3986 §5.2.3: the reference's path appended to the base's, after its last `/`.
    private static func merging(_ path: String, into base: HTTPRequest) -> String {
        let basePath = base.percentEncodedPath
        if base.host != nil, basePath.isEmpty { return "/" + path }
        guard let slash = basePath.lastIndex(of: "/") else { return path }
        return String(basePath[...slash]) + path
    }

    /// RFC 3986 §5.2.4: `.` and `..` segments interpreted and removed.
    static func removingDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var input = Substring(path)
        var output: [Substring] = []  // segments, each with its leading "/" when it had one
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }

    /// A URI reference split into its five parts (RFC 3986 Appendix B); `nil` for a part that is absent, as
    /// opposed to empty.
    struct Reference {
        var scheme: String?
        var authority: String?
        var path: String
        var query: String?
        var fragment: String?
        /// Whether what precedes the first `:` (before any `/`, `?` or `#`), if anything, is a scheme (RFC 3986 §3.1).
        var hasValidScheme = true

        init(_ text: String) {
            var rest = Substring(text)
            if let hash = rest.firstIndex(of: "#") {
                fragment = String(rest[rest.index(after: hash)...])
                rest = rest[..<hash]
            }
            if let question = rest.firstIndex(of: "?") {
                query = String(rest[rest.index(after: question)...])
                rest = rest[..<question]
            }
            if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains("/") {
                let candidate = rest[..<colon]
                hasValidScheme = Self.isScheme(candidate)
                scheme = String(candidate)
                rest = rest[rest.index(after: colon)...]
            }
            if rest.hasPrefix("//") {
                let afterSlashes = rest.dropFirst(2)
                let end = afterSlashes.firstIndex(of: "/") ?? afterSlashes.endIndex
                authority = String(afterSlashes[..<end])
                rest = afterSlashes[end...]
            }
            path = String(rest)
        }

        /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
        private static func isScheme(_ text: Substring) -> Bool {
            guard let first = text.utf8.first, Self.isLetter(first) else { return false }
            return text.utf8.allSatisfy { byte in
                Self.isLetter(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "+")
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            }
        }

        private static func isLetter(_ byte: UInt8) -> Bool {
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
    }
}

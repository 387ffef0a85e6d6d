import Foundation
import FuzzSupport
import HTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Request building and validation: any bytes in any settable part of a request, then everything that reads it.
///
/// Oracles, beyond "no trap": `validate()` fails only with `.invalidRequest`, and `url` and `urlRequest()` agree
/// with it; a URL has no raw control character or space and parses back (`URLComponents(string:)`) to the
/// request's scheme, host, port, percent-encoded path and query, and fragment; `HTTPRequest(url:)` keeps a URL as
/// it was; `path` and `query` read back what was set; `ServerEnvironment.apply(to:)` fills in the origin, keeps
/// the request's own header fields and query as they were, and adds the environment's.
enum RequestTarget: FuzzTarget {
    static func run(_ input: inout FuzzInput) {
        let program = RequestProgram.read(&input)
        let request = program.build()
        check(request)
        if case .url(let text) = program.start, program.steps.isEmpty { checkURLRoundTrip(text, request) }
        checkSetters(request, path: input.string(), query: RequestProgram.readQuery(&input))
        checkEnvironment(EnvironmentSpec.read(&input), request)
    }

    static func reproducer(_ input: inout FuzzInput) -> String {
        let program = RequestProgram.read(&input)
        let path = input.string()
        let query = RequestProgram.readQuery(&input)
        let environment = EnvironmentSpec.read(&input)
        return """
            \(program.swift)
            _ = try? request.validate()
            _ = request.url
            _ = try? request.urlRequest()
            _ = request.description
            _ = request.cURLCommand()
            var copy = request
            copy.path = \(SwiftLiteral.string(path))
            copy.query = \(SwiftLiteral.queryItems(query))
            _ = \(environment.swift).apply(to: request).url
            """
    }

    /// Everything that reads a request, and whether they agree.
    static func check(_ request: HTTPRequest) {
        _ = request.description
        _ = request.cURLCommand()
        _ = request.headersIncludingBody
        _ = request.path
        _ = request.query
        var isValid = true
        do {
            try request.validate()
        } catch {
            FuzzCheck.expect(error.code == .invalidRequest, "validate() threw \(error.code), not invalidRequest")
            isValid = false
            _ = error.description
        }
        let url = request.url
        FuzzCheck.expect(!isValid || url != nil, "validate() passed but url is nil for \(request)")
        // The method goes onto the request line: one that is not an RFC 9110 token (a space, CR/LF, …) must not
        // pass.
        if isValid {
            FuzzCheck.expect(
                isToken(request.method.rawValue),
                "validate() accepts the method \(SwiftLiteral.string(request.method.rawValue)), which is not an HTTP token"
            )
        }
        if let url { checkURL(url, of: request) }

        do {
            let urlRequest = try request.urlRequest()
            FuzzCheck.expect(isValid, "urlRequest() succeeded for a request validate() rejects: \(request)")
            FuzzCheck.expect(urlRequest.url == url, "urlRequest().url \(String(describing: urlRequest.url)) != url")
            // Compared ignoring case: corelibs Foundation's URLRequest upper-cases the standard methods in any case
            // ("dELETE" is sent as DELETE), which the product cannot prevent.
            FuzzCheck.expect(
                (urlRequest.httpMethod ?? "GET").uppercased() == request.method.rawValue.uppercased(),
                "urlRequest().httpMethod is \(String(describing: urlRequest.httpMethod)), not \(request.method)")
            for field in request.headers {
                FuzzCheck.expect(
                    urlRequest.value(forHTTPHeaderField: field.name) != nil,
                    "urlRequest() lost the header field \(field.name)")
            }
        } catch {
            FuzzCheck.expect(error.code == .invalidRequest, "urlRequest() threw \(error.code), not invalidRequest")
        }
    }

    /// A URL the request produced is well formed and carries exactly the request's parts.
    static func checkURL(_ url: URL, of request: HTTPRequest) {
        let text = url.absoluteString
        if let bad = text.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            FuzzCheck.fail(
                "url \(SwiftLiteral.string(text)) contains the raw character U+\(String(bad.value, radix: 16))")
        }
        guard let components = URLComponents(string: text) else {
            FuzzCheck.fail("url \(SwiftLiteral.string(text)) does not parse back with URLComponents(string:)")
        }
        func same<Value: Equatable>(_ part: String, _ parsed: Value?, _ expected: Value?) {
            FuzzCheck.expect(
                parsed == expected,
                "url \(SwiftLiteral.string(text)) parses back to \(part) \(String(describing: parsed)), not "
                    + String(describing: expected))
        }
        same("scheme", components.scheme, request.scheme)
        // The host as the URL writes it, against the request's in the form URLComponents writes a host (IDNA for an
        // international name, no brackets for an IP literal), ignoring case: URLComponents(string:)'s own `host`
        // decodes punycode, and has none for an `xn--` label that does not decode.
        var canonical = URLComponents()
        canonical.scheme = "https"
        canonical.host = request.host
        if let expected = canonical.url?.host(percentEncoded: true) {
            same("host", url.host(percentEncoded: true)?.lowercased(), expected.lowercased())
        }
        same("port", components.port, request.port)
        same("percentEncodedPath", components.percentEncodedPath, request.percentEncodedPath)
        same("percentEncodedQuery", components.percentEncodedQuery, request.percentEncodedQuery)
        same("fragment", components.fragment, request.fragment)
    }

    /// Whether two hosts name the same host: equal ignoring case, or equal label by label in the form `URLComponents`
    /// writes a host (IDNA). `URL(string:)` writes a literal non-ASCII label as Punycode but keeps a percent-encoded
    /// one, and `URLComponents` decodes Punycode (and gives no host at all when one `xn--` label does not decode), so
    /// one name reaches here in different forms; label by label, an `xn--` label that does not decode, and an empty
    /// label, are compared as they are written.
    static func sameHost(_ lhs: String?, _ rhs: String?) -> Bool {
        if lhs?.lowercased() == rhs?.lowercased() { return true }
        func written(_ host: String?) -> String? {
            guard let host else { return nil }
            var labels: [String] = []
            for label in host.split(separator: ".", omittingEmptySubsequences: false) {
                // An empty label (`a..b`) is written as it is; `URLComponents` gives no host for an empty one.
                if label.isEmpty {
                    labels.append("")
                    continue
                }
                var components = URLComponents()
                components.scheme = "https"
                components.host = String(label)
                guard let written = components.url?.host(percentEncoded: true) else { return nil }
                labels.append(written.lowercased())
            }
            return labels.joined(separator: ".")
        }
        // A host with a label that URLComponents cannot write (UTS 46 refuses it: a bidi rule, a joiner out of
        // context, a label too long) has no form of Foundation's to compare with; HTTPRequest's own checks are not
        // all of UTS 46's, so it may keep such a label and still send what it was given.
        guard let left = written(lhs) else { return lhs != nil && rhs != nil }
        guard let right = written(rhs) else { return false }
        return left == right
    }

    /// `HTTPRequest(url:)` keeps a URL's host, and its other parts as they were, unless it has parts a request
    /// does not keep (user, password) or lacks a scheme (a request's defaults to https). Compared part by part: an
    /// empty port (`a.b:`) and no port are the same URL.
    static func checkURLRoundTrip(_ text: String, _ request: HTTPRequest) {
        guard let original = URL(string: text), original.scheme != nil, original.user == nil,
            original.password == nil
        else { return }
        // A request that lost its host is relative: ApplyEnvironment would send it to another server.
        if let host = original.host, !host.isEmpty {
            FuzzCheck.expect(
                request.host != nil,
                "HTTPRequest(url: URL(string: \(SwiftLiteral.string(text)))!) dropped the host \(SwiftLiteral.string(host))"
            )
        }
        guard let url = request.url,
            let before = URLComponents(url: original, resolvingAgainstBaseURL: true),
            let after = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return }
        let same =
            before.scheme == after.scheme
            && (sameHost(before.host, after.host) || sameHost(before.host, url.host(percentEncoded: true)))
            && before.port == after.port && before.percentEncodedPath == after.percentEncodedPath
            && before.percentEncodedQuery == after.percentEncodedQuery && before.fragment == after.fragment
        FuzzCheck.expect(
            same,
            "HTTPRequest(url: URL(string: \(SwiftLiteral.string(text)))!).url is \(SwiftLiteral.string(url.absoluteString))"
        )
    }

    /// `path` and `query` read back what was set, and setting them never traps.
    static func checkSetters(_ request: HTTPRequest, path: String, query: [URLQueryItem]) {
        var copy = request
        copy.path = path
        FuzzCheck.expect(
            copy.path == path,
            "path set to \(SwiftLiteral.string(path)) reads back as \(SwiftLiteral.string(copy.path))")
        copy.query = query
        FuzzCheck.expect(
            copy.query == query,
            "query set to \(SwiftLiteral.queryItems(query)) reads back as \(SwiftLiteral.queryItems(copy.query))")
        check(copy)
    }

    /// `ServerEnvironment.apply(to:)`: origin from the environment, the request's own fields and query kept
    /// exactly, the environment's added.
    static func checkEnvironment(_ spec: EnvironmentSpec, _ request: HTTPRequest) {
        let environment = spec.build()
        let applied = environment.apply(to: request)
        // A request made from a URL that cannot be sent (a hostless or non-http one) is never retargeted: apply
        // returns it unchanged, and it fails validation wherever it goes.
        var isUnusableURL = false
        do { try request.validate() } catch { isUnusableURL = error.message.hasPrefix("the URL '") }
        if isUnusableURL {
            FuzzCheck.expect(
                applied.description == request.description,
                "apply(to:) retargeted a request made from a URL that cannot be sent: \(request) became \(applied)")
            return
        }
        FuzzCheck.expect(applied.scheme == environment.scheme, "apply(to:) did not set the scheme")
        FuzzCheck.expect(
            applied.host == (environment.host.isEmpty ? nil : environment.host), "apply(to:) did not set the host")
        FuzzCheck.expect(applied.port == environment.port, "apply(to:) did not set the port")
        for field in request.headers {
            FuzzCheck.expect(
                applied.headers.values(for: field.name) == request.headers.values(for: field.name),
                "apply(to:) changed the request's own header field \(SwiftLiteral.string(field.name))")
        }
        for field in environment.headers where !request.headers.contains(field.name) {
            FuzzCheck.expect(
                applied.headers.values(for: field.name).contains(field.value),
                "apply(to:) did not add the environment's header field \(SwiftLiteral.string(field.name))")
        }
        if let own = request.percentEncodedQuery, let sent = applied.percentEncodedQuery,
            !KnownIssues.componentsRefuse(path: "/", query: own)
        {
            // Compared as a server reads a query (form-decoded), so re-encoding `=` as `%3D` passes and turning a
            // `+` (a space) into `%2B` (a plus) does not.
            let ownPairs = formDecoded(own)
            let sentPairs = formDecoded(sent)
            FuzzCheck.expect(
                sentPairs.count >= ownPairs.count && zip(ownPairs, sentPairs).allSatisfy { $0 == $1 },
                "apply(to:) changed what the request's query \(SwiftLiteral.string(own)) means: it is sent as "
                    + SwiftLiteral.string(sent))
        }
        check(applied)
    }
}

/// Whether `text` is an RFC 9110 token (`tchar`s, at least one).
func isToken(_ text: String) -> Bool {
    let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
    return !text.isEmpty && text.utf8.allSatisfy { tchar.contains($0) }
}

/// A query as a server reads it (`application/x-www-form-urlencoded`): pairs split at `&`, name and value at the
/// first `=`, `+` read as a space, `%XX` decoded, a malformed `%` kept as it is.
func formDecoded(_ query: String) -> [FormPair] {
    query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return FormPair(
            name: formDecoded(component: parts[0]), value: parts.count > 1 ? formDecoded(component: parts[1]) : nil)
    }
}

struct FormPair: Equatable {
    var name: String
    var value: String?
}

private func formDecoded(component: Substring) -> String {
    var bytes: [UInt8] = []
    let raw = Array(component.utf8)
    var index = 0
    while index < raw.count {
        if raw[index] == UInt8(ascii: "%"), index + 2 < raw.count, let high = hexValue(raw[index + 1]),
            let low = hexValue(raw[index + 2])
        {
            bytes.append(high << 4 | low)
            index += 3
        } else {
            bytes.append(raw[index] == UInt8(ascii: "+") ? UInt8(ascii: " ") : raw[index])
            index += 1
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

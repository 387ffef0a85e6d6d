public import Foundation

/// A description of one HTTP request: method, URL, headers, body and typed options.
///
/// A request is a value. Loaders receive it, may change a copy (add a header, fill in the host) and pass
/// the copy on. The URL is kept as parts so that a request can be *relative*: a request with no host
/// gets its scheme, host, port and path prefix from the ``ServerEnvironment`` applied by
/// ``ApplyEnvironment``.
///
/// ```swift
/// var request = HTTPRequest(path: "/people/42")
/// request.headers["Accept"] = "application/json"
/// request.serverEnvironment = .staging   // just this request goes elsewhere
/// ```
///
/// Nothing is validated while you build a request. The terminal loader checks it before anything is sent
/// and fails with ``HTTPError/Code/invalidRequest`` and a message saying what is wrong; call
/// ``validate()`` to check it yourself.
public struct HTTPRequest: Sendable {
    /// The request's fields, in one ``CopyOnWriteBox`` shared by copies until one of them changes.
    @usableFromInline
    struct Fields: Sendable {
        var id: UUID
        var method: HTTPMethod
        var headers: HTTPHeaders
        var body: any HTTPBody
        /// The options set on this request, each boxed and keyed by its option type. A short array searched
        /// by identity is faster than a dictionary for the handful of options a request carries, and the
        /// box's type is known from the key, so reading an option needs no dynamic cast.
        @usableFromInline var options: [(key: ObjectIdentifier, box: any AnyObject & Sendable)] = []
        /// Set when the request was made from a URL that cannot be sent; such a request is never relative.
        var unusableURL: UnusableURL?
        var scheme: String
        var host: String?
        var port: Int?
        var percentEncodedPath = "/"
        var percentEncodedQuery: String?
        var fragment: String?

        init(id: UUID, method: HTTPMethod, headers: HTTPHeaders, body: any HTTPBody, scheme: String) {
            self.id = id
            self.method = method
            self.headers = headers
            self.body = body
            self.scheme = scheme
        }
    }

    /// Usable from inlinable code, as are ``Fields`` and `OptionBox`: the option subscript's getter reads them.
    @usableFromInline var storage: CopyOnWriteBox<Fields>

    /// The load's identity and observers, stamped by the observing loaders (HTTPRequest+Observation.swift). Beside
    /// the storage rather than in it: stamping a load then costs no copy of the storage (the caller keeps the
    /// request it passed), and every event reads it without going through the box.
    var observation: LoadObservation?

    /// The storage, copied first when another request shares it.
    private mutating func uniqueStorage() -> CopyOnWriteBox<Fields> {
        CopyOnWriteBox.unique(&storage)
    }

    /// Identifies this request; copies share it, so every attempt of a retried request has the same `id`.
    public var id: UUID { storage.value.id }

    /// Gives this copy the identifier of `other`, for a loader that answers a request with the result of an
    /// identical one (``Deduplicate``).
    mutating func adoptID(of other: HTTPRequest) {
        uniqueStorage().value.id = other.id
    }

    /// The request method. Defaults to `GET`.
    public var method: HTTPMethod {
        get { storage.value.method }
        set { uniqueStorage().value.method = newValue }
    }

    /// The header fields set on the request itself. The body's ``HTTPBody/additionalHeaders`` are added
    /// when the request is sent, unless a field with the same name is already here.
    public var headers: HTTPHeaders {
        get { storage.value.headers }
        _modify { yield &uniqueStorage().value.headers }
    }

    /// The request body. Defaults to ``EmptyBody``.
    public var body: any HTTPBody {
        get { storage.value.body }
        set { uniqueStorage().value.body = newValue }
    }

    /// A URL a request was made from that cannot be sent, and why.
    struct UnusableURL {
        /// The URL as text, for messages.
        var text: String
        /// Why it cannot be sent, as a phrase that follows the URL ("has no host").
        var problem: String
    }

    /// Set when the request was made from a URL that cannot be sent: unparsable, hostless, or with a scheme
    /// other than `http` or `https`. Such a request fails validation and is never treated as relative.
    var unusableURL: UnusableURL? { storage.value.unusableURL }

    /// Creates a request from its parts.
    ///
    /// - Parameters:
    ///   - method: The method; `GET` by default.
    ///   - scheme: The URL scheme; `https` by default.
    ///   - host: The host, or `nil` for a request relative to the server environment.
    ///   - port: An explicit port, or `nil` for the scheme's default.
    ///   - path: The path, unencoded (`"/people/Zoë"`); it must start with `/` when it is not empty.
    ///   - query: Query items, unencoded.
    ///   - headers: Header fields.
    ///   - body: The body.
    public init(
        method: HTTPMethod = .get,
        scheme: String = "https",
        host: String? = nil,
        port: Int? = nil,
        path: String = "/",
        query: [URLQueryItem] = [],
        headers: HTTPHeaders = [:],
        body: any HTTPBody = EmptyBody()
    ) {
        var fields = Fields(id: UUID(), method: method, headers: headers, body: body, scheme: scheme)
        fields.host = host?.isEmpty == true ? nil : host
        fields.port = port
        fields.percentEncodedPath = Self.encodePath(path)
        fields.percentEncodedQuery = Self.encodeQuery(query)
        storage = CopyOnWriteBox(fields)
    }

    /// Creates a request for a URL.
    ///
    /// An absolute URL (one with a scheme) is sent where it says, never elsewhere: a URL that cannot be sent —
    /// one that `URLComponents` cannot take apart, one without a host, or one whose scheme is not `http` or
    /// `https` (`file:`, `data:`, `javascript:`, `mailto:`) — does not trap, and is not filled in by
    /// ``ApplyEnvironment`` either: sending it fails with ``HTTPError/Code/invalidRequest`` naming that URL and
    /// what is wrong with it. A URL without a scheme or host (`/people/42`) is a relative request, as one made
    /// with ``init(method:scheme:host:port:path:query:headers:body:)`` without a host.
    public init(method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: any HTTPBody = EmptyBody()) {
        self.init(method: method, headers: headers, body: body)
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            storage.value.unusableURL = UnusableURL(text: url.absoluteString, problem: "could not be parsed")
            return
        }
        // URL reads a scheme where URLComponents may not: an empty one (`://a.b/x`, scheme "" and host "a.b" to
        // URL, a path to URLComponents). Such a URL is absolute all the same, so it is never made relative.
        let givenScheme = components.scheme ?? url.scheme
        scheme = givenScheme.flatMap { $0.isEmpty ? nil : $0 } ?? "https"
        // URLComponents has no host for some names URL itself reads (a label starting "xn--" that is not valid
        // Punycode): such a URL is still absolute, and goes to that host.
        host = (components.host ?? (givenScheme != nil ? url.host : nil)).map(HostName.bracketingIPv6)
        port = components.port
        percentEncodedPath = components.percentEncodedPath
        percentEncodedQuery = components.percentEncodedQuery
        fragment = components.fragment
        guard let givenScheme else { return }
        let lowercased = givenScheme.lowercased()
        if givenScheme.isEmpty {
            storage.value.unusableURL = UnusableURL(text: url.absoluteString, problem: "has an empty scheme")
        } else if lowercased != "http" && lowercased != "https" {
            storage.value.unusableURL = UnusableURL(
                text: url.absoluteString,
                problem: "has the scheme '\(givenScheme)', which is not supported; only http and https URLs can be sent"
            )
        } else if host == nil {
            storage.value.unusableURL = UnusableURL(text: url.absoluteString, problem: "has no host")
        }
    }

    /// The URL scheme, for example `"https"`.
    public var scheme: String {
        get { storage.value.scheme }
        set { uniqueStorage().value.scheme = newValue }
    }

    /// The host, or `nil` when the request is relative to its server environment.
    public var host: String? {
        get { storage.value.host }
        set { uniqueStorage().value.host = newValue?.isEmpty == true ? nil : newValue }
    }

    /// Sets scheme, host and port at once (one uniqueness check instead of three).
    mutating func setOrigin(scheme: String, host: String?, port: Int?) {
        let storage = uniqueStorage()
        storage.value.scheme = scheme
        storage.value.host = host?.isEmpty == true ? nil : host
        storage.value.port = port
    }

    /// An explicit port, or `nil` for the scheme's default. A port outside `0...65535` fails validation.
    public var port: Int? {
        get { storage.value.port }
        set { uniqueStorage().value.port = newValue }
    }

    /// The path exactly as it is sent, percent-encoded.
    ///
    /// Use it when a path segment contains an encoded `/` (`%2F`) that must stay encoded.
    public var percentEncodedPath: String {
        get { storage.value.percentEncodedPath }
        set { uniqueStorage().value.percentEncodedPath = newValue }
    }

    /// The path, unencoded. Must start with `/` unless it is empty.
    public var path: String {
        get { PercentEncoding.decode(percentEncodedPath) ?? percentEncodedPath }
        set { percentEncodedPath = Self.encodePath(newValue) }
    }

    /// The query items, unencoded, in order. Empty when the URL has no query.
    ///
    /// Items you set are encoded strictly: everything but unreserved characters is percent-encoded, `+` and
    /// `&` included, so a value reads back the same whatever form-decoding the server applies. A query that
    /// came with a URL is kept exactly as it was written until you set this property.
    public var query: [URLQueryItem] {
        get {
            guard let percentEncodedQuery else { return [] }
            return percentEncodedQuery.split(separator: "&", omittingEmptySubsequences: false).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0])
                let value = parts.count > 1 ? String(parts[1]) : nil
                return URLQueryItem(
                    name: PercentEncoding.decode(name) ?? name,
                    value: value.map { PercentEncoding.decode($0) ?? $0 }
                )
            }
        }
        set { percentEncodedQuery = Self.encodeQuery(newValue) }
    }

    /// The query exactly as it is sent, percent-encoded, or `nil` when there is none.
    public var percentEncodedQuery: String? {
        get { storage.value.percentEncodedQuery }
        set { uniqueStorage().value.percentEncodedQuery = newValue }
    }

    /// The fragment, if any. It is never sent to the server; it is kept so a URL survives a round trip.
    public var fragment: String? {
        get { storage.value.fragment }
        set { uniqueStorage().value.fragment = newValue }
    }

    /// The full URL, or `nil` when the parts do not form one (for example, no host, or a path without a
    /// leading `/`). ``validate()`` says which part is wrong.
    public var url: URL? {
        try? validatedURL()
    }

    static func encodePath(_ path: String) -> String {
        PercentEncoding.encode(path, allowing: PercentEncoding.pathAllowed)
    }

    static func encodeQuery(_ items: [URLQueryItem]) -> String? {
        guard !items.isEmpty else { return nil }
        return items.map { item in
            let name = PercentEncoding.encode(item.name, allowing: PercentEncoding.queryAllowed)
            guard let value = item.value else { return name }
            return name + "=" + PercentEncoding.encode(value, allowing: PercentEncoding.queryAllowed)
        }.joined(separator: "&")
    }

    /// The value of a header field, ignoring case; setting `nil` removes it.
    public subscript(header name: String) -> String? {
        get { headers[name] }
        set { headers[name] = newValue }
    }

    /// The value of a typed option, or its ``HTTPRequestOption/defaultOptionValue`` when it was never set.
    public subscript<Option: HTTPRequestOption>(option option: Option.Type) -> Option.Value {
        // Inlinable, so that a loader in another module (HTTPAuth's, an app's) reads an option through code
        // specialized for it, not the generic getter's run-time metadata lookup; guarded by BudgetReport's
        // cold-cache section (see Benchmarks/README.md).
        @inlinable get {
            let key = ObjectIdentifier(option)
            for entry in storage.value.options where entry.key == key {
                // Entries are keyed by the option's type, so this one's box is always an `OptionBox<Option.Value>`.
                return unsafeDowncast(entry.box, to: OptionBox<Option.Value>.self).value
            }
            return Option.defaultOptionValue
        }
        set { setOption(OptionBox(newValue), forKey: ObjectIdentifier(option)) }
    }

    /// Stores an option's box under its key: the option setter's one copy for every option type, which only boxes
    /// the value.
    @inline(never)
    private mutating func setOption(_ box: any AnyObject & Sendable, forKey key: ObjectIdentifier) {
        let storage = uniqueStorage()
        if let index = storage.value.options.firstIndex(where: { $0.key == key }) {
            storage.value.options[index].box = box
        } else {
            storage.value.options.append((key, box))
        }
    }
}

/// The value of one request option, in a box whose type the option's key determines.
@usableFromInline
final class OptionBox<Value: Sendable>: Sendable {
    @usableFromInline let value: Value
    @usableFromInline init(_ value: Value) { self.value = value }
}

extension HTTPRequest: CustomStringConvertible {
    /// `"GET https://example.com/path"`; the URL is rendered from the parts even when incomplete, with the values
    /// of secret query items hidden (``Redaction/standard``).
    public var description: String {
        "\(method) \(displayURL)"
    }

    /// The URL as text for messages and logs, even when the request is still relative or invalid, with the values
    /// ``Redaction/standard`` hides replaced.
    var displayURL: String { displayURL(redaction: .standard) }
}

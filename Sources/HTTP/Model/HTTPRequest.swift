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
    /// Identifies this request; copies share it, so every attempt of a retried request has the same `id`.
    public let id: UUID

    /// The request method. Defaults to `GET`.
    public var method: HTTPMethod

    /// The header fields set on the request itself. The body's ``HTTPBody/additionalHeaders`` are added
    /// when the request is sent, unless a field with the same name is already here.
    public var headers: HTTPHeaders

    /// The request body. Defaults to ``EmptyBody``.
    public var body: any HTTPBody

    private var components: URLComponents
    private var options: [ObjectIdentifier: any Sendable] = [:]
    /// Set when the request was made from a URL that `URLComponents` could not parse.
    private(set) var unparsableURL: String?

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
        self.id = UUID()
        self.method = method
        self.headers = headers
        self.body = body
        self.components = URLComponents()
        self.components.scheme = scheme
        self.components.host = host
        self.port = port
        self.components.path = path
        if !query.isEmpty { self.components.queryItems = query }
    }

    /// Creates a request for an absolute URL.
    ///
    /// A URL that `URLComponents` cannot take apart does not trap: the request remembers it, and sending
    /// it fails with ``HTTPError/Code/invalidRequest`` naming that URL.
    public init(method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: any HTTPBody = EmptyBody()) {
        self.init(method: method, headers: headers, body: body)
        if var parsed = URLComponents(url: url, resolvingAgainstBaseURL: true) {
            port = parsed.port
            parsed.port = nil
            components = parsed
        } else {
            components = URLComponents()
            unparsableURL = url.absoluteString
        }
    }

    /// The URL scheme, for example `"https"`.
    public var scheme: String {
        get { components.scheme ?? "https" }
        set { components.scheme = newValue }
    }

    /// The host, or `nil` when the request is relative to its server environment.
    public var host: String? {
        get {
            guard let host = components.host, !host.isEmpty else { return nil }
            return host
        }
        set { components.host = newValue }
    }

    /// An explicit port, or `nil` for the scheme's default. A port outside `0...65535` fails validation.
    ///
    /// Kept apart from the URL components, which trap on a negative port on some platforms.
    public var port: Int?

    /// The path, unencoded. Must start with `/` unless it is empty.
    public var path: String {
        get { components.path }
        set { components.path = newValue }
    }

    /// The query items, unencoded, in order. Empty when the URL has no query.
    public var query: [URLQueryItem] {
        get { components.queryItems ?? [] }
        set { components.queryItems = newValue.isEmpty ? nil : newValue }
    }

    /// The fragment, if any. It is never sent to the server; it is kept so a URL survives a round trip.
    public var fragment: String? {
        get { components.fragment }
        set { components.fragment = newValue }
    }

    /// The full URL, or `nil` when the parts do not form one (for example, no host, or a path without a
    /// leading `/`). ``validate()`` says which part is wrong.
    public var url: URL? {
        guard unparsableURL == nil, host != nil else { return nil }
        return urlComponents.url
    }

    /// The URL parts with the port applied, when it is a valid one.
    var urlComponents: URLComponents {
        guard let port, (0...65535).contains(port) else { return components }
        var complete = components
        complete.port = port
        return complete
    }

    /// The value of a header field, ignoring case; setting `nil` removes it.
    public subscript(header name: String) -> String? {
        get { headers[name] }
        set { headers[name] = newValue }
    }

    /// The value of a typed option, or its ``HTTPRequestOption/defaultOptionValue`` when it was never set.
    public subscript<Option: HTTPRequestOption>(option option: Option.Type) -> Option.Value {
        get {
            guard let value = options[ObjectIdentifier(option)] else { return Option.defaultOptionValue }
            // The dictionary is keyed by the option's type, so the stored value is always an `Option.Value`.
            return value as! Option.Value
        }
        set {
            options[ObjectIdentifier(option)] = newValue
        }
    }
}

extension HTTPRequest: CustomStringConvertible {
    /// `"GET https://example.com/path"`; the URL is rendered from the parts even when incomplete.
    public var description: String {
        "\(method) \(displayURL)"
    }

    /// The URL as text for messages and logs, even when the request is still relative.
    var displayURL: String {
        if let unparsableURL { return unparsableURL }
        if let url { return url.absoluteString }
        var rendered = urlComponents
        if host == nil { rendered.scheme = nil }
        return rendered.string ?? path
    }
}

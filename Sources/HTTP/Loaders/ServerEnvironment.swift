public import Foundation

/// Where relative requests go: scheme, host, port and path prefix, plus header fields and query items
/// every request to that server carries.
///
/// Define one per deployment and let ``ApplyEnvironment`` fill them into requests that name no host:
///
/// ```swift
/// extension ServerEnvironment {
///     static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
///     static let staging = ServerEnvironment(host: "staging.example.com", pathPrefix: "/v1",
///                                            headers: ["X-Debug": "1"])
/// }
/// ```
///
/// A single request can target another environment through the request option:
/// `request.serverEnvironment = .staging`.
public struct ServerEnvironment: Sendable {
    /// The URL scheme, `https` by default.
    public var scheme: String
    /// The host name.
    public var host: String
    /// An explicit port, or `nil` for the scheme's default.
    public var port: Int?
    /// A path every request's path is appended to, such as `/api/v2`.
    public var pathPrefix: String
    /// Header fields added to each request that does not set them itself.
    public var headers: HTTPHeaders
    /// Query items appended to each request's own.
    public var query: [URLQueryItem]

    public init(
        scheme: String = "https",
        host: String,
        port: Int? = nil,
        pathPrefix: String = "/",
        headers: HTTPHeaders = [:],
        query: [URLQueryItem] = []
    ) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathPrefix = pathPrefix
        self.headers = headers
        self.query = query
    }

    /// Creates an environment from a base URL such as `https://api.example.com:8443/v1`;
    /// `nil` when the URL has no host.
    public init?(baseURL: URL, headers: HTTPHeaders = [:]) {
        guard let components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
            let host = components.host, !host.isEmpty
        else { return nil }
        self.init(
            scheme: components.scheme ?? "https",
            host: HostName.bracketingIPv6(host),
            port: components.port,
            pathPrefix: components.path.isEmpty ? "/" : components.path,
            headers: headers,
            query: components.queryItems ?? []
        )
    }

    /// `request` as it is sent to this environment: scheme, host and port filled in, the prefix put in front
    /// of the path, the environment's header fields added where the request does not set them, and its
    /// query items appended. A request made from a URL that cannot be sent is returned unchanged: it is not
    /// relative, and fails validation wherever it goes.
    public func apply(to request: HTTPRequest) -> HTTPRequest {
        guard request.unusableURL == nil else { return request }
        var copy = request
        copy.setOrigin(scheme: scheme, host: host, port: port)
        if pathPrefix.isEmpty || pathPrefix == "/" {
            // What `join` gives for an empty prefix, without building strings in the common case.
            if !request.percentEncodedPath.hasPrefix("/") { copy.percentEncodedPath = "/" + request.percentEncodedPath }
        } else {
            copy.percentEncodedPath = Self.join(HTTPRequest.encodePath(pathPrefix), request.percentEncodedPath)
        }
        if !headers.isEmpty {
            for field in headers where !request.headers.contains(field.name) {
                copy.headers.add(field.value, for: field.name)
            }
        }
        if !query.isEmpty, let environmentQuery = HTTPRequest.encodeQuery(query) {
            // Appended to the request's query as it is written, never decoded and encoded again.
            copy.percentEncodedQuery =
                request.percentEncodedQuery.map { $0 + "&" + environmentQuery } ?? environmentQuery
        }
        return copy
    }

    /// `scheme://host[:port]/prefix`, for descriptions.
    var baseURLText: String {
        var text = "\(scheme)://\(host)"
        if let port { text += ":\(port)" }
        return text + (pathPrefix.hasPrefix("/") ? pathPrefix : "/" + pathPrefix)
    }

    /// Joins a prefix and a path with exactly one `/` between them.
    static func join(_ prefix: String, _ path: String) -> String {
        let trimmedPrefix = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        let head = trimmedPrefix.isEmpty || trimmedPrefix.hasPrefix("/") ? trimmedPrefix : "/" + trimmedPrefix
        if path.isEmpty { return head.isEmpty ? "/" : head }
        return head + (path.hasPrefix("/") ? path : "/" + path)
    }
}

extension ServerEnvironment: HTTPRequestOption {
    /// No per-request environment: the loader's own applies.
    public static let defaultOptionValue: ServerEnvironment? = nil
}

extension HTTPRequest {
    /// The environment this request targets instead of the chain's, or `nil` to use the chain's.
    public var serverEnvironment: ServerEnvironment? {
        get { self[option: ServerEnvironment.self] }
        set { self[option: ServerEnvironment.self] = newValue }
    }
}

public import Foundation
public import HTTP

/// A request built the way an app builds one: a start, then any number of changes to any settable part, each
/// readable from a fuzzer input and printable as the Swift statement it stands for.
public struct RequestProgram {
    public enum Start {
        /// `HTTPRequest()`.
        case plain
        /// `HTTPRequest(method:scheme:host:port:path:query:)`.
        case parts(method: String, scheme: String, host: String?, port: Int?, path: String, query: [URLQueryItem])
        /// `HTTPRequest(url:)` with `URL(string:)` of this text, or `HTTPRequest()` when that is `nil`.
        case url(String)
    }

    public enum Step {
        case method(String)
        case scheme(String)
        case host(String?)
        case port(Int?)
        case path(String)
        case percentEncodedPath(String)
        case query([URLQueryItem])
        case percentEncodedQuery(String?)
        case fragment(String?)
        case setHeader(name: String, value: String?)
        case addHeader(name: String, value: String)
        case removeHeader(String)
        case body(BodySpec)
        /// `request = ServerEnvironment(…).apply(to: request)`.
        case environment(EnvironmentSpec)
        /// `request = ServerEnvironment(baseURL:headers:)?.apply(to: request)` when the URL parses.
        case environmentFromURL(String, headers: [(name: String, value: String)])
    }

    public var start: Start
    public var steps: [Step]

    public init(start: Start, steps: [Step]) {
        self.start = start
        self.steps = steps
    }

    /// The request the program builds.
    public func build() -> HTTPRequest {
        var request: HTTPRequest
        switch start {
        case .plain:
            request = HTTPRequest()
        case .parts(let method, let scheme, let host, let port, let path, let query):
            request = HTTPRequest(
                method: HTTPMethod(rawValue: method), scheme: scheme, host: host, port: port, path: path, query: query)
        case .url(let text):
            request = URL(string: text).map { HTTPRequest(url: $0) } ?? HTTPRequest()
        }
        for step in steps {
            switch step {
            case .method(let method): request.method = HTTPMethod(rawValue: method)
            case .scheme(let scheme): request.scheme = scheme
            case .host(let host): request.host = host
            case .port(let port): request.port = port
            case .path(let path): request.path = path
            case .percentEncodedPath(let path): request.percentEncodedPath = path
            case .query(let items): request.query = items
            case .percentEncodedQuery(let query): request.percentEncodedQuery = query
            case .fragment(let fragment): request.fragment = fragment
            case .setHeader(let name, let value): request.headers[name] = value
            case .addHeader(let name, let value): request.headers.add(value, for: name)
            case .removeHeader(let name): request.headers.remove(name)
            case .body(let body): request.body = body.build()
            case .environment(let environment): request = environment.build().apply(to: request)
            case .environmentFromURL(let text, let fields):
                if let url = URL(string: text),
                    let environment = ServerEnvironment(baseURL: url, headers: makeHeaders(fields))
                {
                    request = environment.apply(to: request)
                }
            }
        }
        return request
    }

    /// Swift statements that leave the same request in `var request`.
    public var swift: String {
        var lines: [String] = []
        switch start {
        case .plain:
            lines.append("var request = HTTPRequest()")
        case .parts(let method, let scheme, let host, let port, let path, let query):
            lines.append(
                "var request = HTTPRequest(method: HTTPMethod(rawValue: \(SwiftLiteral.string(method))), "
                    + "scheme: \(SwiftLiteral.string(scheme)), host: \(SwiftLiteral.optionalString(host)), "
                    + "port: \(SwiftLiteral.optionalInt(port)), path: \(SwiftLiteral.string(path)), "
                    + "query: \(SwiftLiteral.queryItems(query)))")
        case .url(let text):
            lines.append(
                URL(string: text) == nil
                    ? "var request = HTTPRequest()  // URL(string: \(SwiftLiteral.string(text))) is nil"
                    : "var request = HTTPRequest(url: URL(string: \(SwiftLiteral.string(text)))!)")
        }
        for step in steps {
            switch step {
            case .method(let method):
                lines.append("request.method = HTTPMethod(rawValue: \(SwiftLiteral.string(method)))")
            case .scheme(let scheme): lines.append("request.scheme = \(SwiftLiteral.string(scheme))")
            case .host(let host): lines.append("request.host = \(SwiftLiteral.optionalString(host))")
            case .port(let port): lines.append("request.port = \(SwiftLiteral.optionalInt(port))")
            case .path(let path): lines.append("request.path = \(SwiftLiteral.string(path))")
            case .percentEncodedPath(let path):
                lines.append("request.percentEncodedPath = \(SwiftLiteral.string(path))")
            case .query(let items): lines.append("request.query = \(SwiftLiteral.queryItems(items))")
            case .percentEncodedQuery(let query):
                lines.append("request.percentEncodedQuery = \(SwiftLiteral.optionalString(query))")
            case .fragment(let fragment): lines.append("request.fragment = \(SwiftLiteral.optionalString(fragment))")
            case .setHeader(let name, let value):
                lines.append("request.headers[\(SwiftLiteral.string(name))] = \(SwiftLiteral.optionalString(value))")
            case .addHeader(let name, let value):
                lines.append("request.headers.add(\(SwiftLiteral.string(value)), for: \(SwiftLiteral.string(name)))")
            case .removeHeader(let name): lines.append("request.headers.remove(\(SwiftLiteral.string(name)))")
            case .body(let body): lines.append("request.body = \(body.swift)")
            case .environment(let environment): lines.append("request = \(environment.swift).apply(to: request)")
            case .environmentFromURL(let text, let fields):
                lines.append(
                    "if let environment = ServerEnvironment(baseURL: URL(string: \(SwiftLiteral.string(text)))!, "
                        + "headers: \(SwiftLiteral.fields(fields))) { request = environment.apply(to: request) }")
            }
        }
        return lines.joined(separator: "\n")
    }
}

// MARK: - Reading and writing

extension RequestProgram {
    /// The most steps a program has: enough to set every part once or twice.
    public static let maximumStepCount = 12

    public static func read(_ input: inout FuzzInput) -> RequestProgram {
        let start: Start
        switch input.choice(3) {
        case 0: start = .plain
        case 1:
            start = .parts(
                method: input.string(), scheme: input.string(), host: input.optionalString(), port: readPort(&input),
                path: input.string(), query: readQuery(&input))
        default: start = .url(input.string())
        }
        let steps = (0..<input.count(upTo: maximumStepCount)).map { _ in readStep(&input) }
        return RequestProgram(start: start, steps: steps)
    }

    public func write(_ writer: inout SeedWriter) {
        switch start {
        case .plain:
            writer.choice(0, of: 3)
        case .parts(let method, let scheme, let host, let port, let path, let query):
            writer.choice(1, of: 3)
            writer.string(method)
            writer.string(scheme)
            writer.optionalString(host)
            Self.writePort(port, &writer)
            writer.string(path)
            Self.writeQuery(query, &writer)
        case .url(let text):
            writer.choice(2, of: 3)
            writer.string(text)
        }
        writer.count(steps.count, upTo: Self.maximumStepCount)
        for step in steps { Self.writeStep(step, &writer) }
    }

    private static let stepKinds = 15

    private static func readStep(_ input: inout FuzzInput) -> Step {
        switch input.choice(stepKinds) {
        case 0: .method(input.string())
        case 1: .scheme(input.string())
        case 2: .host(input.optionalString())
        case 3: .port(readPort(&input))
        case 4: .path(input.string())
        case 5: .percentEncodedPath(input.string())
        case 6: .query(readQuery(&input))
        case 7: .percentEncodedQuery(input.optionalString())
        case 8: .fragment(input.optionalString())
        case 9: .setHeader(name: input.string(), value: input.optionalString())
        case 10: .addHeader(name: input.string(), value: input.string())
        case 11: .removeHeader(input.string())
        case 12: .body(BodySpec.read(&input))
        case 13: .environment(EnvironmentSpec.read(&input))
        default: .environmentFromURL(input.string(), headers: readFields(&input))
        }
    }

    private static func writeStep(_ step: Step, _ writer: inout SeedWriter) {
        switch step {
        case .method(let method):
            writer.choice(0, of: stepKinds)
            writer.string(method)
        case .scheme(let scheme):
            writer.choice(1, of: stepKinds)
            writer.string(scheme)
        case .host(let host):
            writer.choice(2, of: stepKinds)
            writer.optionalString(host)
        case .port(let port):
            writer.choice(3, of: stepKinds)
            writePort(port, &writer)
        case .path(let path):
            writer.choice(4, of: stepKinds)
            writer.string(path)
        case .percentEncodedPath(let path):
            writer.choice(5, of: stepKinds)
            writer.string(path)
        case .query(let items):
            writer.choice(6, of: stepKinds)
            writeQuery(items, &writer)
        case .percentEncodedQuery(let query):
            writer.choice(7, of: stepKinds)
            writer.optionalString(query)
        case .fragment(let fragment):
            writer.choice(8, of: stepKinds)
            writer.optionalString(fragment)
        case .setHeader(let name, let value):
            writer.choice(9, of: stepKinds)
            writer.string(name)
            writer.optionalString(value)
        case .addHeader(let name, let value):
            writer.choice(10, of: stepKinds)
            writer.string(name)
            writer.string(value)
        case .removeHeader(let name):
            writer.choice(11, of: stepKinds)
            writer.string(name)
        case .body(let body):
            writer.choice(12, of: stepKinds)
            body.write(&writer)
        case .environment(let environment):
            writer.choice(13, of: stepKinds)
            environment.write(&writer)
        case .environmentFromURL(let text, let fields):
            writer.choice(14, of: stepKinds)
            writer.string(text)
            writeFields(fields, &writer)
        }
    }

    static func readPort(_ input: inout FuzzInput) -> Int? {
        input.bool() ? nil : input.int()
    }

    static func writePort(_ port: Int?, _ writer: inout SeedWriter) {
        writer.bool(port == nil)
        if let port { writer.int(port) }
    }

    public static func readQuery(_ input: inout FuzzInput) -> [URLQueryItem] {
        (0..<input.count(upTo: 4)).map { _ in URLQueryItem(name: input.string(), value: input.optionalString()) }
    }

    public static func writeQuery(_ items: [URLQueryItem], _ writer: inout SeedWriter) {
        writer.count(items.count, upTo: 4)
        for item in items {
            writer.string(item.name)
            writer.optionalString(item.value)
        }
    }

    public static func readFields(_ input: inout FuzzInput, upTo maximum: Int = 4) -> [(name: String, value: String)] {
        (0..<input.count(upTo: maximum)).map { _ in (input.string(), input.string()) }
    }

    public static func writeFields(
        _ fields: [(name: String, value: String)], _ writer: inout SeedWriter, upTo maximum: Int = 4
    ) {
        writer.count(fields.count, upTo: maximum)
        for field in fields {
            writer.string(field.name)
            writer.string(field.value)
        }
    }
}

/// A ``ServerEnvironment`` made of fuzzed parts.
public struct EnvironmentSpec {
    public var scheme: String
    public var host: String
    public var port: Int?
    public var pathPrefix: String
    public var headers: [(name: String, value: String)]
    public var query: [URLQueryItem]

    public init(
        scheme: String = "https", host: String, port: Int? = nil, pathPrefix: String = "/",
        headers: [(name: String, value: String)] = [], query: [URLQueryItem] = []
    ) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathPrefix = pathPrefix
        self.headers = headers
        self.query = query
    }

    public func build() -> ServerEnvironment {
        ServerEnvironment(
            scheme: scheme, host: host, port: port, pathPrefix: pathPrefix,
            headers: makeHeaders(headers), query: query)
    }

    public var swift: String {
        "ServerEnvironment(scheme: \(SwiftLiteral.string(scheme)), host: \(SwiftLiteral.string(host)), "
            + "port: \(SwiftLiteral.optionalInt(port)), pathPrefix: \(SwiftLiteral.string(pathPrefix)), "
            + "headers: \(SwiftLiteral.fields(headers)), query: \(SwiftLiteral.queryItems(query)))"
    }

    public static func read(_ input: inout FuzzInput) -> EnvironmentSpec {
        EnvironmentSpec(
            scheme: input.string(), host: input.string(), port: RequestProgram.readPort(&input),
            pathPrefix: input.string(), headers: RequestProgram.readFields(&input),
            query: RequestProgram.readQuery(&input))
    }

    public func write(_ writer: inout SeedWriter) {
        writer.string(scheme)
        writer.string(host)
        RequestProgram.writePort(port, &writer)
        writer.string(pathPrefix)
        RequestProgram.writeFields(headers, &writer)
        RequestProgram.writeQuery(query, &writer)
    }
}

/// Header fields from name/value pairs, in order.
public func makeHeaders(_ fields: [(name: String, value: String)]) -> HTTPHeaders {
    HTTPHeaders(fields.map { HTTPHeaders.Field(name: $0.name, value: $0.value) })
}

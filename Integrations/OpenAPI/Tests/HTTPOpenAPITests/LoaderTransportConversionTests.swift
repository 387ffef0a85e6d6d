import Foundation
import HTTP
import HTTPOpenAPI
import HTTPTypes
import OpenAPIRuntime
import Testing

/// How `LoaderTransport` turns a server URL and an operation's request into the chain's request: the server URL is
/// taken apart once per transport, not per request, and the result is the request that taking the joined URL apart
/// would make.
@Suite(.timeLimit(.minutes(1)))
struct LoaderTransportConversionTests {
    /// The request the chain gets for `target` (path and query) at `serverURL`, built the way the transport did before
    /// it kept server URLs taken apart: the server URL parsed per request, the path appended, the query replaced.
    static func expectedRequest(serverURL: URL, target: String) -> HTTP.HTTPRequest {
        var request = HTTP.HTTPRequest(url: serverURL)
        let queryStart = target.firstIndex(of: "?")
        let path = String(target[..<(queryStart ?? target.endIndex)])
        var basePath = request.percentEncodedPath
        if basePath.hasSuffix("/"), path.hasPrefix("/") { basePath.removeLast() }
        request.percentEncodedPath = basePath + path
        request.percentEncodedQuery = queryStart.map { String(target[target.index(after: $0)...]) }
        request.fragment = nil
        return request
    }

    static func send(
        _ transport: LoaderTransport, target: String, to serverURL: URL, method: HTTPTypes.HTTPRequest.Method = .get
    ) async throws {
        let request = HTTPTypes.HTTPRequest(method: method, scheme: nil, authority: nil, path: target)
        _ = try await withDeadline {
            try await transport.send(request, body: nil, baseURL: serverURL, operationID: "op")
        }
    }

    /// The URL parts of `request`, as the chain reads them.
    static func parts(_ request: HTTP.HTTPRequest) -> [String?] {
        [
            request.scheme, request.host, request.port.map(String.init), request.percentEncodedPath,
            request.percentEncodedQuery, request.fragment, request.url?.absoluteString,
            (try? request.validatedURLForSending())?.absoluteString,
        ]
    }

    @Test func randomServerURLsAndTargetsMakeTheRequestsTheirJoinedURLWouldMake() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("LoaderTransportConversionTests seed: \(seed)")
        var random = SplitMix64(seed: seed)
        let schemes = ["https", "http", "HTTPS"]
        let hosts = ["api.example.com", "127.0.0.1", "[::1]", "xn--bcher-kva.example", "localhost"]
        let ports = [nil, 80, 443, 8080, 65535]
        let basePaths = ["", "/", "/v1", "/v1/", "/a%20b/c", "/%E2%82%AC/"]
        let baseQueries = ["", "?old=1", "#frag", "?q=1#f"]
        let targets = [
            "/get", "/people/42", "/a%2Fb", "/search?q=Zo%C3%AB&x=1", "/?", "/x?a=1&a=2", "", "?only=query",
            "/%7Euser/%20",
        ]
        var serverURLs: [URL] = ["/", "/v2", "v2/"].compactMap(URL.init(string:))
        for _ in 0..<40 {
            let port = ports.randomElement(using: &random)!.map { ":\($0)" } ?? ""
            let text =
                "\(schemes.randomElement(using: &random)!)://\(hosts.randomElement(using: &random)!)\(port)"
                + basePaths.randomElement(using: &random)! + baseQueries.randomElement(using: &random)!
            serverURLs.append(try #require(URL(string: text), "\(text), seed \(seed)"))
        }
        let mock = MockLoader()
        let transport = LoaderTransport(loader: mock)
        var expected: [HTTP.HTTPRequest] = []
        // Runs of requests to one server URL, then another: the transport keeps the first one taken apart, and takes
        // the others apart per request; either way the request is the same.
        for _ in 0..<200 {
            let serverURL = serverURLs.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let target = targets.randomElement(using: &random)!
                mock.then(status: .ok)
                try await Self.send(transport, target: target, to: serverURL)
                expected.append(Self.expectedRequest(serverURL: serverURL, target: target))
            }
        }

        let sent = mock.receivedRequests
        try #require(sent.count == expected.count, "seed \(seed)")
        for (request, reference) in zip(sent, expected) {
            #expect(Self.parts(request) == Self.parts(reference), "seed \(seed): \(reference)")
            #expect(request.openAPIOperationID == "op")
        }
        #expect(Set(sent.map(\.id)).count == sent.count, "each request is a value of its own")
    }

    @Test(arguments: ["ftp://files.example.com/pub", "https:///no-host", "mailto:someone@example.com", "://a.b/x"])
    func aServerURLThatCannotBeSentFailsInTheTerminalNamingIt(text: String) async throws {
        let serverURL = try #require(URL(string: text))
        let terminal = ValidatingTerminal()
        let transport = LoaderTransport(loader: terminal)

        // Twice: the second request finds the server URL already taken apart.
        for _ in 0..<2 {
            let error = try await #require(throws: HTTPError.self) {
                try await Self.send(transport, target: "/get", to: serverURL)
            }
            let reference = Self.expectedRequest(serverURL: serverURL, target: "/get")
            #expect(error.code == .invalidRequest)
            #expect(error.message == Self.message(of: reference))
            #expect(error.message.contains(text))
        }
    }

    /// The message of the error `request` fails validation with; empty when it is valid.
    static func message(of request: HTTP.HTTPRequest) -> String {
        do {
            try request.validate()
            return ""
        } catch {
            return error.message
        }
    }
}

/// A terminal that validates each request as a transport does, and answers `200` to a valid one.
final class ValidatingTerminal: HTTPLoader, @unchecked Sendable {  // Sendable: no state
    override func load(_ request: HTTP.HTTPRequest) async -> HTTPResult {
        do {
            try request.validate()
        } catch {
            return .failure(error)
        }
        return .success(HTTP.HTTPResponse(request: request, status: .ok))
    }
}

import Foundation
import HTTP
import HTTPTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession through the real proxy `scripts/servers.sh` starts (tinyproxy, asking for credentials). On Linux
/// URLSession takes its proxy from the process environment, and tests share one process, so the load runs in a child
/// process of this test binary whose environment names the proxy; the proxy's log shows it went through.
@Suite(.noHang) struct URLSessionProxyIntegrationTests {
    static let environment = ProcessInfo.processInfo.environment
    /// Set in the child's environment: the tag of the request it sends.
    static let childTag = environment["HTTP_PROXY_CHILD_TAG"]
    static let proxy = environment["PROXY_AUTH_URL"].flatMap(URL.init(string:))
    static let proxyLog = environment["PROXY_AUTH_LOG"]
    static let username = environment["PROXY_AUTH_USERNAME"]
    static let password = environment["PROXY_AUTH_PASSWORD"]

    static var canRun: Bool {
        #if canImport(FoundationNetworking)
        childTag == nil && proxy != nil && proxyLog != nil && password != nil && TestServers.httpbin != nil
        #else
        false
        #endif
    }

    /// The child's part: one load with `ProxyConfiguration.environment`, which must go through the proxy with its
    /// credentials, and reach httpbin without them.
    @Test(.enabled(if: childTag != nil, "runs in the child process of theEnvironmentsProxyCarriesURLSessionsLoads"))
    func childLoadsThroughTheEnvironmentsProxy() async throws {
        let tag = try #require(Self.childTag)
        let httpbin = try #require(TestServers.httpbin)
        let loader = URLSessionLoader(proxy: .environment)
        let response = try await loader.load(HTTPRequest(url: httpbin.appending(path: "anything/\(tag)"))).get()
        #expect(response.status == .ok, "\(response)")
        struct Echo: Decodable { var headers: [String: String] }
        let headers = try JSONDecoder().decode(Echo.self, from: response.body).headers
        #expect(headers["Proxy-Authorization"] == nil, "the origin received \(headers)")
    }

    @Test(.enabled(if: canRun, "needs PROXY_AUTH_URL and HTTPBIN_URL, on Linux: run through scripts/test.sh"))
    func theEnvironmentsProxyCarriesURLSessionsLoads() async throws {
        let proxy = try #require(Self.proxy)
        let tag = "urlsession-\(UUID().uuidString)"
        var childEnvironment = Self.environment
        var components = try #require(URLComponents(url: proxy, resolvingAgainstBaseURL: false))
        components.user = Self.username
        components.password = Self.password
        childEnvironment["http_proxy"] = components.string
        childEnvironment["no_proxy"] = nil
        childEnvironment["NO_PROXY"] = nil
        childEnvironment["HTTP_PROXY_CHILD_TAG"] = tag

        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--testing-library", "swift-testing", "--filter", "childLoadsThroughTheEnvironmentsProxy"]
        process.environment = childEnvironment
        process.standardInput = FileHandle.nullDevice
        let outputFile = FileManager.default.temporaryDirectory.appending(path: "proxy-child-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let output = try FileHandle(forWritingTo: outputFile)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let finished = Box(false)
        process.terminationHandler = { _ in finished.withLock { $0 = true } }
        do {
            try await eventually(seconds: 120, "the child process is still running") {
                finished.value || !process.isRunning
            }
        } catch {
            process.terminate()
            throw error
        }
        try output.close()
        let printed = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "the child failed:\n\(printed)")
        let log = (try? String(contentsOfFile: try #require(Self.proxyLog), encoding: .utf8)) ?? ""
        #expect(log.contains("/anything/\(tag) HTTP/1.1"), "not in the proxy's log; the child printed:\n\(printed)")
        #expect(!printed.contains(try #require(Self.password)), "the child printed the proxy's password:\n\(printed)")
    }
}

import Foundation
import HTTP
import Synchronization
import Testing

/// A thread-safe box for test bookkeeping.
final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    @discardableResult
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
}

/// Collects the lines a ``PrintLoader`` writes.
final class LineSink: Sendable {
    private let lines = Locked<[String]>([])
    var all: [String] { lines.value }
    var write: @Sendable (String) -> Void { { [lines] line in lines.withLock { $0.append(line) } } }
}

/// Runs `body`, failing the test if it has not finished within `seconds`; returns its value, or nil on timeout.
func withDeadline<T: Sendable>(
    seconds: Double,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () async -> T
) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        if first == nil {
            Issue.record("did not finish within \(seconds) s", sourceLocation: sourceLocation)
        }
        return first
    }
}

extension HTTPResult {
    var response: HTTPResponse? { try? get() }
    var error: HTTPError? {
        if case .failure(let error) = self { error } else { nil }
    }
}

extension HTTPResponse {
    /// The body parsed as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }
}

/// A loader that counts resets and loads, and answers 200.
final class CountingLoader: HTTPLoader, @unchecked Sendable {
    let resets = Locked(0)
    let loads = Locked(0)
    override func load(_ request: HTTPRequest) async -> HTTPResult {
        loads.withLock { $0 += 1 }
        return .success(HTTPResponse(request: request))
    }
    override func reset() async {
        resets.withLock { $0 += 1 }
        await super.reset()
    }
}

/// The local servers started by `scripts/servers.sh`, handed over in environment variables.
enum TestServers {
    static let environment = ProcessInfo.processInfo.environment

    /// The local httpbin, e.g. `http://127.0.0.1:41234`.
    static let httpbin: URL? = environment["HTTPBIN_URL"].flatMap(URL.init(string:))

    /// Set by the test command: a missing server is then a failure, not a skip.
    static let areRequired = environment["HTTP_REQUIRE_SERVERS"] == "1"

    /// The httpbin environment, for `ApplyEnvironment` or a request's own `serverEnvironment`.
    static var httpbinEnvironment: ServerEnvironment? {
        httpbin.flatMap { ServerEnvironment(baseURL: $0) }
    }
}

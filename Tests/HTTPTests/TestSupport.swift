import Foundation
@_exported import HTTPTestSupport
import Testing

@testable import HTTP

/// The tests' bookkeeping box (from HTTPTestSupport), under the name these tests grew up with.
typealias Locked = Box

/// Collects the lines a ``PrintLoader`` writes.
final class LineSink: Sendable {
    private let lines = Locked<[String]>([])
    var all: [String] { lines.value }
    var write: @Sendable (String) -> Void { { [lines] line in lines.withLock { $0.append(line) } } }
}

extension HTTPResponse {
    /// The body parsed as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }
}

/// The local servers started by `scripts/servers.sh`, handed over in environment variables.
enum TestServers {
    static let environment = ProcessInfo.processInfo.environment

    /// The local httpbin, e.g. `http://127.0.0.1:41234`.
    static let httpbin: URL? = environment["HTTPBIN_URL"].flatMap(URL.init(string:))

    /// The local nginx, with `/limited` (rate-limited: 429 with `Retry-After: 1`) and `/person.json`.
    static let nginx: URL? = environment["NGINX_URL"].flatMap(URL.init(string:))

    /// The HTTPS server with a self-signed certificate for 127.0.0.1, e.g. `https://127.0.0.1:41235`.
    static let tlsSelfSigned: URL? = environment["TLS_SELF_SIGNED_URL"].flatMap(URL.init(string:))

    /// The HTTPS server whose certificate, issued by the test CA (``tlsCAFile``), expired a day ago.
    static let tlsExpired: URL? = environment["TLS_EXPIRED_URL"].flatMap(URL.init(string:))

    /// The HTTPS server whose certificate, issued by the test CA, is for `example.invalid` only.
    static let tlsWrongName: URL? = environment["TLS_WRONG_NAME_URL"].flatMap(URL.init(string:))

    /// The HTTPS server with a valid certificate for 127.0.0.1 issued by the test CA.
    static let tlsTrusted: URL? = environment["TLS_TRUSTED_URL"].flatMap(URL.init(string:))

    /// The test CA's certificate (PEM), which nothing trusts unless told to.
    static let tlsCAFile: URL? = environment["TLS_CA_FILE"].map { URL(fileURLWithPath: $0) }

    /// Set by `scripts/with-test-ca.sh`: the system's CA bundle, as this process sees it, holds ``tlsCAFile``.
    static let isTLSCATrusted = environment["TLS_CA_TRUSTED"] == "1"

    /// The download server (scripts/download-server.py): `/file/SIZE` with ETags, ranges, and connections cut off
    /// half-way on request.
    static let downloads: URL? = environment["DOWNLOADS_URL"].flatMap(URL.init(string:))

    /// The event-stream server (scripts/event-stream-server.py, sse-starlette under uvicorn): `/numbers?count=N` with
    /// ids, `retry`, connections ended after `close_after` events, and 204 once all are sent.
    static let eventStream: URL? = environment["EVENT_STREAM_URL"].flatMap(URL.init(string:))

    /// Set by the test command: a missing server is then a failure, not a skip.
    static let areRequired = environment["HTTP_REQUIRE_SERVERS"] == "1"

    /// The httpbin environment, for `ApplyEnvironment` or a request's own `serverEnvironment`.
    static var httpbinEnvironment: ServerEnvironment? {
        httpbin.flatMap { ServerEnvironment(baseURL: $0) }
    }
}

/// A terminal whose loads wait until the test releases them, recording arrival order and concurrency.
final class GateLoader: HTTPLoader, @unchecked Sendable {
    private struct State {
        var gates: [(id: UUID, path: String, continuation: CheckedContinuation<HTTPStatus?, Never>)] = []
        var arrivals: [String] = []
        var running = 0
        var maximumRunning = 0
        var resets = 0
    }

    private let state = Locked(State())

    /// Paths in the order their loads arrived.
    var arrivals: [String] { state.value.arrivals }
    /// Loads currently waiting at the gate.
    var running: Int { state.value.running }
    /// The most loads that were ever waiting at the gate at once.
    var maximumRunning: Int { state.value.maximumRunning }
    var resets: Int { state.value.resets }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        let id = UUID()
        let status = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    state.arrivals.append(request.path)
                    state.running += 1
                    state.maximumRunning = max(state.maximumRunning, state.running)
                    state.gates.append((id, request.path, continuation))
                }
                if Task.isCancelled { finish(id, with: nil) }
            }
        } onCancel: {
            finish(id, with: nil)
        }
        guard let status else { return .failure(HTTPError(.cancelled, request: request)) }
        return .success(HTTPResponse(request: request, status: status))
    }

    private func finish(_ id: UUID, with status: HTTPStatus?) {
        let gate = state.withLock { state -> CheckedContinuation<HTTPStatus?, Never>? in
            guard let index = state.gates.firstIndex(where: { $0.id == id }) else { return nil }
            state.running -= 1
            return state.gates.remove(at: index).continuation
        }
        gate?.resume(returning: status)
    }

    /// Lets the oldest waiting load complete with `status`.
    func releaseOldest(with status: HTTPStatus = .ok) {
        guard let id = state.withLock({ $0.gates.first?.id }) else { return }
        finish(id, with: status)
    }

    /// Lets the load for `path` complete with `status`.
    func release(path: String, with status: HTTPStatus = .ok) {
        guard let id = state.withLock({ $0.gates.first(where: { $0.path == path })?.id }) else { return }
        finish(id, with: status)
    }

    /// Lets loads through one at a time, each once it has arrived, until `isIdle` holds: for draining a loader
    /// above the gate (`isIdle`: nothing running or waiting there) without a loop that only yields, which would keep
    /// a cooperative thread busy and starve the tasks it waits for.
    func releaseOneAtATime(
        until isIdle: @escaping @Sendable () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        while !isIdle() {
            try await eventually("\(running) at the gate", sourceLocation: sourceLocation) {
                self.running > 0 || isIdle()
            }
            releaseOldest()
        }
    }

    /// Returns once `count` loads wait at the gate; the test fails and stops if that takes longer than the standard
    /// deadline.
    func waitForRunning(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await eventually("\(running) at the gate, arrived: \(arrivals)", sourceLocation: sourceLocation) {
            self.running >= count
        }
    }

    override func forgetState() async {
        state.withLock { $0.resets += 1 }
    }
}

/// A pass-through loader that records every attempt that goes through it, with the time it was sent.
final class AttemptRecorder: HTTPLoader, @unchecked Sendable {
    struct Attempt: Sendable {
        var request: HTTPRequest
        var sentAt: ContinuousClock.Instant
    }

    private let attempts = Locked<[Attempt]>([])
    var all: [Attempt] { attempts.value }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        attempts.withLock { $0.append(Attempt(request: request, sentAt: .now)) }
        return await super.load(request)
    }

    /// The attempts of one request, in order.
    func attempts(of id: UUID) -> [Attempt] { all.filter { $0.request.id == id } }
}

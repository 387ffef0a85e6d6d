import Foundation
import HTTP
import HTTPOpenAPI
import OpenAPIRuntime
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The local servers started by the product's `scripts/servers.sh`, handed over in environment variables.
enum TestServers {
    static let environment = ProcessInfo.processInfo.environment
    static let httpbin: URL? = environment["HTTPBIN_URL"].flatMap(URL.init(string:))
    /// oidc-provider-mock: `POST /oauth2/authorize` with `sub=<user>` logs in.
    static let oidcIssuer: URL? = environment["OIDC_ISSUER_URL"].flatMap(URL.init(string:))
    /// scripts/event-stream-server.py: `GET /numbers?count=N`, Server-Sent Events 1...N.
    static let eventStream: URL? = environment["EVENT_STREAM_URL"].flatMap(URL.init(string:))
    /// Set by the test command: a missing server is then a failure, not a skip.
    static let areRequired = environment["HTTP_REQUIRE_SERVERS"] == "1"
}

@Suite(.timeLimit(.minutes(1))) struct ServerPresenceTests {
    /// The test command sets HTTP_REQUIRE_SERVERS=1: then no suite may be skipped for want of a server.
    @Test func serversArePresentWhenRequired() {
        guard TestServers.areRequired else { return }
        #expect(TestServers.httpbin != nil, "HTTP_REQUIRE_SERVERS=1 but HTTPBIN_URL is not set")
        #expect(TestServers.oidcIssuer != nil, "HTTP_REQUIRE_SERVERS=1 but OIDC_ISSUER_URL is not set")
        #expect(TestServers.eventStream != nil, "HTTP_REQUIRE_SERVERS=1 but EVENT_STREAM_URL is not set")
    }
}

/// A value behind a lock, for the tests' own bookkeeping. The lock is a `pthread_mutex_t`, which ThreadSanitizer
/// understands: `Synchronization.Mutex` on Linux locks with futexes it cannot see, so every contended `Mutex` is
/// reported as a race (the product's `Locked` makes the same choice, and is `package`, out of this package's reach).
// Safety: `value` is read and written only between pthread_mutex_lock and pthread_mutex_unlock on `mutex`, which is
// allocated once and never moves.
final class Box<Value: Sendable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var storage: Value

    init(_ value: Value) {
        storage = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage)
    }
}

extension Box {
    /// A copy of the value.
    var value: Value { withLock { $0 } }
}

/// Counts the loads that pass it and the results that come back through it, passing everything on.
// Safety: its counts are in Boxes, behind locks.
final class CountingLoader: HTTPLoader, @unchecked Sendable {
    /// The requests that passed, in order.
    let requests = Box<[HTTPRequest]>([])
    /// The results that came back, in order.
    let results = Box<[HTTPResult]>([])

    var loadCount: Int { requests.value.count }
    var resultCount: Int { results.value.count }
    var successCount: Int { results.withLock { $0.count { $0.response != nil } } }

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        requests.withLock { $0.append(request) }
        let result = await super.load(request)
        results.withLock { $0.append(result) }
        return result
    }
}

/// Sets per-operation policies from the request's OpenAPI operation ID, as an app would.
func operationPolicies(
    _ policies: [String: @Sendable (inout HTTPRequest) -> Void]
) -> ModifyRequest {
    ModifyRequest { request in
        var request = request
        if let operationID = request.openAPIOperationID { policies[operationID]?(&request) }
        return request
    }
}

/// A retry strategy that retries a `503` at once, up to `attempts` attempts in all.
struct RetryServiceUnavailable: HTTPRetryStrategy {
    var attempts = 3
    var delay: Duration = .zero

    func retryDecision(for result: HTTPResult, context: RetryContext) -> RetryDecision {
        guard context.attempt < attempts, result.response?.status == .serviceUnavailable else { return .doNotRetry }
        return .retry(after: delay)
    }
}

/// The chain's error inside a generated client's error, if that is what `error` is.
func chainError(_ error: any Error) -> HTTPError? {
    (error as? ClientError)?.underlyingError as? HTTPError
}

/// The body's bytes, read to the end within the deadline.
func collect(_ body: OpenAPIRuntime.HTTPBody, upTo limit: Int = 1 << 24) async throws -> [UInt8] {
    try await withDeadline { try await [UInt8](collecting: body, upTo: limit) }
}

// The waits below mirror the product's (Tests/HTTPTestSupport/Waiting.swift, which this package cannot link): every
// wait has a deadline, and a wait that gives up says what it found and stops the test.

/// How long a test waits for something that takes microseconds when the machine is idle.
let standardDeadline: Double = 60

/// Waits until `condition` holds, for at most `seconds`; on timeout the test fails with `state` and stops here.
func eventually(
    seconds: Double = standardDeadline,
    _ state: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @Sendable () -> Bool
) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    var polls = 0
    var pause = Duration.milliseconds(1)
    while !condition() {
        if ContinuousClock.now > deadline {
            let found = state()
            try timedOut(
                "condition not met within \(seconds) s (\(polls) polls)" + (found.isEmpty ? "" : "; found: \(found)"),
                sourceLocation: sourceLocation)
        }
        polls += 1
        if polls <= 10 {
            await Task.yield()
        } else {
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(16))
        }
    }
}

/// Runs `body` in a task of its own and returns its value or rethrows its error; if it has not finished within
/// `seconds`, it is cancelled and left behind (this returns even when `body` ignores cancellation) and the test fails
/// and stops here.
func withDeadline<T: Sendable>(
    seconds: Double = standardDeadline,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let work = Task { () -> Result<T, any Error> in
        do { return .success(try await body()) } catch { return .failure(error) }
    }
    return try await work.finished(within: seconds, sourceLocation: sourceLocation).get()
}

extension Task where Failure == Never {
    /// The task's value, awaited for at most `seconds`; on timeout the task is cancelled and the test fails and
    /// stops here.
    func finished(
        within seconds: Double = standardDeadline, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Success {
        guard let value = await awaitValue(of: self, seconds: seconds) else {
            try timedOut("the task did not finish within \(seconds) s", sourceLocation: sourceLocation)
        }
        return value.value
    }
}

/// A value of `T` that can be nil inside an optional.
struct Finished<T: Sendable>: Sendable {
    let value: T
}

/// `work`'s value, or nil if it has not finished within `seconds` (it is then cancelled and left behind).
private func awaitValue<T: Sendable>(of work: Task<T, Never>, seconds: Double) async -> Finished<T>? {
    let waiter = Box<CheckedContinuation<Finished<T>?, Never>?>(nil)
    let finish: @Sendable (Finished<T>?) -> Void = { value in
        waiter.withLock { waiter in
            defer { waiter = nil }
            return waiter
        }?.resume(returning: value)
    }
    let value = await withCheckedContinuation { (continuation: CheckedContinuation<Finished<T>?, Never>) in
        waiter.withLock { $0 = continuation }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            if !Task.isCancelled { finish(nil) }
        }
        Task {
            let value = await work.value
            timer.cancel()
            finish(Finished(value: value))
        }
    }
    if value == nil { work.cancel() }
    return value
}

/// Fails the test at `sourceLocation` with `message`, throwing the error `#require` throws.
private func timedOut(_ message: String, sourceLocation: SourceLocation) throws -> Never {
    let waitEndedInTime = false
    try #require(waitEndedInTime, Comment(rawValue: message), sourceLocation: sourceLocation)
    preconditionFailure("#require(false) returned")
}

import Foundation
import HTTP
import NIOConcurrencyHelpers
import Testing

/// The local servers started by the product's `scripts/servers.sh`, handed over in environment variables.
enum TestServers {
    static let environment = ProcessInfo.processInfo.environment
    static let httpbin: URL? = environment["HTTPBIN_URL"].flatMap(URL.init(string:))
    /// nginx, with `/download/32M.bin` (byte i is i % 251; ETag, Last-Modified, ranges) and `/person.json`.
    static let nginx: URL? = environment["NGINX_URL"].flatMap(URL.init(string:))
    /// nginx over HTTPS with HTTP/2 (the test CA's certificate), each response naming its connection (`X-Connection`).
    static let nginxHTTP2: URL? = environment["NGINX_H2_URL"].flatMap(URL.init(string:))
    /// The download server: `/file/SIZE?drop=KEY` cuts the first response for KEY off half-way; `/echo`.
    static let downloads: URL? = environment["DOWNLOADS_URL"].flatMap(URL.init(string:))
    static let tlsSelfSigned: URL? = environment["TLS_SELF_SIGNED_URL"].flatMap(URL.init(string:))
    static let tlsExpired: URL? = environment["TLS_EXPIRED_URL"].flatMap(URL.init(string:))
    static let tlsWrongName: URL? = environment["TLS_WRONG_NAME_URL"].flatMap(URL.init(string:))
    static let tlsTrusted: URL? = environment["TLS_TRUSTED_URL"].flatMap(URL.init(string:))
    /// The HTTPS server that requires a client certificate the test CA issued, and answers `GET /` with its subject;
    /// `client-identity.pem` (accepted) and `stranger-identity.pem` (refused) are beside ``tlsCAFile``.
    static let tlsClientAuth: URL? = environment["TLS_CLIENT_AUTH_URL"].flatMap(URL.init(string:))
    /// The test CA's certificate (PEM); the servers' certificates (`trusted.pem`, `self-signed.pem`) are beside it.
    static let tlsCAFile: URL? = environment["TLS_CA_FILE"].map { URL(fileURLWithPath: $0) }
    /// Set by the test command: a missing server is then a failure, not a skip.
    static let areRequired = environment["HTTP_REQUIRE_SERVERS"] == "1"

    static var haveHTTP: Bool { httpbin != nil && nginx != nil && downloads != nil }
    static var haveTLS: Bool { tlsSelfSigned != nil && tlsTrusted != nil && tlsWrongName != nil && tlsCAFile != nil }
}

@Suite(.timeLimit(.minutes(3))) struct ServerPresenceTests {
    /// The test command sets HTTP_REQUIRE_SERVERS=1: then no suite may be skipped for want of a server.
    @Test func serversArePresentWhenRequired() {
        guard TestServers.areRequired else { return }
        #expect(TestServers.haveHTTP, "HTTP_REQUIRE_SERVERS=1 but HTTPBIN_URL, NGINX_URL or DOWNLOADS_URL is not set")
        #expect(TestServers.haveTLS, "HTTP_REQUIRE_SERVERS=1 but a TLS_* variable is not set")
        #expect(TestServers.tlsClientAuth != nil, "HTTP_REQUIRE_SERVERS=1 but TLS_CLIENT_AUTH_URL is not set")
        #expect(TestServers.nginxHTTP2 != nil, "HTTP_REQUIRE_SERVERS=1 but NGINX_H2_URL is not set")
    }
}

/// A value behind a lock, for the tests' own bookkeeping.
final class Box<Value: Sendable>: Sendable {
    private let lock: NIOLockedValueBox<Value>

    init(_ value: Value) {
        lock = NIOLockedValueBox(value)
    }

    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLockedValue(body)
    }

    var value: Value { withLock { $0 } }
}

// The waits below mirror the product's (Tests/HTTPTestSupport/Waiting.swift, which this package cannot link): every
// wait has a deadline, and a wait that gives up says what it found and stops the test.

/// How long a test waits for something that takes microseconds when the machine is idle.
let standardDeadline: Double = 60

/// Waits until `condition` holds, for at most `seconds`; on timeout the test fails with `state` and stops here.
/// The first polls only yield; then they back off from 1 to 16 ms, so that waiting tests do not keep the
/// cooperative threads busy and starve the tasks they wait for.
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

/// Runs `body`, failing the test if it has not finished within `seconds`; its value, or nil on timeout (`body` is
/// then cancelled and left behind: this returns even when `body` ignores cancellation).
func withDeadline<T: Sendable>(
    seconds: Double, sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable () async -> T
) async -> T? {
    let value = await awaitValue(of: Task { await body() }, seconds: seconds)
    if value == nil {
        Issue.record("did not finish within \(seconds) s", sourceLocation: sourceLocation)
    }
    return value?.value
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

/// A new empty folder in the temporary directory.
func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appending(path: "http-ahc-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// Bytes `range` of the servers' download pattern: byte i is i % 251. Cut from one block made once: a debug build
/// that computed every byte would keep a cooperative thread busy for seconds per 32 MiB and starve other tests.
func downloadPattern(_ range: Range<Int>) -> Data {
    var data = Data(capacity: range.count)
    var position = range.lowerBound
    while position < range.upperBound {
        let offset = position % 251
        let count = min(patternBlock.count - offset, range.upperBound - position)
        data.append(patternBlock[offset..<offset + count])
        position += count
    }
    return data
}

/// The pattern from byte 0, 251 × 1024 bytes long, so that any slice of up to 250 KiB starts anywhere in it.
private let patternBlock = Data((0..<(251 * 1024)).map { UInt8($0 % 251) })

/// Whether `url`'s contents are `size` bytes of the download pattern, compared a block at a time.
func holdsDownloadPattern(_ url: URL, size: Int) throws -> Bool {
    let data = try Data(contentsOf: url)
    guard data.count == size else { return false }
    let block = 251 * 1024
    var position = 0
    while position < size {
        let end = min(size, position + block)
        guard data[position..<end] == patternBlock[0..<(end - position)] else { return false }
        position = end
    }
    return true
}

extension HTTPResponse {
    /// The body as a JSON object (httpbin's answers).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }
}

/// The DER certificates of a PEM file, in order.
func certificates(inPEMFile url: URL) throws -> [Data] {
    let text = try String(contentsOf: url, encoding: .utf8)
    var certificates: [Data] = []
    var base64: String?
    for line in text.split(whereSeparator: \.isNewline) {
        if line.hasPrefix("-----BEGIN CERTIFICATE") {
            base64 = ""
        } else if line.hasPrefix("-----END CERTIFICATE") {
            if let encoded = base64, let der = Data(base64Encoded: encoded) { certificates.append(der) }
            base64 = nil
        } else if base64 != nil {
            base64! += line.trimmingCharacters(in: .whitespaces)
        }
    }
    return certificates
}

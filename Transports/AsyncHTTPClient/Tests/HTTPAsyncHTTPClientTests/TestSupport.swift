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
    /// The download server: `/file/SIZE?drop=KEY` cuts the first response for KEY off half-way; `/echo`.
    static let downloads: URL? = environment["DOWNLOADS_URL"].flatMap(URL.init(string:))
    static let tlsSelfSigned: URL? = environment["TLS_SELF_SIGNED_URL"].flatMap(URL.init(string:))
    static let tlsExpired: URL? = environment["TLS_EXPIRED_URL"].flatMap(URL.init(string:))
    static let tlsWrongName: URL? = environment["TLS_WRONG_NAME_URL"].flatMap(URL.init(string:))
    static let tlsTrusted: URL? = environment["TLS_TRUSTED_URL"].flatMap(URL.init(string:))
    /// The test CA's certificate (PEM); the servers' certificates (`trusted.pem`, `self-signed.pem`) are beside it.
    static let tlsCAFile: URL? = environment["TLS_CA_FILE"].map { URL(fileURLWithPath: $0) }
    /// Set by the test command: a missing server is then a failure, not a skip.
    static let areRequired = environment["HTTP_REQUIRE_SERVERS"] == "1"

    static var haveHTTP: Bool { httpbin != nil && nginx != nil && downloads != nil }
    static var haveTLS: Bool { tlsSelfSigned != nil && tlsTrusted != nil && tlsWrongName != nil && tlsCAFile != nil }
}

@Suite struct ServerPresenceTests {
    /// The test command sets HTTP_REQUIRE_SERVERS=1: then no suite may be skipped for want of a server.
    @Test func serversArePresentWhenRequired() {
        guard TestServers.areRequired else { return }
        #expect(TestServers.haveHTTP, "HTTP_REQUIRE_SERVERS=1 but HTTPBIN_URL, NGINX_URL or DOWNLOADS_URL is not set")
        #expect(TestServers.haveTLS, "HTTP_REQUIRE_SERVERS=1 but a TLS_* variable is not set")
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

/// Polls `condition` until it holds, for at most `seconds`; records an issue if it never does.
func eventually(
    seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation, _ condition: @Sendable () -> Bool
) async {
    let deadline = ContinuousClock.now + .seconds(seconds)
    var polls = 0
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition not met within \(seconds) s", sourceLocation: sourceLocation)
            return
        }
        polls += 1
        if polls <= 100 {
            await Task.yield()
        } else {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// Runs `body`, failing the test if it has not finished within `seconds`; its value, or nil on timeout.
func withDeadline<T: Sendable>(
    seconds: Double, sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable () async -> T
) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        if first == nil { Issue.record("did not finish within \(seconds) s", sourceLocation: sourceLocation) }
        return first
    }
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

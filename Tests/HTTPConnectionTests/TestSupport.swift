import Foundation
import HTTP

/// A value behind the package's lock (visible to ThreadSanitizer), for test bookkeeping.
final class Box<Value>: Sendable {
    private let lock: Locked<Value>
    init(_ value: Value) { lock = Locked(value) }
    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result { try lock.withLock(body) }
}

extension Box where Value: Sendable {
    var value: Value { withLock { $0 } }
}

// `Person`, `APIProblem` and `Request.person(_:)` are the documentation's own, in DocumentationTests.swift.

extension ServerEnvironment {
    static let test = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

func json(_ text: String) -> Data { Data(text.utf8) }

/// The local httpbin started by scripts/servers.sh.
let httpbinURL: URL? = ProcessInfo.processInfo.environment["HTTPBIN_URL"].flatMap(URL.init(string:))

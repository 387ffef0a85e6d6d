import Foundation
import HTTP
@_exported import HTTPTestSupport

// `Person`, `APIProblem` and `Request.person(_:)` are the documentation's own, in DocumentationTests.swift.

extension ServerEnvironment {
    static let test = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

func json(_ text: String) -> Data { Data(text.utf8) }

/// The local httpbin started by scripts/servers.sh.
let httpbinURL: URL? = ProcessInfo.processInfo.environment["HTTPBIN_URL"].flatMap(URL.init(string:))

/// The download server started by scripts/servers.sh: `/file/SIZE` (byte i is i % 251) with ETags, ranges and
/// connections cut off half-way (`?drop=KEY`), `/echo` for uploads.
let downloadsURL: URL? = ProcessInfo.processInfo.environment["DOWNLOADS_URL"].flatMap(URL.init(string:))

/// The event-stream server started by scripts/servers.sh: `/numbers?count=N`.
let eventStreamURL: URL? = ProcessInfo.processInfo.environment["EVENT_STREAM_URL"].flatMap(URL.init(string:))

/// Set by the test command: a missing server is then a failure, not a skip.
let serversAreRequired = ProcessInfo.processInfo.environment["HTTP_REQUIRE_SERVERS"] == "1"

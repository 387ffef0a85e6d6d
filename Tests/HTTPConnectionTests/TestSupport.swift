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

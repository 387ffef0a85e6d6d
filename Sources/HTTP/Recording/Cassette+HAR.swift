public import Foundation

extension Cassette {
    /// The cassette as an HTTP Archive (HAR 1.2), the format browsers' developer tools import (drop the file on the
    /// Network panel of Chrome, Edge or Firefox) and many proxies and viewers read.
    ///
    /// Each entry becomes a HAR entry with its start (`startedDateTime`), its duration (`time`, all of it counted as
    /// `wait`: the chain does not see the phases of a transfer), the request (method, URL, header fields, query
    /// items, body as `postData`) and the response (status, header fields, body as `content`, base64-encoded when
    /// it is not text, `redirectURL` from `Location`). A failed load has the status `0` and its error in `_error`,
    /// as browsers write failed requests; `_loadID` and `_attempt` tell a load's retries apart. The HTTP version is
    /// not known to the chain and is written as `HTTP/1.1`; header and body sizes on the wire are not known either
    /// (`-1`, as the format says). Secrets stay as the cassette holds them: redacted.
    ///
    /// ```swift
    /// try recorder.cassette.harData().write(to: URL(fileURLWithPath: "session.har"))
    /// ```
    ///
    /// - Parameter creator: The name written as the log's creator; `HTTP` (this package) by default.
    /// - Returns: The HAR file's contents: UTF-8 JSON.
    public func harData(creator: String = "HTTP") throws -> Data {
        let creator: [String: HAR] = ["name": .string(creator), "version": .string("\(Self.formatVersion)")]
        let log: [String: HAR] = [
            "version": .string("1.2"), "creator": .object(creator), "pages": .array([]),
            "entries": .array(entries.map(HAR.entry)),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(HAR.object(["log": .object(log)]))
    }
}

/// A HAR 1.2 document, or a part of it: a JSON value whose objects name their members as the format names them
/// (written with sorted keys). The archive is only ever written, so one `encode(to:)` writes every object, instead of
/// a synthesized conformance (and its coding keys) for each kind of object.
private enum HAR: Encodable {
    case string(String)
    case int(Int)
    case double(Double)
    case array([HAR])
    case object([String: HAR])

    private struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .int(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .double(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .object(let members):
            var container = encoder.container(keyedBy: Name.self)
            for (name, value) in members { try container.encode(value, forKey: Name(stringValue: name)) }
        }
    }

    static func entry(_ entry: Cassette.Entry) -> HAR {
        let milliseconds = entry.duration.seconds * 1_000
        let timings: [String: HAR] = ["send": .double(0), "wait": .double(milliseconds), "receive": .double(0)]
        let members: [String: HAR] = [
            "startedDateTime": .string(CassetteDate.format(entry.startedAt)),
            "time": .double(milliseconds),
            "request": request(entry.request),
            "response": response(entry.response, failure: entry.failure),
            "cache": .object([:]),
            "timings": .object(timings),
            "_loadID": .string(entry.loadID.uuidString),
            "_attempt": .int(entry.attempt),
        ]
        return .object(members)
    }

    static func request(_ request: Cassette.Request) -> HAR {
        var members: [String: HAR] = [
            "method": .string(request.method.rawValue),
            "url": .string(uriText(request.url)),
            "httpVersion": .string("HTTP/1.1"),
            "cookies": .array([]),
            "headers": .array(request.headers.map { nameValue($0.name, $0.value) }),
            "queryString": .array(queryItems(of: request.url)),
            "headersSize": .int(-1),
            "bodySize": .int(request.body?.data.count ?? 0),
        ]
        if let body = request.body {
            var postData: [String: HAR] = [
                "mimeType": .string(request.headers["Content-Type"] ?? "application/octet-stream")
            ]
            switch body {
            case .text(let text):
                postData["text"] = .string(text)
            case .binary(let data):
                postData["text"] = .string(data.base64EncodedString())
                postData["_encoding"] = .string("base64")
            }
            members["postData"] = .object(postData)
        }
        return .object(members)
    }

    static func response(_ response: Cassette.Response?, failure: Cassette.Failure?) -> HAR {
        var members: [String: HAR] = [
            "status": .int(response?.status.rawValue ?? 0),
            "statusText": .string(response?.status.reasonPhrase ?? ""),
            "httpVersion": .string("HTTP/1.1"),
            "cookies": .array([]),
            "headers": .array(response?.headers.map { nameValue($0.name, $0.value) } ?? []),
            "content": content(response?.body, mimeType: response?.headers["Content-Type"]),
            "redirectURL": .string(response?.headers["Location"] ?? ""),
            "headersSize": .int(-1),
            "bodySize": .int(-1),
        ]
        if let failure { members["_error"] = .string("\(failure.code): \(failure.message)") }
        return .object(members)
    }

    static func content(_ body: Cassette.Body?, mimeType: String?) -> HAR {
        var members: [String: HAR] = [
            "size": .int(body?.data.count ?? 0),
            "mimeType": .string(mimeType ?? (body == nil ? "x-unknown" : "application/octet-stream")),
        ]
        switch body {
        case .text(let text)?:
            members["text"] = .string(text)
        case .binary(let data)?:
            members["text"] = .string(data.base64EncodedString())
            members["encoding"] = .string("base64")
        case nil: break
        }
        return .object(members)
    }

    static func nameValue(_ name: String, _ value: String) -> HAR {
        .object(["name": .string(name), "value": .string(value)])
    }

    /// The URL with every character a URI does not allow percent-encoded: a redacted value's `<` and `>`, a space.
    static func uriText(_ url: String) -> String {
        var result = ""
        for byte in url.utf8 {
            if allowedInURI[Int(byte)] {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
            }
        }
        return result
    }

    /// The URL's query items, decoded.
    static func queryItems(of url: String) -> [HAR] {
        var url = Substring(url)
        if let fragment = url.firstIndex(of: "#") { url = url[..<fragment] }
        guard let mark = url.firstIndex(of: "?") else { return [] }
        return url[url.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                let plain = text.replacingOccurrences(of: "+", with: " ")
                return PercentEncoding.decode(plain) ?? plain
            }
            return nameValue(decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// Which bytes a URI allows as they are (RFC 3986's unreserved and reserved characters, and `%`).
    private static let allowedInURI: [Bool] = (0...255).map { byte in
        guard byte < 128, let scalar = Unicode.Scalar(byte) else { return false }
        return CharacterSet.alphanumerics.contains(scalar) || "-._~:/?#[]@!$&'()*+,;=%".unicodeScalars.contains(scalar)
    }
}

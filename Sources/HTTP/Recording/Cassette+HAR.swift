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
        let log = HAR.Log(
            version: "1.2", creator: HAR.Creator(name: creator, version: "\(Self.formatVersion)"), pages: [],
            entries: entries.map(HAR.Entry.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(HAR(log: log))
    }
}

/// The parts of HAR 1.2 this package writes, named as the format names them.
private struct HAR: Encodable {
    var log: Log

    struct Log: Encodable {
        var version: String
        var creator: Creator
        var pages: [String]
        var entries: [Entry]
    }

    struct Creator: Encodable {
        var name: String
        var version: String
    }

    struct NameValue: Encodable {
        var name: String
        var value: String
    }

    struct Entry: Encodable {
        var startedDateTime: String
        var time: Double
        var request: Request
        var response: Response
        var cache = Cache()
        var timings: Timings
        var _loadID: String
        var _attempt: Int

        init(_ entry: Cassette.Entry) {
            let milliseconds = entry.duration.seconds * 1_000
            startedDateTime = CassetteDate.format(entry.startedAt)
            time = milliseconds
            request = Request(entry.request)
            response = Response(entry.response, failure: entry.failure)
            timings = Timings(send: 0, wait: milliseconds, receive: 0)
            _loadID = entry.loadID.uuidString
            _attempt = entry.attempt
        }
    }

    struct Request: Encodable {
        var method: String
        var url: String
        var httpVersion = "HTTP/1.1"
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var queryString: [NameValue]
        var postData: PostData?
        var headersSize = -1
        var bodySize: Int

        init(_ request: Cassette.Request) {
            method = request.method.rawValue
            url = HAR.uriText(request.url)
            headers = request.headers.map { NameValue(name: $0.name, value: $0.value) }
            queryString = HAR.queryItems(of: request.url)
            bodySize = request.body?.data.count ?? 0
            if let body = request.body {
                let mimeType = request.headers["Content-Type"] ?? "application/octet-stream"
                switch body {
                case .text(let text): postData = PostData(mimeType: mimeType, text: text)
                case .binary(let data):
                    postData = PostData(mimeType: mimeType, text: data.base64EncodedString(), _encoding: "base64")
                }
            }
        }
    }

    struct PostData: Encodable {
        var mimeType: String
        var text: String
        var _encoding: String?
    }

    struct Response: Encodable {
        var status: Int
        var statusText: String
        var httpVersion = "HTTP/1.1"
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var content: Content
        var redirectURL: String
        var headersSize = -1
        var bodySize = -1
        var _error: String?

        init(_ response: Cassette.Response?, failure: Cassette.Failure?) {
            status = response?.status.rawValue ?? 0
            statusText = response?.status.reasonPhrase ?? ""
            headers = response?.headers.map { NameValue(name: $0.name, value: $0.value) } ?? []
            content = Content(response?.body, mimeType: response?.headers["Content-Type"])
            redirectURL = response?.headers["Location"] ?? ""
            _error = failure.map { "\($0.code): \($0.message)" }
        }
    }

    struct Content: Encodable {
        var size: Int
        var mimeType: String
        var text: String?
        var encoding: String?

        init(_ body: Cassette.Body?, mimeType: String?) {
            self.mimeType = mimeType ?? (body == nil ? "x-unknown" : "application/octet-stream")
            size = body?.data.count ?? 0
            switch body {
            case .text(let text)?: self.text = text
            case .binary(let data)?:
                text = data.base64EncodedString()
                encoding = "base64"
            case nil: break
            }
        }
    }

    struct Cache: Encodable {}

    struct Timings: Encodable {
        var send: Double
        var wait: Double
        var receive: Double
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
    static func queryItems(of url: String) -> [NameValue] {
        var url = Substring(url)
        if let fragment = url.firstIndex(of: "#") { url = url[..<fragment] }
        guard let mark = url.firstIndex(of: "?") else { return [] }
        return url[url.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                let plain = text.replacingOccurrences(of: "+", with: " ")
                return PercentEncoding.decode(plain) ?? plain
            }
            return NameValue(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// Which bytes a URI allows as they are (RFC 3986's unreserved and reserved characters, and `%`).
    private static let allowedInURI: [Bool] = (0...255).map { byte in
        guard byte < 128, let scalar = Unicode.Scalar(byte) else { return false }
        return CharacterSet.alphanumerics.contains(scalar) || "-._~:/?#[]@!$&'()*+,;=%".unicodeScalars.contains(scalar)
    }
}

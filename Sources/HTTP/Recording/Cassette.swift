public import Foundation

/// Recorded HTTP traffic: each request a ``Recorder`` saw, with the response or the failure it got, its timing, and
/// the ``Redaction`` that hid its secrets.
///
/// A cassette is a value, saved as a JSON file that reads well in a diff:
///
/// ```json
/// { "version": 1,
///   "redaction": { "names": ["authorization", …], "namesContaining": ["token", …] },
///   "entries": [ { "sequence": 0, "load": "6F9619FF-…", "attempt": 1,
///                  "startedAt": "2026-11-23T10:00:00.125Z", "duration": 0.0421,
///                  "request": { "method": "GET", "url": "https://api.example.com/v1/people/42",
///                               "headers": [{ "name": "Authorization", "value": "Bearer <redacted>" }] },
///                  "response": { "status": 200, "headers": […], "body": { "text": "{\"name\":\"Zoë\"}" } } } ] }
/// ```
///
/// A body is stored as `text` when it is UTF-8 and as `base64` otherwise. Secret values — in header fields, query
/// items, form and JSON bodies — were replaced by `<redacted>` before the entry was stored, and a
/// ``ReplayLoader`` applies the same ``redaction`` to the requests it matches, so a test that sends real secrets
/// still finds its recorded answers. Export a cassette for a browser's developer tools with ``harData(creator:)``.
public struct Cassette: Sendable, Hashable {
    /// The version of the file format this package writes and reads.
    public static let formatVersion = 1

    /// The redaction that hid the secrets of ``entries``; a replay applies it to the requests it matches.
    public var redaction: Redaction
    /// The recorded exchanges, in the order their requests reached the recorder.
    public var entries: [Entry]

    /// A cassette with these entries, recorded under `redaction`.
    public init(redaction: Redaction = .standard, entries: [Entry] = []) {
        self.redaction = redaction
        self.entries = entries
    }

    /// One request that passed the recorder and what came back.
    ///
    /// Retried attempts of one load share its ``loadID`` (the request's ``HTTPRequest/id``) and are told apart
    /// by ``attempt``; a request sent twice with the same number (re-sent with new credentials after a `401`)
    /// by ``sequence``.
    public struct Entry: Sendable, Hashable {
        /// The order in which requests reached the recorder, from 0.
        public var sequence: Int
        /// The load this request belongs to: its ``HTTPRequest/id``, which every attempt of a load shares.
        public var loadID: UUID
        /// The request's ``HTTPRequest/attemptNumber``: 1, or the retry's number.
        public var attempt: Int
        /// When the request reached the recorder, to the millisecond.
        public var startedAt: Date
        /// How long the rest of the chain took to answer, to the microsecond.
        public var duration: Duration
        /// The request as it was sent, secrets redacted.
        public var request: Request
        /// The response, when there was one — also when the load failed after receiving it.
        public var response: Response?
        /// Why the load failed, when it did.
        public var failure: Failure?

        public init(
            sequence: Int, loadID: UUID = UUID(), attempt: Int = 1, startedAt: Date = Date(),
            duration: Duration = .zero, request: Request, response: Response? = nil, failure: Failure? = nil
        ) {
            self.sequence = sequence
            self.loadID = loadID
            self.attempt = attempt
            // At the precision of the file, so that a cassette read back equals the one written.
            self.startedAt = CassetteDate.rounded(startedAt)
            self.duration = CassetteDuration.decode(CassetteDuration.encode(duration)) ?? .zero
            self.request = request
            self.response = response
            self.failure = failure
        }
    }

    /// A recorded request.
    public struct Request: Sendable, Hashable {
        /// The method.
        public var method: HTTPMethod
        /// The URL as sent, without its fragment, secrets redacted.
        public var url: String
        /// The header fields as sent (the body's included), secrets redacted.
        public var headers: HTTPHeaders
        /// The body, if any.
        public var body: Body?

        public init(method: HTTPMethod = .get, url: String, headers: HTTPHeaders = [:], body: Body? = nil) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    /// A recorded response.
    public struct Response: Sendable, Hashable {
        /// The status.
        public var status: HTTPStatus
        /// The header fields, secrets redacted (`Set-Cookie: <redacted>`).
        public var headers: HTTPHeaders
        /// The body, if any.
        public var body: Body?
        /// The URL the response came from, when it differs from the request's.
        public var url: String?

        public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: Body? = nil, url: String? = nil) {
            self.status = status
            self.headers = headers
            self.body = body
            self.url = url
        }
    }

    /// A recorded failure: an ``HTTPError``'s code and message.
    public struct Failure: Sendable, Hashable {
        /// The error's code.
        public var code: HTTPError.Code
        /// The error's message, secrets redacted.
        public var message: String

        public init(code: HTTPError.Code, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// A recorded body: text when it was UTF-8, bytes otherwise.
    @frozen
    public enum Body: Sendable, Hashable {
        /// A UTF-8 body, with secret values redacted.
        case text(String)
        /// Any other body, as it was.
        case binary(Data)

        /// The body's bytes.
        public var data: Data {
            switch self {
            case .text(let text): Data(text.utf8)
            case .binary(let data): data
            }
        }
    }
}

/// Why a cassette could not be read: the file, and what is wrong where in it.
public struct CassetteError: Error, Sendable, CustomStringConvertible {
    /// The file, when the cassette was read from one.
    public var file: URL?
    /// What is wrong, and where: `entries[3].response.status: expected a number`.
    public var message: String

    public init(file: URL? = nil, message: String) {
        self.file = file
        self.message = message
    }

    public var description: String {
        "the cassette\(file.map { " \($0.path)" } ?? "") cannot be used: \(message)"
    }
}

// MARK: - Reading and writing

extension Cassette {
    /// Reads the cassette saved in `file`.
    ///
    /// - Throws: ``CassetteError`` naming the file and what is wrong: it cannot be read, is not JSON, has another
    ///   format version, or a field is missing or invalid (named by its path, `entries[3].request.url`).
    public init(contentsOf file: URL) throws(CassetteError) {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw CassetteError(file: file, message: "the file cannot be read (\(error.localizedDescription))")
        }
        do throws(CassetteError) {
            self = try Cassette(jsonData: data)
        } catch {
            throw CassetteError(file: file, message: error.message)
        }
    }

    /// Reads a cassette from its JSON form.
    ///
    /// - Throws: ``CassetteError`` saying what is wrong where.
    public init(jsonData data: Data) throws(CassetteError) {
        do {
            self = try JSONDecoder().decode(Cassette.self, from: data)
        } catch let error as DecodingError {
            throw CassetteError(message: Self.describe(error))
        } catch {
            throw CassetteError(message: "it is not a cassette (\(error))")
        }
    }

    /// The cassette's JSON form: pretty-printed, keys sorted, so that a recording reads well in a diff.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// Saves the cassette to `file` atomically: a reader sees the old file or the new one, never part of one.
    public func write(to file: URL) throws {
        try jsonData().write(to: file, options: .atomic)
    }

    /// A decoding error as `path: problem`.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text.isEmpty ? "the top level" : text
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(Self.describe(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(Self.describe(type)), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "it is not valid JSON" }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: "\(type)"
        }
    }
}

// MARK: - Codable

extension Cassette: Codable {
    private enum CodingKeys: String, CodingKey {
        case version, redaction, entries
    }

    private struct RedactionNames: Codable {
        var names: [String]
        var namesContaining: [String]
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard version == Self.formatVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container,
                debugDescription:
                    "format version \(version) is not supported (this package reads version \(Self.formatVersion))")
        }
        let names = try container.decode(RedactionNames.self, forKey: .redaction)
        redaction = Redaction(names: names.names, namesContaining: names.namesContaining)
        entries = try container.decode([Entry].self, forKey: .entries)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatVersion, forKey: .version)
        try container.encode(
            RedactionNames(names: redaction.names.sorted(), namesContaining: redaction.nameFragments.sorted()),
            forKey: .redaction)
        try container.encode(entries, forKey: .entries)
    }
}

extension Cassette.Entry: Codable {
    private enum CodingKeys: String, CodingKey {
        case sequence, load, attempt, startedAt, duration, request, response, failure
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sequence = try container.decode(Int.self, forKey: .sequence)
        loadID = try container.decode(UUID.self, forKey: .load)
        attempt = try container.decode(Int.self, forKey: .attempt)
        let started = try container.decode(String.self, forKey: .startedAt)
        guard let date = CassetteDate.parse(started) else {
            throw DecodingError.dataCorruptedError(
                forKey: .startedAt, in: container,
                debugDescription: "'\(started)' is not an ISO 8601 date and time (2026-11-23T10:00:00.125Z)")
        }
        startedAt = date
        let seconds = try container.decode(Double.self, forKey: .duration)
        guard let duration = CassetteDuration.decode(seconds) else {
            throw DecodingError.dataCorruptedError(
                forKey: .duration, in: container,
                debugDescription: "\(seconds) is not a duration in seconds between 0 and a century")
        }
        self.duration = duration
        request = try container.decode(Cassette.Request.self, forKey: .request)
        response = try container.decodeIfPresent(Cassette.Response.self, forKey: .response)
        failure = try container.decodeIfPresent(Cassette.Failure.self, forKey: .failure)
        guard response != nil || failure != nil else {
            throw DecodingError.dataCorruptedError(
                forKey: .response, in: container, debugDescription: "an entry needs a response, a failure or both")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(loadID, forKey: .load)
        try container.encode(attempt, forKey: .attempt)
        try container.encode(CassetteDate.format(startedAt), forKey: .startedAt)
        try container.encode(CassetteDuration.encode(duration), forKey: .duration)
        try container.encode(request, forKey: .request)
        try container.encodeIfPresent(response, forKey: .response)
        try container.encodeIfPresent(failure, forKey: .failure)
    }
}

extension Cassette.Request: Codable {
    private enum CodingKeys: String, CodingKey {
        case method, url, headers, body
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = HTTPMethod(rawValue: try container.decode(String.self, forKey: .method))
        url = try container.decode(String.self, forKey: .url)
        headers = try container.decodeIfPresent([HeaderField].self, forKey: .headers).map(HTTPHeaders.init) ?? [:]
        body = try container.decodeIfPresent(Cassette.Body.self, forKey: .body)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method.rawValue, forKey: .method)
        try container.encode(url, forKey: .url)
        try container.encode(headers.map(HeaderField.init), forKey: .headers)
        try container.encodeIfPresent(body, forKey: .body)
    }
}

extension Cassette.Response: Codable {
    private enum CodingKeys: String, CodingKey {
        case status, headers, body, url
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = HTTPStatus(rawValue: try container.decode(Int.self, forKey: .status))
        headers = try container.decodeIfPresent([HeaderField].self, forKey: .headers).map(HTTPHeaders.init) ?? [:]
        body = try container.decodeIfPresent(Cassette.Body.self, forKey: .body)
        url = try container.decodeIfPresent(String.self, forKey: .url)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status.rawValue, forKey: .status)
        try container.encode(headers.map(HeaderField.init), forKey: .headers)
        try container.encodeIfPresent(body, forKey: .body)
        try container.encodeIfPresent(url, forKey: .url)
    }
}

extension Cassette.Failure: Codable {
    private enum CodingKeys: String, CodingKey {
        case code, message
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = HTTPError.Code(rawValue: try container.decode(String.self, forKey: .code))
        message = try container.decodeIfPresent(String.self, forKey: .message) ?? ""
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code.rawValue, forKey: .code)
        try container.encode(message, forKey: .message)
    }
}

extension Cassette.Body: Codable {
    private enum CodingKeys: String, CodingKey {
        case text, base64
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let text = try container.decodeIfPresent(String.self, forKey: .text) {
            self = .text(text)
        } else if let encoded = try container.decodeIfPresent(String.self, forKey: .base64) {
            guard let data = Data(base64Encoded: encoded) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .base64, in: container, debugDescription: "not valid base64")
            }
            self = .binary(data)
        } else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: container.codingPath, debugDescription: "a body needs `text` or `base64`"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .text(let text): try container.encode(text, forKey: .text)
        case .binary(let data): try container.encode(data.base64EncodedString(), forKey: .base64)
        }
    }
}

/// A header field as stored in a cassette.
private struct HeaderField: Codable {
    var name: String
    var value: String

    init(_ field: HTTPHeaders.Field) {
        name = field.name
        value = field.value
    }
}

extension HTTPHeaders {
    fileprivate init(_ fields: [HeaderField]) {
        self.init(fields.map { Field(name: $0.name, value: $0.value) })
    }
}

/// Durations as cassettes write them: seconds, to the microsecond.
enum CassetteDuration {
    static func encode(_ duration: Duration) -> Double {
        Double(microseconds(duration)) / 1_000_000
    }

    /// The duration, or `nil` when `seconds` is not between 0 and a century.
    static func decode(_ seconds: Double) -> Duration? {
        guard seconds >= 0, seconds <= Duration.century.seconds else { return nil }
        return .microseconds(Int64((seconds * 1_000_000).rounded()))
    }

    /// The duration in whole microseconds, clamped to zero...a century.
    private static func microseconds(_ duration: Duration) -> Int64 {
        let clamped = min(max(duration, .zero), .century)
        return Int64((clamped / .microseconds(1)).rounded())
    }
}

/// Dates as cassettes and HAR files write them: ISO 8601 in UTC, to the millisecond (`2026-11-23T10:00:00.125Z`).
enum CassetteDate {
    static func format(_ date: Date) -> String {
        let milliseconds = self.milliseconds(date)
        let seconds = milliseconds.quotientAndRemainder(dividingBy: 1_000)
        let (whole, fraction) = seconds.remainder < 0 ? (seconds.quotient - 1, seconds.remainder + 1_000) : seconds
        let text = Date(timeIntervalSince1970: Double(whole)).formatted(Date.ISO8601FormatStyle())
        let digits = String(fraction)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// The date in `text` (with or without fractional seconds, which count to the millisecond), or `nil` when
    /// `text` is not an ISO 8601 date and time in UTC.
    static func parse(_ text: String) -> Date? {
        var base = Substring(text)
        var millis: Int64 = 0
        if let dot = text.firstIndex(of: ".") {
            let digits = text[text.index(after: dot)...].prefix(while: \.isASCIIDigit)
            guard !digits.isEmpty else { return nil }
            let padded = (digits + "0000").prefix(4)  // three digits, and one to round by
            guard let value = Int64(padded) else { return nil }
            millis = (value + 5) / 10
            base = text[..<dot] + text[digits.endIndex...]
        }
        guard let whole = try? Date.ISO8601FormatStyle().parse(String(base)),
            let seconds = Int64(exactly: whole.timeIntervalSince1970.rounded())
        else { return nil }
        return date(milliseconds: seconds * 1_000 + millis)
    }

    /// `date` rounded to the millisecond, as a cassette holds it.
    static func rounded(_ date: Date) -> Date {
        self.date(milliseconds: milliseconds(date))
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000).rounded()
        // Dates beyond a few hundred million years (or not finite) are not recorded ones: clamped.
        guard value.isFinite else { return 0 }
        return Int64(min(max(value, -1e16), 1e16))
    }

    private static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

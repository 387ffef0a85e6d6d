public import Foundation

/// Reads how long a server asks a client to wait, from `Retry-After` (RFC 9110 §10.2.3), `RateLimit-Reset`
/// (IETF RateLimit header fields) and `X-RateLimit-Reset`.
public enum RetryAfter {
    /// The wait a response asks for, or `nil` when it names none.
    ///
    /// - `Retry-After`: delta-seconds (`120`) or an HTTP-date (`Wed, 21 Oct 2026 07:28:00 GMT`, also the
    ///   obsolete RFC 850 and asctime forms).
    /// - `RateLimit-Reset`: delta-seconds.
    /// - `X-RateLimit-Reset`: used by many APIs either as delta-seconds or as a Unix time in seconds; values
    ///   above one billion are read as a Unix time.
    ///
    /// A date in the past means "now" (zero). `Retry-After` wins when several are present.
    public static func delay(in response: HTTPResponse, now: Date) -> Duration? {
        if let value = response.headers["Retry-After"], let delay = parse(value, now: now) { return delay }
        if let value = response.headers["RateLimit-Reset"], let seconds = deltaSeconds(value) {
            return .seconds(seconds)
        }
        if let value = response.headers["X-RateLimit-Reset"], let number = deltaSeconds(value) {
            if number > 1_000_000_000 {
                return .seconds(max(0, Double(number) - now.timeIntervalSince1970))
            }
            return .seconds(number)
        }
        return nil
    }

    /// Parses a `Retry-After` value: delta-seconds or an HTTP-date.
    public static func parse(_ value: String, now: Date) -> Duration? {
        if let seconds = deltaSeconds(value) { return .seconds(seconds) }
        guard let date = httpDate(value) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }

    /// A non-negative integer, as delta-seconds must be.
    static func deltaSeconds(_ value: String) -> Int? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(trimmed.prefix(18))
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Parses an HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, RFC 850 or asctime form, always GMT.
    public static func httpDate(_ value: String) -> Date? {
        let parts = value.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int?
        var month: Int?
        var year: Int?
        var time: [Int]?
        switch parts.count {
        case 6 where parts[5] == "GMT":
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            day = Int(parts[1])
            month = months.firstIndex(of: parts[2].lowercased()).map { $0 + 1 }
            year = Int(parts[3])
            time = clock(parts[4])
        case 4 where parts[3] == "GMT":
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let date = parts[1].split(separator: "-").map(String.init)
            guard date.count == 3, let shortYear = Int(date[2]) else { return nil }
            day = Int(date[0])
            month = months.firstIndex(of: date[1].lowercased()).map { $0 + 1 }
            year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear
            time = clock(parts[2])
        case 5:
            // asctime: Sun Nov  6 08:49:37 1994
            month = months.firstIndex(of: parts[1].lowercased()).map { $0 + 1 }
            day = Int(parts[2])
            time = clock(parts[3])
            year = Int(parts[4])
        default:
            return nil
        }
        guard let day, let month, let year, let time, time.count == 3 else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "GMT")
        components.year = year
        components.month = month
        components.day = day
        components.hour = time[0]
        components.minute = time[1]
        components.second = time[2]
        guard components.isValidDate else { return nil }
        return components.date
    }

    private static func clock(_ text: String) -> [Int]? {
        let values = text.split(separator: ":").compactMap { Int($0) }
        guard values.count == 3, (0..<24).contains(values[0]), (0..<60).contains(values[1]),
            (0...60).contains(values[2])
        else { return nil }
        return values
    }
}

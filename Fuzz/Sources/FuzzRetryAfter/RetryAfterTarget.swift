import Foundation
import FuzzSupport
import HTTP

/// `Retry-After` and friends, and the `Backoff` strategy that reads them: anything a server sends in those fields,
/// any time, any configuration an app can write.
///
/// Oracles, beyond "no trap": a wait is never negative; delta-seconds read as their number (leading zeros
/// included); an HTTP-date made from valid parts reads as that instant; `delay(in:now:)` agrees with `parse` for
/// `Retry-After`; a `Backoff` configured with non-negative durations waits between zero and its maximum delay,
/// never retries past its attempts or a cancelled, reset or invalid request, and never waits less than or longer
/// than the server's `Retry-After` allows.
enum RetryAfterTarget: FuzzTarget {
    enum Case {
        case parse(String, now: Date)
        case httpDate(String)
        case madeDate(DateParts)
        case delay([(name: String, value: String)], now: Date)
        case backoff(BackoffCase)
    }

    static func read(_ input: inout FuzzInput) -> Case {
        switch input.choice(5) {
        case 0: .parse(input.string(), now: input.date())
        case 1: .httpDate(input.string())
        case 2: .madeDate(DateParts.read(&input))
        case 3: .delay(readRateLimitFields(&input), now: input.date())
        default: .backoff(BackoffCase.read(&input))
        }
    }

    static func run(_ input: inout FuzzInput) {
        switch read(&input) {
        case .parse(let value, let now): checkParse(value, now: now)
        case .httpDate(let value):
            if RetryAfter.httpDate(value) != nil {
                FuzzCheck.expect(
                    RetryAfter.parse(value, now: FuzzInput.referenceNow) != nil,
                    "httpDate(\(SwiftLiteral.string(value))) reads a date but parse does not")
            }
        case .madeDate(let parts): parts.check()
        case .delay(let fields, let now): checkDelay(fields, now: now)
        case .backoff(let backoff): backoff.check()
        }
    }

    static func reproducer(_ input: inout FuzzInput) -> String {
        switch read(&input) {
        case .parse(let value, let now):
            return "_ = RetryAfter.parse(\(SwiftLiteral.string(value)), now: \(SwiftLiteral.date(now)))"
        case .httpDate(let value):
            return "_ = RetryAfter.httpDate(\(SwiftLiteral.string(value)))"
        case .madeDate(let parts):
            return "_ = RetryAfter.httpDate(\(SwiftLiteral.string(parts.text)))  // \(parts)"
        case .delay(let fields, let now):
            return """
                let response = HTTPResponse(request: HTTPRequest(), status: .tooManyRequests, headers: \(SwiftLiteral.fields(fields)))
                _ = RetryAfter.delay(in: response, now: \(SwiftLiteral.date(now)))
                """
        case .backoff(let backoff):
            return backoff.swift
        }
    }

    /// `parse` never answers a negative wait, reads delta-seconds as their number, and an HTTP-date as the time
    /// from `now` until then.
    static func checkParse(_ value: String, now: Date) {
        let delay = RetryAfter.parse(value, now: now)
        if let delay { FuzzCheck.expect(delay >= .zero, "parse(\(SwiftLiteral.string(value))) is negative: \(delay)") }
        let trimmed = value.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            if let number = Int(trimmed) {
                // Clamped to a century, the longest wait in this package.
                FuzzCheck.expect(
                    delay == .seconds(min(number, 3_155_760_000)),
                    "parse(\(SwiftLiteral.string(value))) is \(String(describing: delay)), not \(number) seconds")
            } else {
                // Larger than any Int: RFC 9110 §10.2.3 lets a client read it as a very long wait, never a short one.
                FuzzCheck.expect(
                    delay.map { $0 >= .seconds(2_147_483_648) } == true,
                    "parse(\(SwiftLiteral.string(value))) is \(String(describing: delay)), a short wait for a huge number"
                )
            }
        }
    }

    /// `delay(in:now:)` takes `Retry-After` first — each field line on its own (a singleton field: lines are never
    /// joined into one value, which could splice a date together), the longest wait of those that parse — and never
    /// answers a negative wait.
    static func checkDelay(_ fields: [(name: String, value: String)], now: Date) {
        let response = HTTPResponse(request: HTTPRequest(), status: .tooManyRequests, headers: makeHeaders(fields))
        let delay = RetryAfter.delay(in: response, now: now)
        if let delay { FuzzCheck.expect(delay >= .zero, "delay(in:) is negative: \(delay)") }
        let lines = response.headers.values(for: "Retry-After").compactMap { RetryAfter.parse($0, now: now) }
        if let longest = lines.max() {
            FuzzCheck.expect(
                delay == longest, "delay(in:) is \(String(describing: delay)), Retry-After's lines say \(lines)")
        }
    }

    static let rateLimitNames = ["Retry-After", "RateLimit-Reset", "X-RateLimit-Reset", "retry-after", "X-Other"]

    static func readRateLimitFields(_ input: inout FuzzInput) -> [(name: String, value: String)] {
        (0..<input.count(upTo: 3)).map { _ in (input.pick(rateLimitNames), input.string()) }
    }

    static func writeRateLimitFields(_ fields: [(name: String, value: String)], _ writer: inout SeedWriter) {
        writer.count(fields.count, upTo: 3)
        for field in fields {
            writer.choice(rateLimitNames.firstIndex(of: field.name)!, of: rateLimitNames.count)
            writer.string(field.value)
        }
    }
}

/// An HTTP-date written from numbers, in one of its three forms, and the instant it must read as.
struct DateParts: CustomStringConvertible {
    enum Form: Int { case imf, rfc850, asctime }

    var form: Form
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func read(_ input: inout FuzzInput) -> DateParts {
        DateParts(
            form: Form(rawValue: input.choice(3))!, year: input.bool() ? 1900 + input.choice(8100) : input.int(),
            month: 1 + input.choice(12), day: 1 + input.choice(31), hour: input.choice(24), minute: input.choice(60),
            second: input.choice(60))
    }

    func write(_ writer: inout SeedWriter) {
        writer.choice(form.rawValue, of: 3)
        writer.bool(true)
        writer.choice(year - 1900, of: 8100)
        writer.choice(month - 1, of: 12)
        writer.choice(day - 1, of: 31)
        writer.choice(hour, of: 24)
        writer.choice(minute, of: 60)
        writer.choice(second, of: 60)
    }

    var text: String {
        let time = [hour, minute, second].map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: ":")
        let paddedDay = day < 10 ? "0\(day)" : "\(day)"
        let monthName = Self.months[month - 1]
        switch form {
        case .imf: return "Sun, \(paddedDay) \(monthName) \(year) \(time) GMT"
        case .rfc850:
            let shortYear = ((year % 100) + 100) % 100
            return "Sunday, \(paddedDay)-\(monthName)-\(shortYear < 10 ? "0" : "")\(shortYear) \(time) GMT"
        case .asctime: return "Sun \(monthName) \(day < 10 ? " " : "")\(day) \(time) \(year)"
        }
    }

    /// The year the text names when read at `date`. RFC 850's two digits, by RFC 9110 §5.6.7: the most recent year
    /// with those digits that is not more than 50 years after `date` — 50 calendar years: the same day and time of
    /// day, 50 years on (GMT).
    func writtenYear(readAt date: Date) -> Int {
        guard form == .rfc850 else { return year }
        let shortYear = ((year % 100) + 100) % 100
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let thisYear = parts.year!
        let secondsOfDay = Int(date.timeIntervalSince1970.rounded(.down)) % 86_400
        let limit = Double(
            Self.daysFromCivil(year: thisYear + 50, month: parts.month!, day: parts.day!) * 86_400
                + (secondsOfDay + 86_400) % 86_400)
        var candidate = (thisYear / 100) * 100 + shortYear
        if let time = interval(forYear: candidate), time > limit { candidate -= 100 }
        if let time = interval(forYear: candidate + 100), time <= limit { candidate += 100 }
        return candidate
    }

    /// Seconds since 1970 of this date and time (proleptic Gregorian, GMT) read at `date`, or `nil` for a day the
    /// month lacks.
    func expectedTimeInterval(readAt date: Date) -> Double? { interval(forYear: writtenYear(readAt: date)) }

    /// Seconds since 1970 of this date and time in `year`, or `nil` for a day the month lacks.
    func interval(forYear year: Int) -> Double? {
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthLengths = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthLengths[month - 1] else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    func check() {
        let parsed = RetryAfter.httpDate(text)  // read now, by the machine's clock
        let today = Date()
        guard (1900...9999).contains(writtenYear(readAt: today)), let expected = expectedTimeInterval(readAt: today)
        else { return }
        FuzzCheck.expect(
            parsed?.timeIntervalSince1970 == expected,
            "httpDate(\(SwiftLiteral.string(text))) is \(String(describing: parsed)), not \(Date(timeIntervalSince1970: expected))"
        )
        // `parse` reads a two-digit year relative to the `now` it is given, which is not the machine's clock: near
        // the 50-year boundary the two can name different centuries.
        let now = FuzzInput.referenceNow
        guard (1900...9999).contains(writtenYear(readAt: now)), let then = expectedTimeInterval(readAt: now) else {
            return
        }
        // Waits are clamped to a century, the longest a clock can sleep in this package.
        let century = 3_155_760_000.0
        FuzzCheck.expect(
            RetryAfter.parse(text, now: now) == .seconds(min(century, max(0, then - now.timeIntervalSince1970))),
            "parse(\(SwiftLiteral.string(text))) is not the time from now until then")
    }

    var description: String { "\(year)-\(month)-\(day) \(hour):\(minute):\(second), \(form)" }
}

public import Foundation

/// Reads how long a server asks a client to wait, from `Retry-After` (RFC 9110 §10.2.3), `RateLimit-Reset`
/// (the IETF RateLimit header fields) and `X-RateLimit-Reset`.
///
/// ```swift
/// if let wait = RetryAfter.delay(in: response, now: Date()), wait <= .seconds(60) {
///     try await Task.sleep(for: wait)
/// }
/// ```
///
/// Nothing a server sends makes these functions trap: a wait is never negative, a date in the past is zero,
/// and a wait longer than a century — `Retry-After: 99999999999999999999` — is read as a century.
public enum RetryAfter {
    /// The wait a response asks for, or `nil` when it names none.
    ///
    /// - `Retry-After`, on any response: delay-seconds or an HTTP-date, as ``parse(_:now:)`` reads them.
    ///   When the field appears more than once, the longest wait wins.
    /// - `RateLimit-Reset` (delta-seconds) and `X-RateLimit-Reset` (delta-seconds, or a Unix time in
    ///   seconds when above one billion, as many APIs send it), only when the quota they describe is used
    ///   up: on a `429 Too Many Requests`, or with `RateLimit-Remaining: 0` or `X-RateLimit-Remaining: 0`.
    ///   APIs send these fields on every response; while quota remains, the reset time says when the window
    ///   ends, not how long to wait — a `502` from such an API is worth retrying before it.
    ///
    /// `Retry-After` wins when several are present.
    ///
    /// - Parameters:
    ///   - response: The response to read.
    ///   - now: The current time, for HTTP-dates and Unix times.
    /// - Returns: The wait, between zero and a century; `nil` when no field names one or none can be read.
    public static func delay(in response: HTTPResponse, now: Date) -> Duration? {
        var longest: Duration?
        for value in response.headers.values(for: "Retry-After") {
            if let delay = parse(value, now: now), longest.map({ delay > $0 }) ?? true { longest = delay }
        }
        if let longest { return longest }

        guard isQuotaUsedUp(response) else { return nil }
        if let value = response.headers["RateLimit-Reset"], let seconds = deltaSeconds(value) {
            return Duration(clampingRetrySeconds: Double(seconds))
        }
        if let value = response.headers["X-RateLimit-Reset"], let number = deltaSeconds(value) {
            if number > 1_000_000_000 {
                return Duration(clampingRetrySeconds: Double(number) - now.timeIntervalSince1970)
            }
            return Duration(clampingRetrySeconds: Double(number))
        }
        return nil
    }

    /// Whether a response says its rate-limit quota is used up: a `429`, or a remaining quota of zero.
    private static func isQuotaUsedUp(_ response: HTTPResponse) -> Bool {
        if response.status == .tooManyRequests { return true }
        return ["RateLimit-Remaining", "X-RateLimit-Remaining"].contains { name in
            response.headers[name].flatMap(deltaSeconds) == 0
        }
    }

    /// Parses a `Retry-After` value: delay-seconds or an HTTP-date.
    ///
    /// - delay-seconds (`120`): decimal digits (`1*DIGIT`), with spaces or tabs around them. Nothing else: a
    ///   fraction (`1.5`, `1.0`), a sign (`-5`, `+5`), an exponent or digits of other scripts make the value invalid,
    ///   and it is ignored (RFC 9110 §10.2.3 allows only digits; urllib3 and Chromium ignore such values too).
    /// - An HTTP-date, in any format ``httpDate(_:now:)`` accepts. A date in the past is zero.
    ///
    /// - Parameters:
    ///   - value: The field value.
    ///   - now: The current time.
    /// - Returns: The wait, between zero and a century, or `nil` when `value` is neither.
    public static func parse(_ value: String, now: Date) -> Duration? {
        if let seconds = deltaSeconds(value) { return Duration(clampingRetrySeconds: Double(seconds)) }
        guard let date = HTTPDate.secondsSince1970(value, now: now) else { return nil }
        return Duration(clampingRetrySeconds: Double(date) - now.timeIntervalSince1970)
    }

    /// Parses an HTTP-date (RFC 9110 §5.6.7) as robustly as the RFC encourages recipients to.
    ///
    /// All three HTTP formats — `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`,
    /// `Sun Nov  6 08:49:37 1994` — and the variants that servers and the Internet Message Format (RFC 5322)
    /// produce, which Python's `email.utils`, Go's `http.ParseTime` and OkHttp also accept:
    /// - day and month names in any case, in full or abbreviated to three letters or more; the day name may
    ///   be missing, and is not checked against the date;
    /// - any run of spaces, tabs and commas between the parts;
    /// - `UTC`, `UT`, `Z`, a numeric offset (`+0000`, `-0800`, `+05:30`) or a North American zone (`EST`,
    ///   `PDT`, …) in place of `GMT`; no zone means GMT;
    /// - seconds left out (`08:49`), one-digit fields, a leap second (`:60`);
    /// - the date as `06 Nov 1994`, `06-Nov-94` or `Nov 6 1994`;
    /// - two-digit years read by RFC 9110's rule: a date more than 50 years in the future is in the most
    ///   recent past year with the same last two digits (in 2026, `76` is 2076 and `77` is 1977). Three-digit
    ///   years have 1900 added (RFC 5322).
    ///
    /// ISO 8601, numeric months and impossible dates (31 April, 29 February 2026) are not HTTP-dates.
    ///
    /// - Parameters:
    ///   - value: The text to parse.
    ///   - now: The time two-digit years are read relative to.
    /// - Returns: The date, or `nil` when `value` is not an HTTP-date.
    public static func httpDate(_ value: String, now: Date = Date()) -> Date? {
        HTTPDate.secondsSince1970(value, now: now).map { Date(timeIntervalSince1970: Double($0)) }
    }

    /// delay-seconds (RFC 9110 §10.2.3: `1*DIGIT`), with the spaces or tabs a field value may have around it; at most
    /// 10¹² (more than a century). `nil` for anything else — a fraction, a sign, an exponent, digits of other scripts:
    /// the grammar allows none of them, and a recipient ignores a value it does not allow.
    static func deltaSeconds(_ value: String) -> Int64? {
        var utf8 = Substring(value).utf8
        while let first = utf8.first, first == 0x20 || first == 0x09 { utf8.removeFirst() }
        while let last = utf8.last, last == 0x20 || last == 0x09 { utf8.removeLast() }
        guard !utf8.isEmpty else { return nil }
        var whole: Int64 = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            whole = min(whole * 10 + Int64(byte - UInt8(ascii: "0")), 1_000_000_000_000)
        }
        return whole
    }
}

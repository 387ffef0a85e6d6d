import Foundation

/// Parses HTTP-dates (RFC 9110 §5.6.7) as robustly as the RFC encourages recipients to: the three HTTP
/// formats and the Internet Message Format's date-times (RFC 5322 §3.3, §4.3) that messages forwarded from
/// other sources carry. ``RetryAfter/httpDate(_:now:)`` lists what is accepted. Text over 128 bytes is not
/// a date; no input traps.
enum HTTPDate {
    /// The seconds since 1970-01-01 00:00:00 UTC that `text` names, or `nil` when it is not a date.
    ///
    /// - Parameters:
    ///   - text: The field value.
    ///   - now: The time two-digit years are read relative to.
    static func secondsSince1970(_ text: String, now: Date) -> Int64? {
        var text = text
        return text.withUTF8 { parse($0, now: now) }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, now: Date) -> Int64? {
        guard bytes.count <= 128, var tokens = tokenize(bytes) else { return nil }

        if let first = tokens.first, nameIndex(first, in: dayNames) != nil { tokens.removeFirst() }
        var zoneOffset: Int64?
        if let index = tokens.indices.dropFirst().first(where: { offsetOfZone(tokens[$0]) != nil }) {
            zoneOffset = offsetOfZone(tokens[index])
            tokens.remove(at: index)
        }
        guard tokens.count == 4 else { return nil }

        let day: ArraySlice<UInt8>
        let monthName: ArraySlice<UInt8>
        let year: ArraySlice<UInt8>
        let time: ArraySlice<UInt8>
        if isNumber(tokens[0]) {  // 06 Nov 1994 08:49:37
            (day, monthName, year, time) = (tokens[0], tokens[1], tokens[2], tokens[3])
        } else if tokens[3].contains(UInt8(ascii: ":")) {  // Nov 6 1994 08:49:37
            (monthName, day, year, time) = (tokens[0], tokens[1], tokens[2], tokens[3])
        } else {  // asctime: Nov 6 08:49:37 1994
            (monthName, day, time, year) = (tokens[0], tokens[1], tokens[2], tokens[3])
        }

        guard let month = nameIndex(monthName, in: monthNames).map({ Int64($0 + 1) }),
            day.count <= 2, let day = number(day),
            let (hour, minute, second) = clockTime(time),
            let (yearValue, digits) = number(year).map({ ($0, year.count) }), digits >= 2
        else { return nil }
        let zone = zoneOffset ?? 0
        let timeOfDay = hour * 3600 + minute * 60 + second - zone

        var fullYear = yearValue
        switch digits {
        case 2:
            // RFC 9110 §5.6.7: more than 50 years in the future means the most recent past year with these
            // digits. The year that follows from "not more than 50 years ahead" is the latest such year.
            let (nowYear, nowMonth, nowDay, nowSeconds) = civilTime(of: now)
            let horizon = daysFromCivil(year: nowYear + 50, month: nowMonth, day: nowDay) * 86_400 + nowSeconds
            func stamp(_ year: Int64) -> Int64 {
                daysFromCivil(year: year, month: month, day: day) * 86_400 + timeOfDay
            }
            fullYear = nowYear - floorMod(nowYear, 100) + yearValue
            if stamp(fullYear) > horizon {
                fullYear -= 100
            } else if stamp(fullYear + 100) <= horizon {
                fullYear += 100
            }
        case 3:
            fullYear += 1900
        default:
            break
        }
        guard (1...daysInMonth(month, of: fullYear)).contains(day) else { return nil }
        return daysFromCivil(year: fullYear, month: month, day: day) * 86_400 + timeOfDay
    }

    /// `date` as an IMF-fixdate (RFC 9110 §5.6.7), `Sun, 06 Nov 1994 08:49:37 GMT`: what a cache writes in the
    /// `Date` of a response that came without one (§6.6.1). Dates beyond the years 0–9999 are written at those
    /// bounds.
    static func format(_ date: Date) -> String {
        let lowest = Double(daysFromCivil(year: 0, month: 1, day: 1) * 86_400)
        let highest = Double(daysFromCivil(year: 9999, month: 12, day: 31) * 86_400 + 86_399)
        let interval = date.timeIntervalSince1970
        let clamped = Date(timeIntervalSince1970: interval.isNaN ? 0 : min(max(interval, lowest), highest))
        let (year, month, day, second) = civilTime(of: clamped)
        let days = daysFromCivil(year: year, month: month, day: day)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        return weekdays[Int(floorMod(days + 4, 7))] + ", " + twoDigits(day) + " " + months[Int(month - 1)] + " "
            + String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText + " " + twoDigits(second / 3600)
            + ":" + twoDigits(second / 60 % 60) + ":" + twoDigits(second % 60) + " GMT"
    }

    // MARK: Tokens

    /// The parts of the text between spaces, tabs and commas; `06-Nov-94` is three parts.
    private static func tokenize(_ bytes: UnsafeBufferPointer<UInt8>) -> [ArraySlice<UInt8>]? {
        var tokens: [ArraySlice<UInt8>] = []
        for word in Array(bytes).split(whereSeparator: { $0 == 0x20 || $0 == 0x09 || $0 == UInt8(ascii: ",") }) {
            // A hyphen separates the parts of an RFC 850 date; a leading one is a zone's sign.
            if word.first != UInt8(ascii: "-"), word.contains(UInt8(ascii: "-")) {
                let parts = word.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
                guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
                tokens += parts
            } else {
                tokens.append(word)
            }
        }
        return tokens
    }

    private static let dayNames = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        .map { Array($0.utf8) }
    private static let monthNames = [
        "january", "february", "march", "april", "may", "june",
        "july", "august", "september", "october", "november", "december",
    ].map { Array($0.utf8) }

    /// The index of the name `token` spells in full or abbreviates to three letters or more, in any case.
    private static func nameIndex(_ token: ArraySlice<UInt8>, in names: [[UInt8]]) -> Int? {
        guard token.count >= 3 else { return nil }
        return names.firstIndex { name in
            token.count <= name.count && zip(token, name).allSatisfy { lowercased($0) == $1 }
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// Zones named by RFC 5322 (§3.3, §4.3), and `UTC`, with their offsets from UTC in hours.
    private static let zoneNames: [(name: [UInt8], hours: Int64)] = {
        let zones: [(String, Int64)] = [
            ("gmt", 0), ("ut", 0), ("utc", 0), ("z", 0),
            ("est", -5), ("edt", -4), ("cst", -6), ("cdt", -5), ("mst", -7), ("mdt", -6), ("pst", -8), ("pdt", -7),
        ]
        return zones.map { (Array($0.0.utf8), $0.1) }
    }()

    /// The offset from UTC, in seconds, of a zone name or a numeric offset (`+hhmm`, `-hhmm`, `+hh:mm`).
    private static func offsetOfZone(_ token: ArraySlice<UInt8>) -> Int64? {
        if let zone = zoneNames.first(where: { $0.name.elementsEqual(token.lazy.map(lowercased)) }) {
            return zone.hours * 3600
        }
        guard let sign = token.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        var digits = token.dropFirst()
        if digits.count == 5, digits[digits.startIndex + 2] == UInt8(ascii: ":") {
            digits.remove(at: digits.startIndex + 2)
        }
        guard digits.count == 4, let hours = number(digits.prefix(2)), let minutes = number(digits.suffix(2)),
            hours < 24, minutes < 60
        else { return nil }
        let offset = hours * 3600 + minutes * 60
        return sign == UInt8(ascii: "-") ? -offset : offset
    }

    private static func isNumber(_ token: ArraySlice<UInt8>) -> Bool {
        !token.isEmpty && token.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The value of one to nine decimal digits.
    private static func number(_ token: ArraySlice<UInt8>) -> Int64? {
        guard token.count <= 9, isNumber(token) else { return nil }
        return token.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
    }

    /// `hh:mm:ss` or `hh:mm`, each part one or two digits.
    private static func clockTime(_ token: ArraySlice<UInt8>) -> (Int64, Int64, Int64)? {
        let parts = token.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts.allSatisfy({ $0.count <= 2 }),
            let hour = number(parts[0]), let minute = number(parts[1]),
            let second = parts.count == 3 ? number(parts[2]) : 0,
            hour < 24, minute < 60, second <= 60
        else { return nil }
        return (hour, minute, second)
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, UTC)

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
    private static func floorMod(_ a: Int64, _ b: Int64) -> Int64 { a - floorDiv(a, b) * b }

    private static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysInMonth(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a date; days past the end of a month roll into the next.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = floorDiv(year, 400)
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The UTC year, month, day and second of the day of `date`; dates more than 950,000 years either side
    /// of 1970, and NaN, count as those bounds and 1970.
    static func civilTime(of date: Date) -> (year: Int64, month: Int64, day: Int64, second: Int64) {
        let limit = 3.0e13
        let interval = date.timeIntervalSince1970
        let seconds = interval.isNaN ? 0 : Int64(min(max(interval, -limit), limit).rounded(.down))
        let days = floorDiv(seconds, 86_400)
        let second = seconds - days * 86_400
        let shifted = days + 719_468
        let era = floorDiv(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day, second)
    }
}

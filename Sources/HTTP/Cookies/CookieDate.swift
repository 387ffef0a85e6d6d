import Foundation

/// RFC 6265bis §5.1.1's cookie-date algorithm: the lenient reading of `Expires` every browser shares, which finds a
/// time, a day, a month and a year among tokens in any order (`Wed, 09 Jun 2021 10:18:14 GMT`,
/// `Wednesday, 09-Jun-21 10:18:14 GMT`, `Jun 9 10:18:14 2021`).
enum CookieDate {
    /// The date in `bytes`, or `nil` when the algorithm fails (a part missing or out of range, a day the month does
    /// not have, a year before 1601).
    static func parse(_ bytes: ArraySlice<UInt8>) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in bytes.split(whereSeparator: isDelimiter) {
            if time == nil, let found = hmsTime(token) {
                time = found
            } else if day == nil, let found = leadingDigits(token, from: 1, to: 2) {
                day = found
            } else if month == nil, let found = monthNumber(token) {
                month = found
            } else if year == nil, let found = leadingDigits(token, from: 2, to: 4) {
                year = found
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
            day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = Double(days) * 86_400 + Double(time.hour * 3_600 + time.minute * 60 + time.second)
        return Date(timeIntervalSince1970: seconds)
    }

    /// `delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte)
            || (0x7B...0x7E).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `from`…`to` digits, then nothing or a non-digit and anything.
    private static func leadingDigits(_ token: ArraySlice<UInt8>, from minimum: Int, to maximum: Int) -> Int? {
        let digits = token.prefix(while: isDigit)
        guard (minimum...maximum).contains(digits.count) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `hms-time = time-field ":" time-field ":" time-field`, each one or two digits, then nothing or a non-digit
    /// and anything.
    private static func hmsTime(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var fields: [Int] = []
        var rest = token
        for index in 0..<3 {
            let digits = rest.prefix(while: isDigit)
            guard (1...2).contains(digits.count) else { return nil }
            fields.append(digits.reduce(0) { $0 * 10 + Int($1 - 0x30) })
            rest = rest.dropFirst(digits.count)
            if index < 2 {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                rest = rest.dropFirst()
            } else if let next = rest.first, isDigit(next) {
                return nil
            }
        }
        return (fields[0], fields[1], fields[2])
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// A month's number from a token starting with its first three letters, in any case.
    private static func monthNumber(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

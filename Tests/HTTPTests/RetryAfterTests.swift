import Foundation
import HTTP
import Testing

/// A date from its UTC components, computed by Foundation's calendar: an oracle independent of the parser.
func utcDate(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
    var components = DateComponents()
    (components.year, components.month, components.day) = (year, month, day)
    (components.hour, components.minute, components.second) = (hour, minute, second)
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "GMT")!
    return calendar.date(from: components)!
}

/// A seed for a randomised test: `RANDOM_SEED` from the environment replays a failed run.
func randomSeed(_ test: String) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["RANDOM_SEED"].flatMap(UInt64.init) ?? .random(in: 0...UInt64.max)
    print("\(test): seed \(seed) (replay with RANDOM_SEED=\(seed))")
    return seed
}

@Suite(.noHang) struct RetryAfterTests {
    /// Sat, 21 Nov 2026 12:00:00 GMT.
    private let now = Date(timeIntervalSince1970: 1_795_262_400)
    private let century = Duration.seconds(3_155_760_000)

    // MARK: HTTP-dates

    @Test(arguments: [
        // The three formats of RFC 9110 §5.6.7.
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        // Case.
        "SUN, 06 NOV 1994 08:49:37 GMT",
        "sun, 06 nov 1994 08:49:37 gmt",
        "sunday, 06-nov-94 08:49:37 gmt",
        "sun nov  6 08:49:37 1994",
        // Whitespace and commas.
        "  Sun,  06   Nov 1994\t08:49:37 GMT  ",
        "Sun,06 Nov 1994 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994",
        // Missing, abbreviated, full or mismatched weekday.
        "06 Nov 1994 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT",
        "Mon, 06 Nov 1994 08:49:37 GMT",
        "Thurs, 06 Nov 1994 08:49:37 GMT",
        "06-Nov-94 08:49:37 GMT",
        "Nov  6 08:49:37 1994",
        // Full month names and other abbreviations.
        "Sun, 06 November 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        // Zones other than GMT.
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 UT",
        "Sun, 06 Nov 1994 08:49:37 Z",
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 06 Nov 1994 08:49:37 -0000",
        "Sun, 06 Nov 1994 00:49:37 -0800",
        "Sun, 06 Nov 1994 00:49:37 PST",
        "Sun, 06 Nov 1994 03:49:37 EST",
        "Sun, 06 Nov 1994 14:19:37 +05:30",
        "Sunday, 06-Nov-94 08:49:37 UTC",
        "Sun Nov  6 08:49:37 GMT 1994",
        "Sun Nov  6 08:49:37 1994 GMT",
        // No zone; other orders peers accept.
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov 6 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
    ])
    func readsEveryFormatAndTheVariantsPeersAccept(value: String) {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // RFC 9110's example instant
        #expect(RetryAfter.httpDate(value, now: now) == expected)
    }

    @Test func readsTimesWithoutSecondsAndLeapSeconds() {
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49 GMT", now: now) == utcDate(1994, 11, 6, 8, 49))
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 8:9:7 GMT", now: now) == utcDate(1994, 11, 6, 8, 9, 7))
        #expect(RetryAfter.httpDate("Wed, 31 Dec 2025 23:59:60 GMT", now: now) == utcDate(2026, 1, 1))
        #expect(RetryAfter.httpDate("Thu, 29 Feb 2024 00:00:00 GMT", now: now) == utcDate(2024, 2, 29))
    }

    @Test(arguments: [
        "", "   ", "yesterday", "120 seconds", "2026-11-21T12:00:00Z", "21/11/2026 12:00:00",
        "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:60:37 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 31 Apr 1994 08:49:37 GMT", "Sun, 29 Feb 2026 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 No 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT GMT", "Sun, 06 Nov 1994 08:49:37 XYZ",
        "Sun, 06 Nov 1994 08:49:37 +2400", "Sun, 06 Nov 1994 08:49:37 +0060", "Sun, 06 11 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 GMT", "Sun, 06 Nov 1994 08:49:37:00 GMT", "Sun, 006 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 4 08:49:37 GMT", "Sun, 06 Nov 1994999999 08:49:37 GMT", "Sun, 06--Nov-94 08:49:37 GMT",
        "GMT, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " ", count: 120),
        "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "Sün, 06 Nov 1994 08:49:37 GMT",
    ])
    func rejectsWhatIsNotADate(value: String) {
        #expect(RetryAfter.httpDate(value, now: now) == nil)
    }

    @Test func twoDigitYearsMoreThanFiftyYearsAheadAreInThePastCentury() {
        // RFC 9110 §5.6.7, from Sat, 21 Nov 2026 12:00:00 GMT: 50 years ahead is 21 Nov 2076 12:00:00.
        #expect(RetryAfter.httpDate("Sat, 21-Nov-76 12:00:00 GMT", now: now) == utcDate(2076, 11, 21, 12))
        #expect(RetryAfter.httpDate("Sat, 21-Nov-76 12:00:01 GMT", now: now) == utcDate(1976, 11, 21, 12, 0, 1))
        #expect(RetryAfter.httpDate("Sat, 21-Nov-76 12:00:01 +0000", now: now) == utcDate(1976, 11, 21, 12, 0, 1))
        // The instant counts, not the local time.
        #expect(RetryAfter.httpDate("Sat, 21-Nov-76 13:00:00 +0100", now: now) == utcDate(2076, 11, 21, 12))
        #expect(RetryAfter.httpDate("Sat, 21-Nov-76 12:00:00 -0100", now: now) == utcDate(1976, 11, 21, 13))
        #expect(RetryAfter.httpDate("Fri, 20-Nov-76 00:00:00 GMT", now: now) == utcDate(2076, 11, 20))
        #expect(RetryAfter.httpDate("Mon, 01-Jan-77 00:00:00 GMT", now: now) == utcDate(1977, 1, 1))
        #expect(RetryAfter.httpDate("Sat, 21-Nov-26 12:00:00 GMT", now: now) == utcDate(2026, 11, 21, 12))
        #expect(RetryAfter.httpDate("Sat, 01-Jan-00 00:00:00 GMT", now: now) == utcDate(2000, 1, 1))
        #expect(RetryAfter.httpDate("Wed, 31-Dec-99 23:59:59 GMT", now: now) == utcDate(1999, 12, 31, 23, 59, 59))
        // Late in a century, a small number is in the next one.
        let late = utcDate(2095, 6, 1)
        #expect(RetryAfter.httpDate("Mon, 01-Jan-05 00:00:00 GMT", now: late) == utcDate(2105, 1, 1))
        #expect(RetryAfter.httpDate("Mon, 01-Jan-50 00:00:00 GMT", now: late) == utcDate(2050, 1, 1))
        // A 29 February that exists only in the century the rule picks.
        #expect(RetryAfter.httpDate("Tue, 29-Feb-00 00:00:00 GMT", now: utcDate(2060, 1, 1)) == nil)  // 2100
        #expect(RetryAfter.httpDate("Tue, 29-Feb-00 00:00:00 GMT", now: now) == utcDate(2000, 2, 29))
        // Three-digit years have 1900 added (RFC 5322 §4.3); longer ones are taken as written.
        #expect(RetryAfter.httpDate("Sun, 06 Nov 094 08:49:37 GMT", now: now) == utcDate(1994, 11, 6, 8, 49, 37))
        #expect(RetryAfter.httpDate("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == utcDate(9999, 12, 31, 23, 59, 59))
    }

    // MARK: Retry-After values

    @Test func deltaSecondsMayBeSurroundedByWhitespaceAndAreClampedToACentury() {
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 120 ", now: now) == .seconds(120))
        #expect(RetryAfter.parse("\t7\t", now: now) == .seconds(7))
        #expect(RetryAfter.parse("0", now: now) == .zero)
        #expect(RetryAfter.parse("000000000000000000000042", now: now) == .seconds(42))
        #expect(RetryAfter.parse("3155760000", now: now) == century)
        #expect(RetryAfter.parse("3155760001", now: now) == century)
        #expect(RetryAfter.parse("99999999999999999999999999999999999999999", now: now) == century)
    }

    /// RFC 9110 §10.2.3: delay-seconds is `1*DIGIT`; every other form is ignored.
    @Test func fractionsSignsAndOtherFormsAreIgnored() {
        for invalid in [
            "1.5", "1.0", "3600.0", "0.001", "7.", "-5", "+5", "-0", ".5", "1.2.3", "1e3", "0x10", "1 2", "", " ", "5s",
            "٣", "１", "1,000", "1_000", "\u{A0}5",
        ] {
            #expect(RetryAfter.parse(invalid, now: now) == nil, "\(invalid)")
        }
    }

    /// Random values over digits and the characters that come near them: exactly the `1*DIGIT` ones (with spaces or
    /// tabs around) are read, as their number; every other one is ignored. None can be a date: they have no letters.
    @Test func exactlyTheGrammarsValuesAreRead() {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let alphabet: [Character] = Array("0123456789012345678901234567.-+ \t,_eE٣１\u{A0}")
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...8, using: &random)
            let value = String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            let trimmed = value.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            let conforms = !trimmed.isEmpty && trimmed.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
            let parsed = RetryAfter.parse(value, now: now)
            if conforms {
                #expect(parsed == .seconds(Int64(trimmed)!), "\(value.debugDescription) (seed \(seed))")
            } else {
                #expect(parsed == nil, "\(value.debugDescription) (seed \(seed))")
            }
        }
    }

    @Test func aDateIsTheTimeUntilItAndADateInThePastIsZero() {
        #expect(RetryAfter.parse("Sat, 21 Nov 2026 13:00:00 GMT", now: now) == .seconds(3600))
        #expect(RetryAfter.parse("saturday, 21-nov-26 13:00:00 UTC", now: now) == .seconds(3600))
        #expect(RetryAfter.parse("Sat Nov 21 13:00:00 2026", now: now) == .seconds(3600))
        #expect(RetryAfter.parse("Sat, 21 Nov 2026 11:59:59 GMT", now: now) == .zero)
        #expect(RetryAfter.parse("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == century)
        let fractional = RetryAfter.parse("Sat, 21 Nov 2026 13:00:00 GMT", now: now.addingTimeInterval(0.25))
        #expect(
            fractional.map { $0 - .seconds(3599.75) < .microseconds(1) && .seconds(3599.75) - $0 < .microseconds(1) }
                == true)
    }

    @Test func anyNowIsAcceptable() {
        for now in [
            Date(timeIntervalSince1970: .nan), Date(timeIntervalSince1970: .infinity),
            Date(timeIntervalSince1970: -.infinity), Date(timeIntervalSince1970: 1e300),
            Date(timeIntervalSince1970: -1e300), .distantPast, .distantFuture,
        ] {
            for value in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "120"] {
                let delay = RetryAfter.parse(value, now: now)
                #expect(delay.map { $0 >= .zero && $0 <= century } ?? false, "\(value) at \(now)")
            }
        }
        #expect(RetryAfter.parse("Sat, 21 Nov 2026 13:00:00 GMT", now: .distantFuture) == .zero)
        #expect(RetryAfter.parse("Sat, 21 Nov 2026 13:00:00 GMT", now: .distantPast) == century)
    }

    // MARK: Which field

    private func response(_ status: HTTPStatus, _ fields: [(String, String)]) -> HTTPResponse {
        HTTPResponse(
            request: HTTPRequest(host: "example.com"), status: status,
            headers: HTTPHeaders(fields.map { HTTPHeaders.Field(name: $0.0, value: $0.1) }))
    }

    @Test func retryAfterWinsAndTheLongestOfSeveralIsTaken() {
        let both = response(.tooManyRequests, [("RateLimit-Reset", "50"), ("Retry-After", "20")])
        #expect(RetryAfter.delay(in: both, now: now) == .seconds(20))
        let repeated = response(
            .serviceUnavailable,
            [("Retry-After", "20"), ("Retry-After", "Sat, 21 Nov 2026 12:01:00 GMT"), ("Retry-After", "junk")])
        #expect(RetryAfter.delay(in: repeated, now: now) == .seconds(60))
        let invalidOnly = response(.tooManyRequests, [("Retry-After", "soon"), ("RateLimit-Reset", "9")])
        #expect(RetryAfter.delay(in: invalidOnly, now: now) == .seconds(9))
        #expect(RetryAfter.delay(in: response(.serviceUnavailable, []), now: now) == nil)
    }

    /// Found by fuzzing: an HTTP-date has a comma in it, so lines joined with ", " can splice a date together from
    /// pieces that are none. Each line is read on its own; when none is a wait, the other fields decide.
    @Test func retryAfterLinesAreReadOneByOneNeverJoined() {
        let split = response(
            .tooManyRequests,
            [("X-RateLimit-Reset", "5"), ("Retry-After", "Sun, 22 Nov "), ("Retry-After", "026 10:00:10 GMT")])
        #expect(split.headers["Retry-After"] == "Sun, 22 Nov , 026 10:00:10 GMT")
        #expect(RetryAfter.parse(split.headers["Retry-After"]!, now: now) == .zero)  // joined: a date, in 1926
        #expect(RetryAfter.delay(in: split, now: now) == .seconds(5))
    }

    @Test func resetFieldsCountOnlyWhenTheQuotaIsUsedUp() {
        let unixTime = "1795262445"  // 45 s after `now`
        // A quota that remains: the reset is when the window ends, not a wait.
        #expect(RetryAfter.delay(in: response(.badGateway, [("X-RateLimit-Reset", unixTime)]), now: now) == nil)
        let remaining = response(.badGateway, [("X-RateLimit-Remaining", "4000"), ("X-RateLimit-Reset", unixTime)])
        #expect(RetryAfter.delay(in: remaining, now: now) == nil)
        #expect(RetryAfter.delay(in: response(.serviceUnavailable, [("RateLimit-Reset", "30")]), now: now) == nil)
        // Used up: a 429, or a remaining quota of zero on any status (GitHub answers 403).
        #expect(
            RetryAfter.delay(in: response(.tooManyRequests, [("X-RateLimit-Reset", unixTime)]), now: now)
                == .seconds(45))
        let usedUp = response(.forbidden, [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", unixTime)])
        #expect(RetryAfter.delay(in: usedUp, now: now) == .seconds(45))
        let draft = response(.serviceUnavailable, [("RateLimit-Remaining", " 0 "), ("RateLimit-Reset", "30")])
        #expect(RetryAfter.delay(in: draft, now: now) == .seconds(30))
        // Unix times in the past are zero; huge values a century.
        #expect(
            RetryAfter.delay(in: response(.tooManyRequests, [("X-RateLimit-Reset", "1700000000")]), now: now) == .zero)
        #expect(
            RetryAfter.delay(
                in: response(.tooManyRequests, [("RateLimit-Reset", "9" + String(repeating: "9", count: 40))]), now: now
            ) == century)
    }

    // MARK: Randomised

    private static let dayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let monthNames = [
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ]

    /// Writes `date` in a random HTTP-date format and a random lenient variant, as a server might.
    private static func randomText(for date: Date, now: inout Date, using random: inout SplitMix64) -> String {
        func pad(_ value: Int, _ width: Int = 2) -> String {
            String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
        }
        func randomCase(_ text: String) -> String {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: text.uppercased()
            case 1: text.lowercased()
            default: text
            }
        }
        // A zone: GMT and its synonyms, or an offset with the local time it implies.
        let zones = ["GMT", "UTC", "UT", "Z", "+0000", "-0000", "EST", "PDT", "offset"]
        var zone = zones.randomElement(using: &random)!
        var offsetSeconds = 0
        switch zone {
        case "EST": offsetSeconds = -5 * 3600
        case "PDT": offsetSeconds = -7 * 3600
        case "offset":
            // Foundation's time zones stop at ±18 hours.
            let magnitude =
                Int.random(in: 0...17, using: &random) * 3600 + [0, 30, 45].randomElement(using: &random)! * 60
            offsetSeconds = Bool.random(using: &random) ? magnitude : -magnitude
            zone =
                (offsetSeconds < 0 ? "-" : "+") + pad(abs(offsetSeconds) / 3600) + pad(abs(offsetSeconds) % 3600 / 60)
        default: break
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offsetSeconds)!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let (year, month, day) = (parts.year!, parts.month!, parts.day!)
        let time = "\(pad(parts.hour!)):\(pad(parts.minute!)):\(pad(parts.second!))"
        let fullDay = dayNames[parts.weekday! - 1]
        let shortDay = String(fullDay.prefix(3))
        let fullMonth = monthNames[month - 1]
        let shortMonth = String(fullMonth.prefix(3))
        let space = [" ", "  ", "\t"]

        var words: [String]
        switch Int.random(in: 0..<4, using: &random) {
        case 0:  // IMF-fixdate
            words = ["\(shortDay),", pad(day), shortMonth, String(year), time, zone]
        case 1:  // rfc850-date: a two-digit year, with `now` within 49 years of the date
            now = date.addingTimeInterval(Double(Int.random(in: -49 * 365...49 * 365, using: &random)) * 86_400)
            words = ["\(fullDay),", "\(pad(day))-\(shortMonth)-\(pad(year % 100))", time, zone]
        case 2:  // asctime-date, GMT implied
            if offsetSeconds != 0 { return randomText(for: date, now: &now, using: &random) }
            words = [shortDay, shortMonth, day < 10 ? " \(day)" : String(day), time, String(year)]
        default:  // RFC 5322 with the full month name and no day name
            words = [String(day), fullMonth, String(year), time, zone]
        }
        if Bool.random(using: &random), words[0].first!.isLetter, !monthNames.contains(words[0]) {  // no day name
            words.removeFirst()
        }
        return words.map(randomCase).map { $0 + space.randomElement(using: &random)! }.joined()
    }

    @Test func generatedDatesInEveryFormatRoundTrip() {
        let seed = randomSeed("generatedDatesInEveryFormatRoundTrip")
        var random = SplitMix64(seed: seed)
        let earliest = utcDate(1600, 1, 1).timeIntervalSince1970
        let latest = utcDate(9999, 12, 31, 23, 59, 59).timeIntervalSince1970
        for _ in 0..<2_000 {
            let date = Date(
                timeIntervalSince1970: Double(Int64.random(in: Int64(earliest)...Int64(latest), using: &random)))
            var now = self.now
            let text = Self.randomText(for: date, now: &now, using: &random)
            #expect(RetryAfter.httpDate(text, now: now) == date, "seed \(seed): \(text) (now \(now)) is \(date)")
        }
    }

    /// Random IMF-fixdates as `Retry-After` values, half of them with one part out of its range — a day the month
    /// does not have, hour 24 or more, minute 60 or more, second 61 or more, a month or a zone that does not exist:
    /// the valid ones are read as the time until them, every broken one is ignored (never read as a nearby date).
    @Test func retryAfterDatesWithAPartOutOfRangeAreIgnored() {
        let seed = randomSeed("retryAfterDatesWithAPartOutOfRangeAreIgnored")
        var random = SplitMix64(seed: seed)
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for _ in 0..<2_000 {
            let year = Int.random(in: 2027...2100, using: &random)
            let month = Int.random(in: 1...12, using: &random)
            let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let days = daysInMonth[month - 1] + (month == 2 && isLeap ? 1 : 0)
            var (day, hour, minute, second) = (
                Int.random(in: 1...days, using: &random), Int.random(in: 0...23, using: &random),
                Int.random(in: 0...59, using: &random), Int.random(in: 0...59, using: &random)
            )
            var monthName = String(Self.monthNames[month - 1].prefix(3))
            var zone = "GMT"
            let broken = Bool.random(using: &random)
            if broken {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: day = Bool.random(using: &random) ? 0 : Int.random(in: (days + 1)...99, using: &random)
                case 1: hour = Int.random(in: 24...99, using: &random)
                case 2: minute = Int.random(in: 60...99, using: &random)
                case 3: second = Int.random(in: 61...99, using: &random)
                case 4:
                    monthName = ["Jun", "Juk", "Xyz", "Noc", "Mrz", "Okt"].filter { $0 != monthName }
                        .randomElement(using: &random)!
                    if monthName == "Jun" { monthName = "Jux" }
                default: zone = ["XYZ", "GMX", "+2400", "+0060", "CEST", "GMT+1"].randomElement(using: &random)!
                }
            }
            let value = "Mon, \(pad(day)) \(monthName) \(year) \(pad(hour)):\(pad(minute)):\(pad(second)) \(zone)"
            let parsed = RetryAfter.parse(value, now: now)
            if broken {
                #expect(parsed == nil, "seed \(seed): \(value) read as \(parsed.map { "\($0)" } ?? "")")
            } else {
                let date = utcDate(year, month, day, hour, minute, second)
                let expected = Duration.seconds(Int64(date.timeIntervalSince(now)))
                #expect(parsed == expected, "seed \(seed): \(value)")
            }
        }
    }

    @Test func noTextTraps() {
        let seed = randomSeed("noTextTraps")
        var random = SplitMix64(seed: seed)
        let pieces = [
            "Sun", "Sunday", ",", " ", "\t", "06", "6", "-", "Nov", "November", "1994", "94", "094", "08:49:37",
            "8:49", ":", "GMT", "UTC", "+0000", "-0800", "+05:30", "Z", "99999999999999999999", "0", ".", "5",
            "-5", "+", "\u{0}", "é", "🙂", "\r\n", "29", "Feb", "60", "24:00:00", "1e9", "nan", "inf",
        ]
        let nows = [
            now, Date(timeIntervalSince1970: .nan), Date(timeIntervalSince1970: .infinity), .distantFuture,
            .distantPast, Date(timeIntervalSince1970: -1e300),
        ]
        let names = ["Retry-After", "RateLimit-Reset", "X-RateLimit-Reset", "X-RateLimit-Remaining"]
        var parsed = 0
        for _ in 0..<5_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                if Int.random(in: 0..<8, using: &random) == 0 {
                    text.unicodeScalars.append(Unicode.Scalar(UInt8.random(in: 0...127, using: &random)))
                } else {
                    text += pieces.randomElement(using: &random)!
                }
            }
            let now = nows.randomElement(using: &random)!
            if let delay = RetryAfter.parse(text, now: now) {
                parsed += 1
                #expect(delay >= .zero && delay <= century, "seed \(seed): \(text.debugDescription) gave \(delay)")
            }
            _ = RetryAfter.httpDate(text, now: now)
            let fields = (0..<3).map { _ in (names.randomElement(using: &random)!, text) }
            if let delay = RetryAfter.delay(in: response(.tooManyRequests, fields), now: now) {
                #expect(delay >= .zero && delay <= century, "seed \(seed): \(fields) gave \(delay)")
            }
        }
        #expect(parsed > 0, "seed \(seed): nothing parsed; the test did not exercise the parser")
    }
}

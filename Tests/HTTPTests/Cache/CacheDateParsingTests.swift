import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// The HTTP-dates the cache reads (`Date`, `Expires`, `Last-Modified`; RFC 9110 §5.6.7), randomised: every date in
/// each of the three formats is read back to the second, what the cache writes round-trips, an `Expires` that is no
/// date makes a response stale at once (RFC 9111 §5.3), and no bytes trap the parser.
@Suite(.noHang) struct CacheDateParsingTests {
    static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let longWeekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// `seconds` in each of RFC 9110's formats: IMF-fixdate, rfc850-date (two-digit year), asctime-date.
    private static func spellings(of seconds: Int64) -> [String] {
        let (year, month, day, second) = HTTPDate.civilTime(of: Date(timeIntervalSince1970: Double(seconds)))
        let weekday = Int((HTTPDate.daysFromCivil(year: year, month: month, day: day) % 7 + 11) % 7)
        let time = twoDigits(second / 3600) + ":" + twoDigits(second / 60 % 60) + ":" + twoDigits(second % 60)
        let monthName = months[Int(month - 1)]
        let paddedDay = day < 10 ? " \(day)" : "\(day)"
        return [
            "\(weekdays[weekday]), \(twoDigits(day)) \(monthName) \(year) \(time) GMT",
            "\(longWeekdays[weekday]), \(twoDigits(day))-\(monthName)-\(twoDigits(year % 100)) \(time) GMT",
            "\(weekdays[weekday]) \(monthName) \(paddedDay) \(time) \(year)",
        ]
    }

    @Test func everyDateInEachFormatIsReadToTheSecondAndWhatTheCacheWritesRoundTrips() {
        let seed = SplitMix64.seed()
        print("CacheDateParsingTests.formats: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for _ in 0..<5_000 {
            // Within 45 years of now, so that a two-digit year means the same year (RFC 9110 §5.6.7).
            let seconds = 1_800_000_000 + Int64.random(in: -1_400_000_000...1_400_000_000, using: &random)
            for text in Self.spellings(of: seconds) {
                #expect(HTTPDate.secondsSince1970(text, now: now) == seconds, "seed \(seed): \(text)")
            }
            // Any date of years 1000–9999, as the cache writes it, is read back.
            let anyDate = Int64.random(in: -30_000_000_000...253_402_300_799, using: &random)
            let written = HTTPDate.format(Date(timeIntervalSince1970: Double(anyDate)))
            #expect(HTTPDate.secondsSince1970(written, now: now) == anyDate, "seed \(seed): \(written)")
        }
    }

    /// An `Expires` that is not a date — each valid spelling spoilt in a way no reading can mend — makes the response
    /// stale at once, with the `Date` it came with.
    @Test func anExpiresThatIsNoDateIsAlreadyExpired() {
        let seed = SplitMix64.seed()
        print("CacheDateParsingTests.invalidExpires: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let received = Date(timeIntervalSince1970: 1_800_000_000)
        let spoilers: [(String) -> String] = [
            { $0.replacingOccurrences(of: ":", with: ".") },
            { $0.replacingOccurrences(of: " GMT", with: " GMT GMT") },
            {
                $0.replacingOccurrences(of: "Jan", with: "Jab").replacingOccurrences(of: "Feb", with: "Fex")
                    .replacingOccurrences(of: "Mar", with: "Max").replacingOccurrences(of: "Apr", with: "Apx")
                    .replacingOccurrences(of: "May", with: "Mxy").replacingOccurrences(of: "Jun", with: "Jux")
                    .replacingOccurrences(of: "Jul", with: "Jux").replacingOccurrences(of: "Aug", with: "Aux")
                    .replacingOccurrences(of: "Sep", with: "Sex").replacingOccurrences(of: "Oct", with: "Ocx")
                    .replacingOccurrences(of: "Nov", with: "Nox").replacingOccurrences(of: "Dec", with: "Dex")
            },
            { _ in "0" }, { _ in "-1" }, { _ in "" }, { _ in "never" }, { $0 + " 12" },
            { $0.replacingOccurrences(of: ":", with: ":9") },
        ]
        for _ in 0..<3_000 {
            let seconds = 1_800_000_000 + Int64.random(in: 1...86_400 * 365, using: &random)
            let valid = Self.spellings(of: seconds)[0]
            let spoilt = spoilers.randomElement(using: &random)!(valid)
            let headers: HTTPHeaders = ["Date": HTTPDate.format(received), "Expires": spoilt]
            let metadata = CacheEntry.Metadata(
                status: .ok, headers: headers, requestDate: received, responseDate: received)
            #expect(metadata.freshnessLifetime == 0, "seed \(seed): Expires: \(spoilt)")
            let good = CacheEntry.Metadata(
                status: .ok, headers: ["Date": HTTPDate.format(received), "Expires": valid], requestDate: received,
                responseDate: received)
            #expect(good.freshnessLifetime == Double(seconds - 1_800_000_000), "seed \(seed): Expires: \(valid)")
        }
    }

    @Test func anyBytesNeverTrapTheDateParser() {
        let seed = SplitMix64.seed()
        print("CacheDateParsingTests.anyBytes: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let pieces = Array("Sun, 06 Nov 1994 08:49:37 GMT-+:,0123456789 \t".utf8)
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                Bool.random(using: &random)
                    ? pieces.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            _ = HTTPDate.secondsSince1970(text, now: Date(timeIntervalSince1970: 1_800_000_000))
            let metadata = CacheEntry.Metadata(
                status: .ok, headers: ["Expires": text, "Date": text, "Last-Modified": text],
                requestDate: .distantPast, responseDate: .distantFuture)
            #expect(metadata.freshnessLifetime >= 0 && metadata.freshnessLifetime.isFinite, "seed \(seed): \(bytes)")
        }
    }
}

import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

@Suite(.noHang) struct CacheEntryTests {
    let received = Date(timeIntervalSince1970: 1_800_000_000)

    func metadata(
        _ headers: HTTPHeaders, status: HTTPStatus = .ok, sentSecondsBefore delay: Double = 0
    )
        -> CacheEntry.Metadata
    {
        CacheEntry(
            status: status, headers: headers, body: Data(), url: nil, requestDate: received - delay,
            responseDate: received
        ).metadata
    }

    @Test func theInitialAgeIsTheLargerOfTheApparentAgeAndAgePlusTheTimeInTransit() {
        let date = HTTPDateText.format(received - 30)
        #expect(metadata(["Date": date]).correctedInitialAge == 30)
        #expect(metadata(["Date": date, "Age": "100"], sentSecondsBefore: 2).correctedInitialAge == 102)
        // A server clock ahead of ours makes no negative age.
        #expect(metadata(["Date": HTTPDateText.format(received + 300)]).correctedInitialAge == 0)
        #expect(metadata(["Age": "junk"]).correctedInitialAge == 0)
    }

    /// RFC 9111 §5.1: a list-valued Age uses its first member; an invalid value is ignored (counts as no Age).
    @Test(arguments: [
        ("10, 20", 10.0), ("10,20", 10), (" 7 ", 7), ("\t7,x", 7), ("10;p=1", 0), ("1.5", 0), ("-5", 0), ("", 0),
        (",10", 0), ("x, 10", 0), ("99999999999999", Double(CacheControl.maximumDeltaSeconds)),
    ])
    func anAgeListUsesItsFirstMemberAndAnInvalidAgeIsIgnored(field: String, initialAge: Double) {
        #expect(metadata(["Age": field]).correctedInitialAge == initialAge, "Age: \(field.debugDescription)")
    }

    /// RFC 9111 §5.1 and §1.2.2, randomised: a conforming `Age` — delta-seconds with optional whitespace, maybe
    /// followed by more list members — is read (its first member, at most 2³¹); a non-conforming one is ignored.
    @Test func randomAgeFieldsAreReadExactlyAsTheGrammarSays() {
        let seed = SplitMix64.seed()
        print("CacheEntryTests.randomAge: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let spaces = ["", " ", "\t", "  "]
        let spoilers: [(before: String, after: String)] = [
            ("-", ""), ("+", ""), ("", ".0"), ("", "e2"), ("\"", "\""), ("", "s"), ("x", ""), ("", ";p=1"),
            ("", " 1"), ("\u{0663}", ""), ("", "\u{FF10}"), ("0x", ""), ("", "="),
        ]
        for _ in 0..<5_000 {
            let digits = (0..<Int.random(in: 1...14, using: &random)).map { _ in
                String(Int.random(in: 0...9, using: &random))
            }
            .joined()
            var value: Int64 = 0
            for digit in digits.utf8 { value = min(value * 10 + Int64(digit - 48), 2_147_483_648) }
            let rest =
                Bool.random(using: &random)
                ? "," + spaces.randomElement(using: &random)! + ["0", "x", "", "99"].randomElement(using: &random)! : ""
            let pad = { (random: inout SplitMix64) in spaces.randomElement(using: &random)! }
            let conforming = pad(&random) + digits + pad(&random) + rest
            #expect(
                CacheEntry.Metadata.age(conforming) == value
                    && metadata(["Age": conforming]).correctedInitialAge == Double(value),
                "seed \(seed): Age: \(conforming.debugDescription)")
            let spoiler = spoilers.randomElement(using: &random)!
            let spoilt = pad(&random) + spoiler.before + digits + spoiler.after + pad(&random) + rest
            #expect(
                CacheEntry.Metadata.age(spoilt) == nil && metadata(["Age": spoilt]).correctedInitialAge == 0,
                "seed \(seed): Age: \(spoilt.debugDescription)")
        }
    }

    @Test func theCurrentAgeAddsTheTimeInTheStoreAndIgnoresAClockGoingBack() {
        let entry = metadata(["Age": "10"])
        #expect(entry.currentAge(at: received + 5, responseDate: received) == 15)
        #expect(entry.currentAge(at: received - 500, responseDate: received) == 10)
    }

    @Test func lifetimes() {
        let date = HTTPDateText.format(received)
        #expect(
            metadata(["Cache-Control": "max-age=5", "Expires": HTTPDateText.format(received + 99)]).freshnessLifetime
                == 5)
        #expect(metadata(["Date": date, "Expires": HTTPDateText.format(received + 99)]).freshnessLifetime == 99)
        #expect(metadata(["Date": date, "Expires": HTTPDateText.format(received - 99)]).freshnessLifetime == 0)
        #expect(metadata(["Expires": "never"]).freshnessLifetime == 0)
        #expect(
            metadata(["Cache-Control": "max-age=oops", "Expires": HTTPDateText.format(received + 99)]).freshnessLifetime
                == 0)
        let heuristic = metadata(["Date": date, "Last-Modified": HTTPDateText.format(received - 1_000)])
        #expect(heuristic.freshnessLifetime == 100 && heuristic.isHeuristic)
        #expect(
            metadata(["Last-Modified": HTTPDateText.format(received - 1_000)], status: .found).freshnessLifetime == 0)
        #expect(
            metadata(
                ["Last-Modified": HTTPDateText.format(received - 1_000), "Cache-Control": "public"], status: .found
            )
            .freshnessLifetime == 100)
    }

    @Test func storingDropsHopByHopFieldsAndSetCookieAndAddsADate() {
        let request = cacheRequest()
        let response = HTTPResponse(
            request: request, status: .ok,
            headers: [
                "Connection": "X-Private", "X-Private": "1", "Transfer-Encoding": "chunked", "Set-Cookie": "a=b",
                "X-Public": "2",
            ])
        let entry = CacheEntry(storing: response, for: request, requestDate: received, responseDate: received)
        #expect(entry.headers.map(\.name) == ["X-Public", "Date"])
        #expect(entry.headers["Date"] == "Fri, 15 Jan 2027 08:00:00 GMT")
    }

    @Test func httpDatesAreWrittenAsIMFFixdatesAndReadBack() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<2_000 {
            let seconds = Int64.random(in: -62_000_000_000...253_000_000_000, using: &random)
            let date = Date(timeIntervalSince1970: Double(seconds))
            let text = HTTPDate.format(date)
            // Foundation's formatter agrees from 1900 on (before 1583 it uses the Julian calendar).
            #expect(text == HTTPDateText.format(date) || seconds < -2_208_988_800, "\(seconds)")
            #expect(HTTPDate.secondsSince1970(text, now: date) == seconds, "\(text)")
        }
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: .nan)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1e15)).hasSuffix("9999 23:59:59 GMT"))
    }

    @Test func theSizeCountsBodyFieldsAndURL() {
        let small = CacheEntry(
            status: .ok, headers: [:], body: Data(), url: nil, requestDate: received, responseDate: received)
        let large = CacheEntry(
            status: .ok, headers: ["Name": "Value"], body: Data(count: 1_000), url: URL(string: "https://a.example/"),
            requestDate: received, responseDate: received)
        #expect(large.size - small.size == 1_000 + "NameValue".count + 4 + "https://a.example/".count)
    }
}

import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct CacheControlTests {
    @Test func readsResponseDirectivesInAnyCaseWithTokenOrQuotedValues() {
        let control = CacheControl(
            parsing: #"Public, MAX-AGE="60", must-revalidate, stale-while-revalidate=30 ,stale-if-error = 90, no-cache"#
        )
        #expect(control.isPublic)
        #expect(control.maxAge == 60)
        #expect(control.mustRevalidate)
        #expect(control.staleWhileRevalidate == 30)
        #expect(control.staleIfError == 90)
        #expect(control.noCache)
        #expect(!control.noStore && !control.isPrivate && !control.hasInvalidMaxAge)
    }

    @Test func readsRequestDirectives() {
        let control = CacheControl(parsing: "max-stale, min-fresh=5, only-if-cached, no-store")
        #expect(control.maxStale == .any)
        #expect(control.minFresh == 5)
        #expect(control.onlyIfCached && control.noStore)
        #expect(CacheControl(parsing: "max-stale=10").maxStale == .seconds(10))
        #expect(CacheControl(parsing: "max-stale=ten").maxStale == nil)
    }

    @Test func mustUnderstandLetsAnUnderstoodStatusBeStoredDespiteNoStore() {
        let directives: HTTPHeaders = ["Cache-Control": "max-age=60, no-store, must-understand"]
        #expect(CacheControl(directives).mustUnderstand)
        func forbidsStoring(_ status: HTTPStatus, _ headers: HTTPHeaders) -> Bool {
            CacheEntry.Metadata(status: status, headers: headers, requestDate: .now, responseDate: .now).forbidsStoring
        }
        #expect(!forbidsStoring(.ok, directives))
        #expect(forbidsStoring(HTTPStatus(rawValue: 599), directives))
        #expect(forbidsStoring(HTTPStatus(rawValue: 599), ["Cache-Control": "max-age=60, must-understand"]))
        #expect(forbidsStoring(.ok, ["Cache-Control": "max-age=60, no-store"]))
        #expect(!forbidsStoring(HTTPStatus(rawValue: 599), ["Cache-Control": "max-age=60"]))
    }

    @Test func qualifiedNoCacheAndPrivateCountAsUnqualified() {
        let control = CacheControl(parsing: #"no-cache="Set-Cookie, X-Token", private="Authorization", max-age=5"#)
        #expect(control.noCache && control.isPrivate)
        #expect(control.maxAge == 5)  // the comma inside the quotes does not end the directive
    }

    @Test func readsEveryFieldLineAndTheFirstOccurrenceWins() {
        let headers = HTTPHeaders([
            .init(name: "Cache-Control", value: "max-age=10"),
            .init(name: "cache-control", value: "max-age=99, s-maxage=20"),
        ])
        let control = CacheControl(headers)
        #expect(control.maxAge == 10)
        #expect(control.sharedMaxAge == 20)
    }

    @Test(arguments: ["max-age=abc", "max-age=-5", "max-age=1.5", "max-age=", "max-age", "max-age=\"\""])
    func anInvalidMaxAgeMeansStale(value: String) {
        let control = CacheControl(parsing: value)
        #expect(control.hasInvalidMaxAge)
        #expect(control.maxAge == nil)
    }

    @Test func hugeDeltaSecondsAreReadAsTwoToTheThirtyFirst() {
        #expect(CacheControl(parsing: "max-age=99999999999999999999999999").maxAge == 2_147_483_648)
        #expect(CacheControl(parsing: "stale-if-error=2147483649").staleIfError == 2_147_483_648)
    }

    @Test func unknownDirectivesAndStrayPunctuationAreIgnored() {
        let control = CacheControl(parsing: #",,, foo="bar\"baz", =, ==1, immutable, max-age=3 trailing, ,"#)
        #expect(control.maxAge == nil)  // "3 trailing" is not delta-seconds
        #expect(control.hasInvalidMaxAge)
        #expect(CacheControl(parsing: #"x="unterminated, max-age=1"#).maxAge == nil)
        #expect(CacheControl(parsing: "").maxAge == nil)
    }

    /// Random field values — directive-like and arbitrary bytes — never trap, and the parse is a pure function of
    /// the text.
    @Test func randomFieldValuesNeverTrap() {
        let seed = SplitMix64.seed()
        print("CacheControlTests: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let pieces = [
            "max-age", "s-maxage", "no-cache", "no-store", "private", "public", "must-revalidate", "max-stale",
            "min-fresh", "only-if-cached", "stale-while-revalidate", "stale-if-error", "=", ",", "\"", "\\", " ",
            "\t", "0", "60", "-1", "99999999999999999999", "é", "\u{0}", "\r\n", "=\"", "\"=",
        ]
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                if Int.random(in: 0..<8, using: &random) == 0 {
                    let scalar = Unicode.Scalar(UInt32.random(in: 0...0x2FF, using: &random)) ?? "?"
                    text.unicodeScalars.append(scalar)
                } else {
                    text += pieces.randomElement(using: &random)!
                }
            }
            let control = CacheControl(parsing: text)
            #expect(control == CacheControl(parsing: text), "seed \(seed): \(text.debugDescription)")
            if let maxAge = control.maxAge {
                #expect((0...2_147_483_648).contains(maxAge), "seed \(seed): \(text.debugDescription)")
            }
        }
    }
}

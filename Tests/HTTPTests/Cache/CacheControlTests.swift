import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct CacheControlTests {
    @Test func readsResponseDirectivesInAnyCaseWithTokenOrQuotedValues() {
        let control = CacheControl(
            parsing: #"Public, MAX-AGE="60", must-revalidate, stale-while-revalidate=30 ,stale-if-error=90, no-cache"#
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

    @Test func qualifiedNoCacheAndPrivateListTheirFields() {
        let control = CacheControl(parsing: #"no-cache="Set-Cookie, X-Token", private="Authorization", max-age=5"#)
        #expect(!control.noCache && control.noCacheFields == ["set-cookie", "x-token"])
        #expect(control.isPrivate && !control.isPrivateUnqualified && control.privateFields == ["authorization"])
        #expect(control.maxAge == 5)  // the comma inside the quotes does not end the directive
    }

    @Test func aFieldListThatCannotBeReadCountsAsUnqualified() {
        for text in [#"no-cache="""#, #"no-cache=" , ""#, #"no-cache="a b""#, #"no-cache="a;b""#, "no-cache=\"é\""] {
            let control = CacheControl(parsing: text)
            #expect(control.noCache && control.noCacheFields.isEmpty, "\(text)")
        }
        #expect(CacheControl(parsing: #"private="a b""#).isPrivateUnqualified)
        // A token without quotes is read as a one-name list.
        #expect(CacheControl(parsing: "no-cache=X-A").noCacheFields == ["x-a"])
    }

    @Test func repeatedQualifiedDirectivesAddUpAndAnUnqualifiedOneWins() {
        let lists = CacheControl(
            HTTPHeaders([
                .init(name: "Cache-Control", value: #"no-cache="a", private="p""#),
                .init(name: "Cache-Control", value: #"no-cache="b, A""#),
            ]))
        #expect(lists.noCacheFields == ["a", "b"] && !lists.noCache)
        let mixed = CacheControl(parsing: #"no-cache="a", no-cache, private, private="p""#)
        #expect(mixed.noCache && mixed.isPrivateUnqualified && mixed.privateFields == ["p"])
    }

    /// Random spellings of qualified `no-cache` and `private` — case, whitespace, quoting, empty list members,
    /// repetition, other directives around them — read as a model of RFC 9111 §5.2.2.4 and §5.2.2.7 says.
    @Test func randomQualifiedDirectivesAreReadAsTheModelSays() {
        let seed = SplitMix64.seed()
        print("CacheControlTests.randomQualifiedDirectives: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let names = ["a", "X-Token", "set-cookie", "Content-Type", "b_c", "x.y", "~t"]
        let spaces = ["", " ", "  ", "\t"]
        func respelled(_ name: String, _ random: inout SplitMix64) -> String {
            String(name.map { Bool.random(using: &random) ? Character($0.uppercased()) : $0 })
        }
        for _ in 0..<5_000 {
            var directives: [String] = []
            var noCache = false
            var noCacheFields: Set<String> = []
            var privateUnqualified = false
            var privateFields: Set<String> = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let isNoCache = Bool.random(using: &random)
                let name = respelled(isNoCache ? "no-cache" : "private", &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0:  // unqualified
                    directives.append(name)
                    if isNoCache { noCache = true } else { privateUnqualified = true }
                case 1:  // a list of one token, unquoted
                    let field = names.randomElement(using: &random)!
                    directives.append(name + "=" + respelled(field, &random))
                    if isNoCache {
                        noCacheFields.insert(field.lowercased())
                    } else {
                        privateFields.insert(field.lowercased())
                    }
                default:  // a quoted list with whitespace and empty members
                    var members: [String] = []
                    var listed: Set<String> = []
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        let space = spaces.randomElement(using: &random)!
                        if Int.random(in: 0..<5, using: &random) == 0 {
                            members.append(space)
                        } else {
                            let field = names.randomElement(using: &random)!
                            members.append(space + respelled(field, &random) + spaces.randomElement(using: &random)!)
                            listed.insert(field.lowercased())
                        }
                    }
                    directives.append(name + "=\"" + members.joined(separator: ",") + "\"")
                    if listed.isEmpty {
                        if isNoCache { noCache = true } else { privateUnqualified = true }
                    } else if isNoCache {
                        noCacheFields.formUnion(listed)
                    } else {
                        privateFields.formUnion(listed)
                    }
                }
                if Bool.random(using: &random) {
                    directives.append(
                        ["max-age=60", "public", "x=\"no-cache\""][Int.random(in: 0..<3, using: &random)])
                }
            }
            let text = directives.joined(
                separator: spaces.randomElement(using: &random)! + "," + spaces.randomElement(using: &random)!)
            let control = CacheControl(parsing: text)
            let context = "seed \(seed): \(text.debugDescription)"
            #expect(control.noCache == noCache, "\(context)")
            #expect(control.noCacheFields == noCacheFields, "\(context)")
            #expect(control.isPrivateUnqualified == privateUnqualified, "\(context)")
            #expect(control.privateFields == privateFields, "\(context)")
            #expect(control.isPrivate == (privateUnqualified || !privateFields.isEmpty), "\(context)")
        }
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

    // MARK: The numeric directives' grammar (RFC 9111 §1.2.2, §5.2)

    /// The numeric directives, and how to read each one's value from a parse.
    private static let numericDirectives: [(name: String, read: @Sendable (CacheControl) -> Int64?)] = [
        ("max-age", { $0.maxAge }), ("s-maxage", { $0.sharedMaxAge }),
        ("stale-while-revalidate", { $0.staleWhileRevalidate }), ("stale-if-error", { $0.staleIfError }),
        ("min-fresh", { $0.minFresh }),
        ("max-stale", { if case .seconds(let value)? = $0.maxStale { value } else { nil } }),
    ]

    /// Other directives, conforming, that may stand around the one read; none is numeric, and the quoted ones hide
    /// numeric directives inside their quotes.
    private static let otherDirectives = [
        "public", "no-store", "must-revalidate", "x-ext=\"max-age=1, min-fresh=2\"", "foo=bar", "immutable",
        "no-cache=\"Set-Cookie\"", "x=\"a\\\"b, s-maxage=3\"", "",
    ]

    /// `name` in a random case.
    private static func respelled(_ name: String, _ random: inout SplitMix64) -> String {
        String(name.map { Bool.random(using: &random) ? Character($0.uppercased()) : $0 })
    }

    /// Random delta-seconds: leading zeros, short and long, beyond 2³¹ at times; with the value the RFC reads.
    private static func deltaSeconds(_ random: inout SplitMix64) -> (text: String, value: Int64) {
        let zeros = String(
            repeating: "0",
            count: Int.random(in: 0...3, using: &random) == 0 ? Int.random(in: 1...4, using: &random) : 0)
        let digits: String
        switch Int.random(in: 0..<4, using: &random) {
        case 0: digits = String(Int.random(in: 0...9, using: &random))
        case 1: digits = String(Int.random(in: 0...100_000, using: &random))
        case 2: digits = String(Int64.random(in: 2_147_483_640...2_147_483_660, using: &random))
        default:
            digits = (0..<Int.random(in: 11...40, using: &random)).map { _ in
                String(Int.random(in: 0...9, using: &random))
            }.joined()
        }
        // The value as RFC 9111 §1.2.2 reads it: saturating at 2³¹.
        var value: Int64 = 0
        for digit in digits.utf8 { value = min(value * 10 + Int64(digit - 48), 2_147_483_648) }
        return (zeros + digits, value)
    }

    /// A field value with `directive` among other directives and empty elements, joined with random whitespace.
    private static func fieldValue(around directive: String, _ random: inout SplitMix64) -> String {
        let spaces = ["", " ", "\t", "  "]
        var elements = (0..<Int.random(in: 0...3, using: &random)).map { _ in
            otherDirectives.randomElement(using: &random)!
        }
        elements.insert(directive, at: Int.random(in: 0...elements.count, using: &random))
        var text = ""
        for (index, element) in elements.enumerated() {
            if index > 0 {
                text += spaces.randomElement(using: &random)! + "," + spaces.randomElement(using: &random)!
            }
            text += element
        }
        return spaces.randomElement(using: &random)! + text + spaces.randomElement(using: &random)!
    }

    /// Every conforming spelling of a numeric directive is read: delta-seconds (`1*DIGIT`) as a token or inside a
    /// quoted-string (its digits possibly written as quoted-pairs), the name in any case, among other directives,
    /// with whitespace only where the list grammar allows it; values beyond 2³¹ read as 2³¹.
    @Test func everyConformingNumericDirectiveIsRead() {
        let seed = SplitMix64.seed()
        print(
            "CacheControlTests.everyConformingNumericDirectiveIsRead: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))"
        )
        var random = SplitMix64(seed: seed)
        for _ in 0..<10_000 {
            let (name, read) = Self.numericDirectives.randomElement(using: &random)!
            let (digits, value) = Self.deltaSeconds(&random)
            let argument: String
            switch Int.random(in: 0..<3, using: &random) {
            case 0: argument = digits
            case 1: argument = "\"" + digits + "\""
            default: argument = "\"" + digits.map { Bool.random(using: &random) ? "\\\($0)" : "\($0)" }.joined() + "\""
            }
            let text = Self.fieldValue(around: Self.respelled(name, &random) + "=" + argument, &random)
            let control = CacheControl(parsing: text)
            #expect(read(control) == value, "seed \(seed): \(text.debugDescription)")
            #expect(!control.hasInvalidMaxAge, "seed \(seed): \(text.debugDescription)")
        }
    }

    /// Every non-conforming spelling of a numeric directive is ignored — a `max-age` so spelled makes the response
    /// stale — whatever surrounds it: signs, fractions, exponents, other scripts' digits, single quotes, whitespace
    /// around `=`, an empty value, an unterminated quoted-string, text or a control character after the value.
    @Test func everyNonConformingNumericDirectiveIsIgnored() {
        let seed = SplitMix64.seed()
        print(
            "CacheControlTests.everyNonConformingNumericDirectiveIsIgnored: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))"
        )
        var random = SplitMix64(seed: seed)
        // Text around the digits, or in place of them (`nil` digits).
        let spoilers: [(before: String, after: String?)] = [
            ("-", ""), ("+", ""), ("", ".0"), ("", ".5"), (".", ""), ("", "e3"), ("0x", ""), ("", "a"), ("a", ""),
            ("'", "'"), ("", " 1"), ("", "_0"), ("\"", ""), ("\"", "\"x"), ("\"", "\" \"1\""), ("\"-", "\""),
            ("\"", ".5\""), ("\"", "\u{1}\""), ("\"\"", nil), ("", nil), (" ", ""), ("", "\u{0}"), ("", "\u{B}"),
            ("", "\u{0663}"), ("\u{FF13}", ""), ("\u{0663}\u{0666}", nil), ("", ";x=1"), ("", "="), ("", "/2"),
            ("(", ")"), ("\"", "\\"),
        ]
        for _ in 0..<10_000 {
            let (name, read) = Self.numericDirectives.randomElement(using: &random)!
            let (digits, _) = Self.deltaSeconds(&random)
            let spoiler = spoilers.randomElement(using: &random)!
            let spoiled = spoiler.before + (spoiler.after.map { digits + $0 } ?? "")
            var directive = Self.respelled(name, &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: directive += " =" + digits  // whitespace before `=`
            case 1: directive += "= " + digits  // whitespace after `=`
            case 2 where name != "max-stale": break  // no argument at all (max-stale alone means any staleness)
            default: directive += "=" + spoiled
            }
            let text = Self.fieldValue(around: directive, &random)
            let control = CacheControl(parsing: text)
            #expect(read(control) == nil, "seed \(seed): \(text.debugDescription)")
            if name == "max-age" { #expect(control.hasInvalidMaxAge, "seed \(seed): \(text.debugDescription)") }
            if name == "max-stale" { #expect(control.maxStale == nil, "seed \(seed): \(text.debugDescription)") }
        }
    }

    /// Arbitrary bytes — invalid UTF-8 repaired as a field value's `String` would be — never trap.
    @Test func anyBytesNeverTrap() {
        let seed = SplitMix64.seed()
        print("CacheControlTests.anyBytesNeverTrap: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...48, using: &random)).map { _ in
                Bool.random(using: &random)
                    ? UInt8.random(in: 0...255, using: &random)
                    : Array(#"max-age=0,"\ \#t"#.utf8).randomElement(using: &random)!
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let control = CacheControl(parsing: text)
            for (_, read) in Self.numericDirectives {
                if let value = read(control) { #expect((0...2_147_483_648).contains(value), "seed \(seed): \(bytes)") }
            }
            _ = CacheEntry.Metadata.age(text)
        }
    }
}

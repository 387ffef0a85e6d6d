import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// RFC 6265bis's storage model and `Cookie` field, on the jar value, with fixed dates.
@Suite(.noHang) struct CookieJarTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func request(_ url: String) -> HTTPRequest {
        HTTPRequest(url: URL(string: url)!)
    }

    /// A jar that received `lines` from `url`.
    private func jar(_ lines: [String], from url: String = "https://www.example.com/") -> CookieJar {
        var jar = CookieJar()
        jar.receive(lines, for: request(url), now: now)
        return jar
    }

    private func field(_ jar: CookieJar, _ url: String) -> String? {
        var jar = jar
        return jar.cookieField(for: request(url), now: now)
    }

    // MARK: Domain

    @Test func withoutDomainACookieIsSentToItsHostOnly() {
        let jar = jar(["a=1"])
        #expect(jar.cookies.first?.isHostOnly == true && jar.cookies.first?.domain == "www.example.com")
        #expect(field(jar, "https://www.example.com/x") == "a=1")
        #expect(field(jar, "https://WWW.Example.COM/x") == "a=1")
        #expect(field(jar, "https://sub.www.example.com/") == nil)
        #expect(field(jar, "https://example.com/") == nil)
        // The port is no part of a cookie's scope (RFC 6265bis §8.5).
        #expect(field(jar, "https://www.example.com:8443/") == "a=1")
    }

    @Test func withADomainItIsSentToThatDomainAndItsSubdomains() {
        let jar = jar(["a=1; Domain=.Example.com"])
        #expect(jar.cookies.first?.isHostOnly == false && jar.cookies.first?.domain == "example.com")
        for url in ["https://example.com/", "https://www.example.com/", "https://a.b.example.com/"] {
            #expect(field(jar, url) == "a=1", "\(url)")
        }
        for url in ["https://notexample.com/", "https://example.com.evil.net/", "https://com/"] {
            #expect(field(jar, url) == nil, "\(url)")
        }
    }

    @Test(arguments: [
        "a=1; Domain=other.com", "a=1; Domain=sub.www.example.com", "a=1; Domain=com", "a=1; Domain=.com",
        "a=1; Domain=ample.com", "a=1; Domain=example.com.",
    ])
    func aDomainThatIsNotTheHostOrAParentOfItIsRefused(line: String) {
        #expect(jar([line]).cookies.isEmpty)
    }

    @Test func aSingleLabelDomainIsAcceptedOnlyAsTheHostItself() {
        let local = jar(["a=1; Domain=localhost"], from: "http://localhost:8080/")
        #expect(local.cookies.first?.isHostOnly == true && local.cookies.first?.domain == "localhost")
        #expect(field(local, "http://localhost/") == "a=1")
        #expect(field(local, "http://sub.localhost/") == nil)
    }

    @Test func anIPAddressAcceptsOnlyItselfAsDomain() {
        #expect(jar(["a=1; Domain=0.0.1"], from: "http://10.0.0.1/").cookies.isEmpty)
        let same = jar(["a=1; Domain=10.0.0.1"], from: "http://10.0.0.1/")
        #expect(field(same, "http://10.0.0.1/") == "a=1")
        #expect(field(same, "http://110.0.0.1/") == nil)
        #expect(field(jar(["a=1"], from: "http://[::1]:8080/"), "http://[::1]/") == "a=1")
    }

    @Test func anEmptyDomainIsIgnoredAndTheCookieIsHostOnly() {
        #expect(jar(["a=1; Domain="]).cookies.first?.isHostOnly == true)
    }

    // MARK: Path

    @Test(arguments: [
        ("/", "/"), ("", "/"), ("/a", "/"), ("/a/", "/a"), ("/a/b", "/a"), ("/a/b/c", "/a/b"), ("/a//b", "/a/"),
    ])
    func theDefaultPathIsTheDirectoryOfTheRequestPath(path: String, expected: String) {
        #expect(CookieJar.defaultPath(of: path) == expected)
    }

    @Test func aPathMatchesItselfAndWhatIsBelowIt() {
        let jar = jar(["a=1; Path=/docs"])
        for path in ["/docs", "/docs/", "/docs/web", "/docs/web/x"] {
            #expect(field(jar, "https://www.example.com" + path) == "a=1", "\(path)")
        }
        for path in ["/", "/doc", "/docsets", "/Docs"] {
            #expect(field(jar, "https://www.example.com" + path) == nil, "\(path)")
        }
        #expect(self.jar(["a=1; Path=docs"], from: "https://www.example.com/x/y").cookies.first?.path == "/x")
    }

    // MARK: Secure

    @Test func aSecureCookieIsStoredFromHTTPSOnlyAndNeverSentOverHTTP() {
        #expect(jar(["a=1; Secure"], from: "http://www.example.com/").cookies.isEmpty)
        let jar = jar(["a=1; Secure", "b=2"])
        #expect(field(jar, "https://www.example.com/") == "a=1; b=2")
        #expect(field(jar, "http://www.example.com/") == "b=2")
    }

    @Test func aLoopbackHostCountsAsSecureAsInBrowsers() {
        for origin in ["http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080", "http://api.localhost"] {
            let jar = jar(["a=1; Secure", "__Host-b=2; Secure; Path=/"], from: origin + "/")
            #expect(jar.cookies.count == 2, "\(origin)")
            #expect(field(jar, origin + "/x") == "a=1; __Host-b=2", "\(origin)")
        }
        #expect(jar(["a=1; Secure"], from: "http://127.0.0.2.example/").cookies.isEmpty)
    }

    @Test func plainHTTPCannotReplaceOrShadowASecureCookie() {
        var jar = jar(["id=secure; Secure; Domain=example.com"])
        #expect(jar.receive(["id=plain"], for: request("http://www.example.com/"), now: now) == 0)
        #expect(jar.receive(["id=plain; Path=/sub"], for: request("http://www.example.com/"), now: now) == 0)
        #expect(jar.receive(["other=plain"], for: request("http://www.example.com/"), now: now) == 1)
        #expect(field(jar, "https://www.example.com/") == "id=secure; other=plain")
    }

    @Test(arguments: [
        ("__Secure-a=1", false), ("__Secure-a=1; Secure", true), ("__secure-a=1", false),
        ("__Host-a=1; Secure; Path=/", true), ("__Host-a=1; Secure", false), ("__Host-a=1; Secure; Path=/x", false),
        ("__Host-a=1; Secure; Path=/; Domain=example.com", false), ("__HOST-a=1; Path=/", false),
        ("=__Secure-a", false), ("=__Host-x", false), ("SameSite-None=1; SameSite=None", false),
        ("SameSite-None=1; SameSite=None; Secure", true),
    ])
    func prefixesAndSameSiteNoneRequireSecure(line: String, isStored: Bool) {
        #expect(jar([line], from: "https://example.com/x").cookies.isEmpty == !isStored)
    }

    // MARK: Expiry

    @Test func maxAgeWinsOverExpiresWhereverEachStands() {
        let expires = "Expires=Wed, 01 Jan 2020 00:00:00 GMT"  // in the past
        for line in ["a=1; Max-Age=60; \(expires)", "a=1; \(expires); Max-Age=60"] {
            let cookie = jar([line]).cookies.first
            #expect(cookie?.expiresDate == now + 60, "\(line)")
        }
        #expect(jar(["a=1; Max-Age=junk; \(expires)"]).cookies.isEmpty)  // an invalid Max-Age is ignored
    }

    @Test func aCookieInThePastRemovesTheStoredOne() {
        var jar = jar(["a=1", "b=2; Path=/", "c=3"])
        jar.receive(
            ["a=gone; Max-Age=0", "b=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "c=x; Max-Age=-1"],
            for: request("https://www.example.com/"), now: now)
        #expect(jar.cookies.isEmpty)
    }

    @Test func lifetimesAreCappedAtFourHundredDaysAndExpiredCookiesAreNotSent() {
        var jar = jar(["a=1; Max-Age=999999999", "b=2; Expires=Fri, 31 Dec 9999 23:59:59 GMT", "c=3; Max-Age=10"])
        let cap = now + 400 * 86_400
        #expect(jar.cookies.map(\.expiresDate) == [cap, cap, now + 10])
        #expect(jar.cookieField(for: request("https://www.example.com/"), now: now + 11) == "a=1; b=2")
        #expect(jar.cookies.filter { !$0.isPersistent }.isEmpty)
    }

    // MARK: The Cookie field

    @Test func longerPathsFirstThenEarlierCreation() {
        var jar = CookieJar()
        let target = request("https://www.example.com/a/b/c")
        jar.receive(["root=1; Path=/"], for: target, now: now)
        jar.receive(["deep=2; Path=/a/b"], for: target, now: now + 1)
        jar.receive(["mid=3; Path=/a"], for: target, now: now + 2)
        jar.receive(["root2=4; Path=/"], for: target, now: now + 3)
        jar.receive(["deep2=5; Path=/a/b"], for: target, now: now + 4)
        #expect(jar.cookieField(for: target, now: now + 5) == "deep=2; deep2=5; mid=3; root=1; root2=4")
        // A replacement keeps its creation date, so it keeps its place.
        jar.receive(["root=changed; Path=/"], for: target, now: now + 6)
        #expect(jar.cookieField(for: target, now: now + 7) == "deep=2; deep2=5; mid=3; root=changed; root2=4")
        #expect(jar.cookies.count == 5)
    }

    @Test func aNamelessCookieIsSentAsItsValueAlone() {
        let jar = jar(["justavalue", "=alsovalue; Path=/", "a=1"])
        #expect(field(jar, "https://www.example.com/") == "alsovalue; a=1")  // the second replaces the first
        #expect(jar.cookies.count == 2)
    }

    @Test func theSameNameOnAnotherPathOrDomainIsAnotherCookie() {
        var jar = jar(["a=1", "a=2; Path=/x", "a=3; Domain=example.com"])
        #expect(jar.cookies.count == 3)
        #expect(jar.cookieField(for: request("https://www.example.com/x"), now: now) == "a=2; a=1; a=3")
    }

    @Test func theLeastRecentlyUsedGoFirstBeyondTheLimits() {
        var jar = CookieJar(maximumCookiesPerDomain: 3, maximumCookies: 5)
        let www = request("https://www.example.com/")
        for (index, name) in ["a", "b", "c"].enumerated() {
            jar.receive(["\(name)=1"], for: www, now: now + Double(index))
        }
        _ = jar.cookies(for: request("https://www.example.com/"), now: now + 10)  // all used at 10
        jar.receive(["d=1; Path=/x"], for: www, now: now + 11)
        // All three were used at 10: the earliest stored goes.
        #expect(jar.cookies.map(\.name) == ["b", "c", "d"])
        for index in 0..<4 {
            jar.receive(
                ["o\(index)=1"], for: request("https://other\(index).example.net/"), now: now + 20 + Double(index))
        }
        #expect(jar.cookies.map(\.name) == ["d", "o0", "o1", "o2", "o3"])
    }

    @Test func aRequestWithoutAUsableHostNeitherStoresNorGetsCookies() {
        var jar = CookieJar()
        #expect(jar.receive(["a=1"], for: HTTPRequest(path: "/relative"), now: now) == 0)
        #expect(jar.receive(["a=1"], for: request("ftp://example.com/"), now: now) == 0)
        #expect(jar.cookieField(for: HTTPRequest(path: "/relative"), now: now) == nil)
    }

    @Test func theDescriptionNamesTheCookieButNeverItsValue() {
        let cookie = jar(["session=s3cr3t-value; Secure; HttpOnly; SameSite=Lax; Max-Age=60"]).cookies[0]
        #expect(!cookie.description.contains("s3cr3t"))
        #expect(cookie.description.hasPrefix("session (www.example.com/, Secure, HttpOnly, SameSite=Lax, expires"))
    }

    // MARK: Parsing

    @Test func theNameAndValueAreTrimmedAndAttributesReadWithoutCase() throws {
        let parsed = try #require(
            SetCookie("  a b = c=d ;  PATH = /p ; secure;HTTPONLY; samesite=STRICT ; domain=Example.COM", now: now))
        #expect(parsed.name == "a b" && parsed.value == "c=d")
        #expect(parsed.path == "/p" && parsed.isSecure && parsed.isHTTPOnly && parsed.sameSite == .strict)
        #expect(parsed.domain == "example.com")
        #expect(SetCookie("a=1; SameSite=bogus", now: now)?.sameSite == .default)
    }

    @Test(arguments: ["", "=", " ; a=1", "a=1\u{0}", "a=\r\n1", "a=1;\u{7F}", "\u{1}x=1"])
    func linesThatSetNoCookie(line: String) {
        #expect(SetCookie(line, now: now) == nil)
    }

    @Test func tooLongNamesAndValuesAreRefusedAndTooLongAttributesIgnored() {
        #expect(SetCookie("a=" + String(repeating: "v", count: 4_095), now: now) != nil)
        #expect(SetCookie("ab=" + String(repeating: "v", count: 4_095), now: now) == nil)
        let longPath = "/" + String(repeating: "p", count: 1_024)
        #expect(SetCookie("a=1; Path=\(longPath)", now: now)?.path == nil)
        #expect(SetCookie("a=1; Path=\(longPath.dropLast())", now: now)?.path?.count == 1_024)
    }

    @Test func linesATransportFoldedTogetherAreSplitAgainButNotAtTheCommaOfADate() {
        let lines = [
            "session=abc; Path=/; Expires=Wed, 09 Jun 2021 10:18:14 GMT", "theme=dark",
            "id=1; Expires=Wednesday, 09-Jun-21 10:18:14 GMT; Secure", "x=a,b",
        ]
        #expect(SetCookie.unfolded(lines.joined(separator: ", ")) == lines)
        #expect(SetCookie.unfolded(lines.joined(separator: ",")) == lines)
        #expect(SetCookie.unfolded("a=1") == ["a=1"])
        #expect(SetCookie.unfolded("") == [])
        #expect(SetCookie.unfolded(", ,a=1, =2") == [",", "a=1, =2"])
    }

    @Test(arguments: [
        ("Wed, 09 Jun 2021 10:18:14 GMT", 1_623_233_894.0), ("Wednesday, 09-Jun-21 10:18:14 GMT", 1_623_233_894),
        ("Wed Jun  9 10:18:14 2021", 1_623_233_894), ("09 jun 2021 10:18:14", 1_623_233_894),
        ("2021 JUNE 9 10:18:14 UTC", 1_623_233_894), ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Sat, 29 Feb 2020 23:59:59 GMT", 1_583_020_799), ("1 Jan 69 0:0:0", 3_124_224_000),
        ("1 Jan 70 0:0:0", 0), ("Mon, 01 Jan 1601 00:00:00 GMT", -11_644_473_600),
    ])
    func cookieDatesAreReadAsTheAlgorithmSays(text: String, seconds: Double) {
        #expect(CookieDate.parse(Array(text.utf8)[...])?.timeIntervalSince1970 == seconds, "\(text)")
    }

    @Test(arguments: [
        "", "Wed, 09 Jun 2021", "09 Jun 2021 24:00:00", "09 Jun 2021 10:60:00", "32 Jun 2021 10:00:00",
        "31 Jun 2021 10:00:00", "29 Feb 2021 10:00:00", "09 Jun 1600 10:00:00", "09 Foo 2021 10:00:00",
        "0 Jun 2021 10:00:00", "09 Jun 2021 10:00:000",
    ])
    func invalidCookieDatesAreNone(text: String) {
        #expect(CookieDate.parse(Array(text.utf8)[...]) == nil, "\(text)")
    }

    /// Random `Set-Cookie` lines — cookie-like pieces and arbitrary bytes, from random hosts and paths — never
    /// trap, and what the jar keeps always satisfies the storage model's invariants.
    @Test func randomSetCookieLinesNeverTrapAndTheJarStaysConsistent() {
        let seed = SplitMix64.seed()
        print("CookieJarTests: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let pieces = [
            "a", "b", "=", ";", " ", "\t", "Domain=", "domain=.", "example.com", "com", "Path=", "/", "/x", "Secure",
            "HttpOnly", "SameSite=", "None", "Lax", "Max-Age=", "-1", "0", "99999999999999999999", "Expires=",
            "Wed, 09 Jun 2021 10:18:14 GMT", "31 Feb 2021 1:1:1", "__Host-", "__Secure-", "\"", ",", "é", "\u{0}",
            "\r\n", "\u{7F}", "%", "..", "[::1]",
        ]
        let hosts = ["www.example.com", "example.com", "a.b.example.com", "localhost", "10.0.0.1", "[::1]"]
        var jar = CookieJar(maximumCookiesPerDomain: 20, maximumCookies: 60)
        for step in 0..<5_000 {
            var line = ""
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                if Int.random(in: 0..<8, using: &random) == 0 {
                    line.unicodeScalars.append(Unicode.Scalar(UInt32.random(in: 0...0x2FF, using: &random)) ?? "?")
                } else {
                    line += pieces.randomElement(using: &random)!
                }
            }
            let scheme = Bool.random(using: &random) ? "https" : "http"
            let path = ["", "/", "/x", "/x/y", "/a/b/c"].randomElement(using: &random)!
            let host = hosts.randomElement(using: &random)!
            let url = "\(scheme)://\(host)\(path)"
            let date = now + Double(step)
            _ = SetCookie(line, now: date)
            jar.receive([line], for: request(url), now: date)
            let context = "seed \(seed), step \(step): \(line.debugDescription) from \(url)"
            #expect(jar.cookies.count <= 60, "\(context)")
            for cookie in jar.cookies {
                #expect(!cookie.domain.isEmpty && cookie.path.hasPrefix("/"), "\(context)")
                #expect(!(cookie.name + cookie.value).contains(";"), "\(context)")
                #expect(
                    !(cookie.name + cookie.value).unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" },
                    "\(context)")
                #expect(cookie.name.utf8.count + cookie.value.utf8.count <= 4_096, "\(context)")
                #expect(cookie.expiresDate.map { $0 > date && $0 <= date + 400 * 86_400 } ?? true, "\(context)")
            }
            let sent = jar.cookies(for: request(url), now: date)
            let isLoopback = host == "localhost" || host == "[::1]"
            #expect(sent.allSatisfy { !$0.isSecure || scheme == "https" || isLoopback }, "\(context)")
            #expect(zip(sent, sent.dropFirst()).allSatisfy { $0.path.utf8.count >= $1.path.utf8.count }, "\(context)")
        }
    }

    // MARK: Randomised domain and path matching

    /// Random hosts, `Domain` and `Path` attributes, public suffixes and request URLs: what the jar stores and sends
    /// is what RFC 6265bis §5.1.3, §5.1.4 and §5.7 say, as a model written from the RFC's text computes it.
    @Test func randomDomainsAndPathsMatchAsTheRFCSays() {
        let seed = SplitMix64.seed()
        print("CookieJarTests.randomDomainsAndPaths: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let labels = ["a", "b", "ab", "example", "co", "uk", "x-y", "ba"]
        let segments = ["a", "b", "ab", "a.b", "", "A"]
        let suffixRules = ["co.uk", "b.a", "example.co"]
        let list = PublicSuffixList(rules: suffixRules)

        func randomHost(_ random: inout SplitMix64) -> [String] {
            (0..<Int.random(in: 1...4, using: &random)).map { _ in labels.randomElement(using: &random)! }
        }
        func randomPath(_ random: inout SplitMix64) -> String {
            let parts = (0..<Int.random(in: 0...3, using: &random)).map { _ in segments.randomElement(using: &random)! }
            return "/" + parts.joined(separator: "/") + (Bool.random(using: &random) ? "/" : "")
        }
        // The model, from the RFC's words.
        func isPublicSuffix(_ domain: String) -> Bool { !domain.contains(".") || suffixRules.contains(domain) }
        func domainMatches(_ host: String, _ domain: String) -> Bool {
            host == domain || host.hasSuffix("." + domain)
        }
        func pathMatches(_ path: String, _ cookiePath: String) -> Bool {
            if path == cookiePath { return true }
            guard path.hasPrefix(cookiePath) else { return false }
            return cookiePath.hasSuffix("/") || path.dropFirst(cookiePath.count).hasPrefix("/")
        }
        func defaultPath(_ path: String) -> String {
            guard let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
            return String(path[..<last])
        }

        for round in 0..<3_000 {
            let host = randomHost(&random)
            let hostName = host.joined(separator: ".")
            let path = randomPath(&random)
            // A Domain attribute: none, a suffix of the host (the host itself included), or another name.
            var domainAttribute: String?
            switch Int.random(in: 0..<4, using: &random) {
            case 0: domainAttribute = nil
            case 1: domainAttribute = randomHost(&random).joined(separator: ".")
            default:
                domainAttribute = host.suffix(Int.random(in: 1...host.count, using: &random)).joined(separator: ".")
            }
            let spelledDomain = domainAttribute.map { (Bool.random(using: &random) ? "." : "") + $0.uppercased() }
            let pathAttribute = Bool.random(using: &random) ? randomPath(&random) : nil

            // What the model stores.
            var stored: (domain: String, hostOnly: Bool)?
            if let domain = domainAttribute {
                if isPublicSuffix(domain) {
                    stored = domain == hostName ? (hostName, true) : nil
                } else {
                    stored = domainMatches(hostName, domain) ? (domain, false) : nil
                }
            } else {
                stored = (hostName, true)
            }
            let cookiePath = pathAttribute ?? defaultPath(path)

            var line = "c=\(round)"
            if let spelledDomain { line += "; Domain=" + spelledDomain }
            if let pathAttribute { line += "; Path=" + pathAttribute }
            var jar = CookieJar(publicSuffixes: list)
            let url = "https://\(hostName)\(path)"
            jar.receive([line], for: request(url), now: now)
            let context = "seed \(seed), round \(round): \(line) from \(url)"
            guard let stored else {
                #expect(jar.cookies.isEmpty, "\(context)")
                continue
            }
            guard let cookie = jar.cookies.first, jar.cookies.count == 1 else {
                Issue.record("not stored: \(context)")
                continue
            }
            #expect(cookie.domain == stored.domain && cookie.isHostOnly == stored.hostOnly, "\(context)")
            #expect(cookie.path == cookiePath, "\(context)")

            // Requests to random hosts and paths: sent exactly where the model says.
            for _ in 0..<8 {
                let otherHost =
                    Bool.random(using: &random)
                    ? hostName
                    : (randomHost(&random) + (Bool.random(using: &random) ? host : [])).joined(separator: ".")
                let otherPath =
                    Bool.random(using: &random) ? cookiePath + randomPath(&random).dropFirst() : randomPath(&random)
                let hostMatches = stored.hostOnly ? otherHost == stored.domain : domainMatches(otherHost, stored.domain)
                let expected = hostMatches && pathMatches(otherPath, cookiePath)
                let sent = jar.cookieField(for: request("https://\(otherHost)\(otherPath)"), now: now)
                #expect((sent != nil) == expected, "\(context); sent to https://\(otherHost)\(otherPath)")
            }
        }
    }
}

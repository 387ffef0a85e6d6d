import Foundation
import Testing

@testable import HTTP

/// The public-suffix rule an app supplies (RFC 6265bis §5.7 step 9): no cookie for every site under a public suffix.
@Suite(.noHang) struct PublicSuffixListTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theEmptyListHasOnlyTheImplicitSingleLabelRule() {
        let list = PublicSuffixList()
        #expect(list.isPublicSuffix("com") && list.isPublicSuffix("localhost") && list.isPublicSuffix("com."))
        #expect(!list.isPublicSuffix("co.uk") && !list.isPublicSuffix("example.com"))
    }

    @Test func namesWildcardsAndExceptionsReadAsTheListWritesThem() {
        let list = PublicSuffixList(
            parsing: """
                // ===BEGIN ICANN DOMAINS===
                com
                Co.UK
                *.ck
                !www.ck

                github.io   extra words are ignored
                .io.example.
                公司.cn
                """)
        for suffix in ["co.uk", "github.io", "anything.ck", "io.example", "xn--55qx5d.cn", "uk"] {
            #expect(list.isPublicSuffix(suffix), "\(suffix)")
        }
        for domain in ["example.co.uk", "www.ck", "a.b.ck", "user.github.io", "example.com", "ck.example"] {
            #expect(!list.isPublicSuffix(domain), "\(domain)")
        }
        #expect(PublicSuffixList(rules: ["co.uk", "*.ck", "!www.ck"]).isPublicSuffix("x.ck"))
        #expect(!PublicSuffixList(rules: ["co.uk", "*.ck", "!www.ck"]).isPublicSuffix("www.ck"))
    }

    @Test func aJarRefusesACookieForAPublicSuffixUnlessItIsTheHostItself() {
        var jar = CookieJar(publicSuffixes: PublicSuffixList(rules: ["co.uk", "github.io"]))
        func receive(_ line: String, from url: String) -> Int {
            jar.receive([line], for: HTTPRequest(url: URL(string: url)!), now: now)
        }
        #expect(receive("a=1; Domain=co.uk", from: "https://www.example.co.uk/") == 0)
        #expect(receive("b=2; Domain=.CO.UK", from: "https://www.example.co.uk/") == 0)
        #expect(receive("c=3; Domain=github.io", from: "https://user.github.io/") == 0)
        #expect(receive("d=4; Domain=example.co.uk", from: "https://www.example.co.uk/") == 1)
        // The host itself may set a cookie naming it; the cookie is then for that host alone (host-only).
        #expect(receive("e=5; Domain=github.io", from: "https://github.io/") == 1)
        #expect(jar.cookies.map(\.name) == ["d", "e"])
        #expect(jar.cookies.last?.isHostOnly == true && jar.cookies.last?.domain == "github.io")
        #expect(jar.cookieField(for: HTTPRequest(url: URL(string: "https://user.github.io/")!), now: now) == nil)
        #expect(jar.cookieField(for: HTTPRequest(url: URL(string: "https://shop.example.co.uk/")!), now: now) == "d=4")
    }
}

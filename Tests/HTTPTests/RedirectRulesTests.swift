import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// The pure part of following a redirect: resolving `Location` (RFC 3986 §5) and turning the redirected request into
/// the next one.
@Suite(.noHang) struct RedirectRulesTests {
    /// A target as one string, to compare with RFC 3986's examples.
    private static func text(_ target: Target) -> String {
        var text = "\(target.scheme)://\(target.host ?? "")"
        if let port = target.port { text += ":\(port)" }
        text += target.path
        if let query = target.query { text += "?\(query)" }
        if let fragment = target.fragment { text += "#\(fragment)" }
        return text
    }

    private static let rfcBase = HTTPRequest(url: URL(string: "http://a/b/c/d;p?q")!)

    /// RFC 3986 §5.4.1 and §5.4.2 (strict parsing), with `//g` read as `http://g/`: an empty path is `/` over HTTP.
    @Test(arguments: [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
        ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
        ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
        ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"),
    ])
    func resolvesReferencesAsRFC3986Says(reference: String, expected: String) throws {
        let target = try Target.resolving(reference, against: Self.rfcBase).get()
        #expect(Self.text(target) == expected)
    }

    @Test(arguments: [
        ("g:h", "has the scheme 'g'; only http and https locations are followed"),
        ("http:g", "has no host"),  // strict: an http URL without an authority
        ("file:///etc/passwd", "has the scheme 'file'; only http and https locations are followed"),
        ("javascript:alert(1)", "has the scheme 'javascript'; only http and https locations are followed"),
        ("data:text/html,<b>x</b>", "has the scheme 'data'; only http and https locations are followed"),
        ("FTP://files.example.com/x", "has the scheme 'ftp'; only http and https locations are followed"),
        ("localhost:8080/next", "has the scheme 'localhost'; only http and https locations are followed"),
        ("http://user:pass@evil.example/x", "has user information (user@host), which is never followed"),
        ("https://api.example.com@evil.example/", "has user information (user@host), which is never followed"),
        ("http://", "has no host"), ("//", "has no host"), ("https://:443/x", "has no host"),
        ("http://h:99999/", "has the port '99999', which is not one"),
        ("http://h:8o/", "has the port '8o', which is not one"),
        ("http://[::1/x", "has an IPv6 host without its closing bracket"),
        ("http://[::1]x/", "has text after its IPv6 host"),
        ("http://bad host/", "has a host that contains ' ', which is not allowed in a host name"),
        ("1http://x/", "could not be parsed"), (":x", "could not be parsed"),
        ("/a%zz", "has a '%' in its path that is not followed by two hex digits"),
        ("/a?b=%", "has a '%' in its query that is not followed by two hex digits"),
    ])
    func refusesLocationsThatCannotBeFollowed(reference: String, problem: String) {
        let result = Target.resolving(reference, against: HTTPRequest(url: URL(string: "https://api.example.com/a")!))
        #expect(result == .failure(Target.Problem(phrase: problem)), "\(reference)")
    }

    @Test func encodesWhatTheServerLeftUnencoded() throws {
        let target = try Target.resolving(
            " /a b/ü\\c?q=ä b&r=%41#f g ", against: HTTPRequest(url: URL(string: "https://api.example.com/x")!)
        ).get()
        #expect(target.path == "/a%20b/%C3%BC%5Cc")
        #expect(target.query == "q=%C3%A4%20b&r=%41")
        #expect(target.fragment == "f g")
    }

    @Test func keepsHostsPortsAndSchemesAsWritten() throws {
        let base = HTTPRequest(url: URL(string: "https://api.example.com:8443/a/b")!)
        #expect(Self.text(try Target.resolving("c", against: base).get()) == "https://api.example.com:8443/a/c")
        #expect(
            Self.text(try Target.resolving("//cdn.example.net/x", against: base).get()) == "https://cdn.example.net/x")
        #expect(Self.text(try Target.resolving("HTTP://[::1]:8080", against: base).get()) == "http://[::1]:8080/")
        #expect(
            Self.text(try Target.resolving("http://b%C3%BCcher.example/", against: base).get())
                == "http://bücher.example/")
    }

    @Test func aRelativeBaseGivesARelativeRequest() throws {
        let target = try Target.resolving("next?page=2", against: HTTPRequest(path: "/v1/items/list")).get()
        #expect(target.host == nil)
        #expect(target.path == "/v1/items/next" && target.query == "page=2")
    }

    /// Whatever a server puts in `Location`, the outcome is a refusal with a reason, or a next request that passes
    /// validation: never a trap, never a request the terminal would refuse.
    @Test func anyLocationIsRefusedOrGivesAValidRequest() throws {
        let seed = SplitMix64.seed()
        print("RedirectRulesTests.anyLocationIsRefusedOrGivesAValidRequest: seed \(seed)")
        var random = SplitMix64(seed: seed)
        let pieces = [
            "http:", "https:", "HTTPS:", "file:", "//", "/", "\\", "?", "#", "@", ":", "[", "]", "%", "%4", "%41",
            "%zz",
            ".", "..", "./", "../", "a", "b.example", "localhost", "127.0.0.1", "::1", "8080", "99999", " ", "\t",
            "\r\n",
            "ü", "日本", "😀", "\u{0}", "=", "&", ";", ",", "'", "\"", "<", ">", "{", "}", "|", "^", "`", "+", "-", "~",
        ]
        let base = HTTPRequest(url: URL(string: "https://api.example.com:8443/a/b?c=d#e")!)
        var followed = 0
        for _ in 0..<5_000 {
            var location = ""
            for _ in 0..<Int.random(in: 0...8, using: &random) {
                location +=
                    Bool.random(using: &random)
                    ? pieces.randomElement(using: &random)!
                    : String(UnicodeScalar(UInt8.random(in: 0...127, using: &random)))
            }
            let redirect = HTTPResponse(request: base, status: .found, headers: ["Location": location])
            switch RedirectRules.next(after: redirect, of: base) {
            case .next(let next):
                followed += 1
                #expect(throws: Never.self, "seed \(seed), Location \(location.debugDescription)") {
                    try next.validate()
                }
            case .unusable(let problem):
                #expect(!problem.isEmpty)
            case .notFollowed:
                Issue.record("a 302 with a Location was not followed: \(location.debugDescription), seed \(seed)")
            }
        }
        #expect(followed > 1_000, "seed \(seed)")
    }

    @Test func hopKeysIgnoreCaseDefaultPortsAndFragments() {
        let plain = RedirectRules.HopKey(HTTPRequest(url: URL(string: "https://api.example.com/a?x=1")!))
        let spelled = RedirectRules.HopKey(HTTPRequest(url: URL(string: "HTTPS://API.example.com:443/a?x=1#top")!))
        let otherPort = RedirectRules.HopKey(HTTPRequest(url: URL(string: "https://api.example.com:8443/a?x=1")!))
        var posted = HTTPRequest(url: URL(string: "https://api.example.com/a?x=1")!)
        posted.method = .post
        #expect(plain == spelled)
        #expect(plain != otherPort)
        #expect(plain != RedirectRules.HopKey(posted))
    }
}

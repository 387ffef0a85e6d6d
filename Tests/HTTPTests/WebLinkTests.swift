import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// `Link` fields (RFC 8288) and following them.
@Suite(.noHang) struct WebLinkTests {
    @Test func linksWithRelationsAndParametersAreRead() {
        let links = WebLink.parse(
            #"<https://api.example.com/items?page=3>; rel="next", <https://api.example.com/items?page=9>; rel=last; title="The end""#
        )
        #expect(
            links == [
                WebLink(target: "https://api.example.com/items?page=3", relations: ["next"]),
                WebLink(
                    target: "https://api.example.com/items?page=9", relations: ["last"],
                    parameters: ["title": "The end"]),
            ])
    }

    @Test func relationsAreAListCompareWithoutCaseAndOnlyTheFirstRelCounts() {
        #expect(WebLink.parse(#"</a>; REL="Next Last"; rel=prev"#).first?.relations == ["next", "last"])
        #expect(WebLink.parse("</a>;rel=next").first?.relations == ["next"])
        #expect(WebLink.parse("</a> ; rel = next").first?.relations == ["next"])
    }

    @Test func commasAndSemicolonsInsideTargetsAndQuotedStringsDoNotSplit() {
        let links = WebLink.parse(#"</a,b;c>; rel="next"; title="x, y; \"z\"", </d>; rel=prev"#)
        #expect(links.map(\.target) == ["/a,b;c", "/d"])
        #expect(links.first?.parameters["title"] == #"x, y; "z""#)
    }

    @Test func malformedLinkValuesAreSkippedAndTheRestRead() {
        #expect(WebLink.parse(#"garbage; rel=next, </ok>; rel=next"#).map(\.target) == ["/ok"])
        #expect(WebLink.parse("</unterminated; rel=next").isEmpty)
        #expect(WebLink.parse("").isEmpty)
        #expect(WebLink.parse(", ,").isEmpty)
    }

    /// Random field values over the grammar's characters never trap; links written from random parts read back.
    @Test func randomValuesNeverTrapAndWrittenLinksReadBack() {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let alphabet: [Character] = Array("<>;=\", \t\\relnxt/a?&é")
        for _ in 0..<3_000 {
            let text = String(
                (0..<Int.random(in: 0...30, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            _ = WebLink.parse(text)
        }
        let targets = ["/a", "https://x.example/b?c=1,2", "../up;x", "/é"]
        let relations = ["next", "prev", "last", "first", "alternate"]
        for _ in 0..<500 {
            let links = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                WebLink(
                    target: targets.randomElement(using: &random)!,
                    relations: Array(relations.shuffled(using: &random).prefix(Int.random(in: 1...2, using: &random))),
                    parameters: Bool.random(using: &random) ? ["title": "t, \"q\"; x"] : [:])
            }
            let written = links.map { link in
                var text = "<\(link.target)>; rel=\"\(link.relations.joined(separator: " "))\""
                for (name, value) in link.parameters {
                    text += "; \(name)=\"" + value.replacingOccurrences(of: "\"", with: "\\\"") + "\""
                }
                return text
            }.joined(separator: ", ")
            #expect(WebLink.parse(written) == links, "\(written) (seed \(seed))")
        }
    }

    @Test func followingANextLinkResolvesItAndKeepsTheRequestsFieldsAndOptions() throws {
        var original = HTTPRequest(
            host: "api.example.com", path: "/v1/items", query: [URLQueryItem(name: "page", value: "1")])
        original.headers["Accept"] = "application/json"
        original.attemptNumber = 1
        let response = HTTPResponse(request: original, status: .ok, headers: ["Link": #"<items?page=2>; rel="next""#])
        let next = try #require(original.following(link: "next", in: response))
        #expect(next.url?.absoluteString == "https://api.example.com/v1/items?page=2")
        #expect(next.method == .get && next.headers["Accept"] == "application/json")
        #expect(original.following(link: "prev", in: response) == nil)
    }

    @Test func aLinkToAnotherOriginDoesNotCarryTheRequestsOwnCredentials() throws {
        var original = HTTPRequest(host: "api.example.com", path: "/items")
        original.headers["Authorization"] = "Bearer secret"
        let response = HTTPResponse(
            request: original, status: .ok, headers: ["Link": "<https://elsewhere.example.net/items?page=2>; rel=next"])
        let next = try #require(original.following(link: "next", in: response))
        #expect(next.host == "elsewhere.example.net")
        #expect(next.headers["Authorization"] == nil)
        let sameOrigin = HTTPResponse(request: original, status: .ok, headers: ["Link": "</items?page=2>; rel=next"])
        #expect(original.following(link: "next", in: sameOrigin)?.headers["Authorization"] == "Bearer secret")
    }

    @Test(arguments: ["<javascript:alert(1)>; rel=next", "<https://user@evil.example/>; rel=next", "<//>; rel=next"])
    func aTargetThatCannotBeSentIsNotFollowed(link: String) {
        let original = HTTPRequest(host: "api.example.com", path: "/items")
        #expect(original.following(link: "next", in: HTTPResponse(request: original, headers: ["Link": link])) == nil)
    }
}

import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct PercentEncodingTests {
    @Test func encodesEverythingOutsideTheAllowedBytes() {
        #expect(
            PercentEncoding.encode("/people/Zoë Smith", allowing: PercentEncoding.pathAllowed)
                == "/people/Zo%C3%AB%20Smith")
        #expect(PercentEncoding.encode("a+b&c=d", allowing: PercentEncoding.queryAllowed) == "a%2Bb%26c%3Dd")
        #expect(PercentEncoding.encode("/a:b@c;d", allowing: PercentEncoding.pathAllowed) == "/a:b@c;d")
        #expect(PercentEncoding.encode("100%", allowing: PercentEncoding.pathAllowed) == "100%25")
    }

    @Test func agreesWithFoundationForEveryByte() {
        let allowed = CharacterSet(charactersIn: PercentEncoding.unreserved)
        for scalar in (0x20...0x7E).compactMap(Unicode.Scalar.init) + ["é", "日", "🦊"] {
            let text = "x\(scalar)y"
            #expect(
                PercentEncoding.encode(text, allowing: PercentEncoding.queryAllowed)
                    == text.addingPercentEncoding(withAllowedCharacters: allowed)
            )
        }
    }

    @Test func decodesAndRejectsMalformedInput() {
        #expect(PercentEncoding.decode("Zo%C3%ab%20Smith") == "Zoë Smith")
        #expect(PercentEncoding.decode("no escapes") == "no escapes")
        #expect(PercentEncoding.decode("%") == nil)
        #expect(PercentEncoding.decode("%4") == nil)
        #expect(PercentEncoding.decode("%zz") == nil)
        #expect(PercentEncoding.decode("%FF") == nil)  // not UTF-8
    }

    @Test func aMalformedEscapeInAPathNeitherCrashesNorIsLost() throws {
        let request = HTTPRequest(url: try #require(URL(string: "https://example.com/a%zz")))
        #expect(request.path == "/a%zz")  // not decodable, so shown as written
        // URLComponents encodes the stray "%" when the URL is built: the request stays sendable.
        #expect(request.url?.absoluteString == "https://example.com/a%25zz")
    }
}

import Foundation
import HTTP
import Testing

@testable import HTTPAuth

@Suite(.noHang) struct PKCETests {
    // MARK: Known vectors

    @Test func rfc7636AppendixBVector() throws {
        // RFC 7636 Appendix B: the 32 random octets, the verifier they encode to, and its S256 challenge.
        let octets: [UInt8] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
            22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ]
        #expect(Data(octets).base64URLEncodedString() == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")

        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.verifier == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    // Challenges computed with Python: base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
    @Test(arguments: [
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ZtNPunH49FD35FWYhT5Tv8I7vRKQJ8uxMaL0_9eHjNA"),
        (
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
                + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            "Gn88msbRKQ0wmy6Kms0RzrR4ZXFo3OGDewwvI9C7qZg"
        ),
    ])
    func challengeOfShortestAndLongestVerifiers(verifier: String, challenge: String) throws {
        #expect(try PKCE(verifier: verifier).challenge == challenge)
    }

    @Test func methodIsS256() {
        #expect(PKCE.method == "S256")
    }

    // MARK: Generated verifiers

    @Test func generatedVerifierIs43UnreservedCharacters() throws {
        let base64URLAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for _ in 0..<100 {
            let pkce = PKCE()
            #expect(pkce.verifier.count == 43)
            #expect(pkce.verifier.allSatisfy(base64URLAlphabet.contains))
            // It passes the validation a caller-provided verifier gets, and yields the same challenge.
            #expect(try PKCE(verifier: pkce.verifier) == pkce)
        }
    }

    @Test func generatedVerifierEncodes32Bytes() throws {
        let bytes = try #require(Data(base64URLEncoded: PKCE().verifier))
        #expect(bytes.count == 32)
    }

    @Test func generatedVerifiersDiffer() {
        let verifiers = Set((0..<1_000).map { _ in PKCE().verifier })
        #expect(verifiers.count == 1_000)
    }

    @Test func generatedChallengeIsTheVerifiersUnpaddedBase64URLSHA256() throws {
        let pkce = PKCE()
        let digest = try #require(Data(base64URLEncoded: pkce.challenge))
        #expect(digest == SHA256.hash(Data(pkce.verifier.utf8)))
        #expect(pkce.challenge.count == 43)
        #expect(!pkce.challenge.contains("="))
    }

    // MARK: Invalid verifiers

    @Test(arguments: [0, 1, 42])
    func tooShortVerifierThrows(length: Int) {
        let verifier = String(repeating: "a", count: length)
        let error = #expect(throws: PKCE.InvalidVerifier.self) { try PKCE(verifier: verifier) }
        #expect(error == .tooShort(length: length))
        #expect(error?.description.contains("at least 43 characters") == true)
        #expect(error?.description.contains("has \(length).") == true)
    }

    @Test(arguments: [129, 1_000])
    func tooLongVerifierThrows(length: Int) {
        let verifier = String(repeating: "a", count: length)
        let error = #expect(throws: PKCE.InvalidVerifier.self) { try PKCE(verifier: verifier) }
        #expect(error == .tooLong(length: length))
        #expect(error?.description.contains("at most 128 characters") == true)
    }

    @Test(
        arguments: [
            ("+", "U+002B"), ("/", "U+002F"), ("=", "U+003D"), (" ", "U+0020"), ("\n", "U+000A"), ("é", "U+00E9"),
            ("🔑", "U+1F511"),
        ] as [(Unicode.Scalar, String)])
    func disallowedCharacterThrows(character: Unicode.Scalar, codePoint: String) {
        let verifier = String(repeating: "a", count: 20) + String(character) + String(repeating: "b", count: 30)
        let error = #expect(throws: PKCE.InvalidVerifier.self) { try PKCE(verifier: verifier) }
        #expect(error == .disallowedCharacter(character, offset: 20))
        #expect(error?.description.contains("may contain only A-Z, a-z, 0-9") == true)
        #expect(error?.description.contains("(\(codePoint)) at offset 20") == true)
    }

    @Test func invalidVerifierMessageOmitsTheVerifier() {
        let verifier = "secret-" + String(repeating: "s", count: 40) + "!"
        let error = #expect(throws: PKCE.InvalidVerifier.self) { try PKCE(verifier: verifier) }
        #expect(error != nil)
        #expect(error?.description.contains("secret") == false)
    }

    @Test func characterRuleIsCheckedBeforeLength() {
        // A short verifier with a bad character is reported for the character, the more specific mistake.
        let error = #expect(throws: PKCE.InvalidVerifier.self) { try PKCE(verifier: "ab+") }
        #expect(error == .disallowedCharacter("+", offset: 2))
    }

    @Test func boundaryLengthsAreAccepted() throws {
        #expect(try PKCE(verifier: String(repeating: "~", count: 43)).verifier.count == 43)
        #expect(try PKCE(verifier: String(repeating: ".", count: 128)).verifier.count == 128)
    }

    // MARK: Base64url

    // RFC 4648 §10 test vectors, in base64url without padding (0, 2 and 1 padding characters dropped).
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func base64URLRoundTripsRFC4648Vectors(plain: String, encoded: String) {
        #expect(Data(plain.utf8).base64URLEncodedString() == encoded)
        #expect(Data(base64URLEncoded: encoded) == Data(plain.utf8))
    }

    @Test func base64URLUsesDashAndUnderscore() {
        // Standard base64 would give "+/8=", "++//" and "//79/A==".
        #expect(Data([0xfb, 0xff]).base64URLEncodedString() == "-_8")
        #expect(Data([0xfb, 0xef, 0xff]).base64URLEncodedString() == "--__")
        #expect(Data([0xff, 0xfe, 0xfd, 0xfc]).base64URLEncodedString() == "__79_A")
        #expect(Data(base64URLEncoded: "-_8") == Data([0xfb, 0xff]))
        #expect(Data(base64URLEncoded: "--__") == Data([0xfb, 0xef, 0xff]))
        #expect(Data(base64URLEncoded: "__79_A") == Data([0xff, 0xfe, 0xfd, 0xfc]))
    }

    @Test(arguments: 0..<16)
    func base64URLRoundTripsEveryLength(length: Int) {
        let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 0xf0) })
        let encoded = bytes.base64URLEncodedString()
        #expect(!encoded.contains("="))
        #expect(encoded.count == (length * 4 + 2) / 3)
        #expect(Data(base64URLEncoded: encoded) == bytes)
    }

    @Test func base64URLDecodeAcceptsCompletePadding() {
        #expect(Data(base64URLEncoded: "Zg==") == Data("f".utf8))
        #expect(Data(base64URLEncoded: "Zm8=") == Data("fo".utf8))
        #expect(Data(base64URLEncoded: "-_8=") == Data([0xfb, 0xff]))
    }

    @Test(arguments: [
        "Z", "Z===", "Zm9vY", "Zg=", "Zg===", "Zm8==", "Zg=a", "=", "+_8", "-/8", "Zm 8", "Zm8\n", "Zm8*",
    ])
    func base64URLDecodeRejectsMalformedInput(_ input: String) {
        #expect(Data(base64URLEncoded: input) == nil)
    }

    @Test func base64URLDecodeAcceptsSubstrings() {
        let jwt = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0."
        let payload = jwt.split(separator: ".")[1]
        #expect(Data(base64URLEncoded: payload) == Data(#"{"sub":"a"}"#.utf8))
    }

    @Test func descriptionsNeverShowTheVerifier() {
        let pkce = PKCE()
        #expect(!pkce.description.contains(pkce.verifier))
        #expect(!String(reflecting: pkce).contains(pkce.verifier))
        #expect(pkce.description.contains(pkce.challenge))
    }
}

import Foundation
import HTTP

/// A Proof Key for Code Exchange (RFC 7636): a secret verifier and the challenge derived from it.
///
/// An OAuth client makes a fresh `PKCE` for each authorization request. It sends the ``challenge`` and
/// ``method`` with the authorization request, keeps the ``verifier``, and sends the verifier with the token
/// request that redeems the authorization code. An attacker who intercepts the code cannot redeem it without
/// the verifier.
///
/// ```swift
/// let pkce = PKCE()
/// var authorization = URLComponents(string: "https://auth.example.com/authorize")!
/// authorization.queryItems = [
///     URLQueryItem(name: "response_type", value: "code"),
///     // client_id, redirect_uri, scope, state …
///     URLQueryItem(name: "code_challenge", value: pkce.challenge),
///     URLQueryItem(name: "code_challenge_method", value: PKCE.method),
/// ]
/// // Later, the token request's form includes `code_verifier=<pkce.verifier>`.
/// ```
///
/// The challenge is always `S256`: `BASE64URL(SHA256(ASCII(verifier)))`, unpadded (RFC 7636 §4.2). The
/// `plain` method is not offered.
public struct PKCE: Sendable, Hashable {
    /// The `code_challenge_method` for ``challenge``: `S256`.
    public static let method = "S256"

    /// The `code_verifier`: the secret the client keeps and sends with the token request.
    public let verifier: String

    /// The `code_challenge`: the verifier's unpadded base64url SHA-256, sent with the authorization request.
    public let challenge: String

    /// Creates a proof key with a new random verifier.
    ///
    /// The verifier is 32 bytes from `SystemRandomNumberGenerator`, base64url-encoded without padding: 43
    /// characters carrying 256 bits of entropy, as RFC 7636 §4.1 recommends.
    public init() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        self.init(validVerifier: Data(bytes).base64URLEncodedString())
    }

    /// Creates a proof key for a verifier you provide, such as one restored after an app relaunch.
    ///
    /// - Parameter verifier: A `code_verifier`: 43 to 128 characters, each a letter, a digit, `-`, `.`, `_`
    ///   or `~` (RFC 7636 §4.1).
    /// - Throws: ``InvalidVerifier`` naming the rule that `verifier` breaks.
    public init(verifier: String) throws(InvalidVerifier) {
        for (offset, scalar) in verifier.unicodeScalars.enumerated() where !Self.isUnreserved(scalar) {
            throw .disallowedCharacter(scalar, offset: offset)
        }
        // Every scalar is ASCII now, so UTF-8 bytes, scalars and characters count alike.
        let length = verifier.utf8.count
        guard length >= Self.verifierLengths.lowerBound else { throw .tooShort(length: length) }
        guard length <= Self.verifierLengths.upperBound else { throw .tooLong(length: length) }
        self.init(validVerifier: verifier)
    }

    private init(validVerifier verifier: String) {
        self.verifier = verifier
        self.challenge = Data(SHA256.hash(verifier.utf8)).base64URLEncodedString()
    }

    /// The lengths RFC 7636 §4.1 allows for a verifier.
    static let verifierLengths = 43...128

    /// Whether a scalar is in RFC 7636's `unreserved` set: `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
    private static func isUnreserved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "-", ".", "_", "~": true
        default: false
        }
    }
}

extension PKCE {
    /// The reason a string is not a valid PKCE `code_verifier` (RFC 7636 §4.1).
    ///
    /// The error's description names the broken rule but never repeats the verifier, which is a secret.
    @frozen
    public enum InvalidVerifier: Error, Hashable, Sendable, CustomStringConvertible {
        /// The verifier has fewer than 43 characters.
        case tooShort(length: Int)
        /// The verifier has more than 128 characters.
        case tooLong(length: Int)
        /// The verifier contains a character other than a letter, a digit, `-`, `.`, `_` or `~`.
        ///
        /// `offset` counts Unicode scalars from the start of the verifier.
        case disallowedCharacter(Unicode.Scalar, offset: Int)

        public var description: String {
            let lengths = PKCE.verifierLengths
            switch self {
            case .tooShort(let length):
                return "A PKCE code verifier must be at least \(lengths.lowerBound) characters long (RFC 7636 §4.1); "
                    + "this one has \(length)."
            case .tooLong(let length):
                return "A PKCE code verifier must be at most \(lengths.upperBound) characters long (RFC 7636 §4.1); "
                    + "this one has \(length)."
            case .disallowedCharacter(let scalar, let offset):
                let hex = String(scalar.value, radix: 16, uppercase: true)
                let codePoint = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                return "A PKCE code verifier may contain only A-Z, a-z, 0-9, \"-\", \".\", \"_\" and \"~\" "
                    + "(RFC 7636 §4.1); this one has \(scalar.debugDescription) (\(codePoint)) at offset \(offset)."
            }
        }
    }
}

// MARK: - Base64url

extension Data {
    /// The data in base64url (RFC 4648 §5) without padding, as PKCE, JWTs and JWKs use it.
    ///
    /// ```swift
    /// Data([0xfb, 0xff]).base64URLEncodedString()  // "-_8"
    /// ```
    func base64URLEncodedString() -> String {
        var encoded = base64EncodedString()
        while encoded.last == "=" {
            encoded.removeLast()
        }
        return String(
            encoded.map { character in
                switch character {
                case "+": "-"
                case "/": "_"
                default: character
                }
            }
        )
    }

    /// Decodes base64url (RFC 4648 §5), with or without its padding.
    ///
    /// Returns `nil` for anything else: the `+` and `/` of standard base64, whitespace, padding that is
    /// incomplete, excessive or not at the end, or a length no encoding produces.
    ///
    /// - Parameter string: Base64url text such as a JWT segment.
    init?(base64URLEncoded string: some StringProtocol) {
        var base64 = ""
        base64.reserveCapacity(string.utf8.count + 2)
        var paddingCount = 0
        for character in string {
            if character == "=" {
                paddingCount += 1
                continue
            }
            guard paddingCount == 0 else { return nil }  // padding only at the end
            switch character {
            case "+", "/": return nil
            case "-": base64.append("+")
            case "_": base64.append("/")
            default: base64.append(character)
            }
        }
        // Checked here rather than left to `init(base64Encoded:)`, whose leniency differs between platforms.
        let missingPadding = (4 - base64.utf8.count % 4) % 4
        guard missingPadding < 3, paddingCount == 0 || paddingCount == missingPadding else { return nil }
        base64 += String(repeating: "=", count: missingPadding)
        self.init(base64Encoded: base64)
    }
}

extension PKCE: CustomStringConvertible, CustomDebugStringConvertible {
    /// The method and challenge; the verifier is a secret and never appears in descriptions or logs.
    public var description: String { "PKCE(method: \(Self.method), challenge: \(challenge), verifier: <redacted>)" }
    public var debugDescription: String { description }
}

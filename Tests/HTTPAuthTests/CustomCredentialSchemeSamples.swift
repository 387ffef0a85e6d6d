import Foundation
import HTTP
import HTTPAuth
import HTTPTestSupport
import Testing

// Every `swift` block of Sources/HTTPAuth/HTTPAuth.docc/CustomCredentialSchemes.md is in this file, as written there,
// and `CustomCredentialSchemeTests.samplesMatchTheArticle` fails when one is not. The tests below run the article's
// API-key scheme and request signer through the public API: against a key server, a manual clock, Retry,
// FollowRedirects, resets and cancellation.

// CustomCredentialSchemes.md, "An API key refreshed from an endpoint".
struct APIKey: Sendable {
    var value: String
    var expires: Date
}

struct APIKeyScheme: CredentialScheme {
    let keyEndpoint: URL
    let clientID: String

    private struct IssuedKey: Decodable {
        var key: String
        var expiresIn: Double
    }

    struct KeyRefused: Error {
        var status: HTTPStatus
    }

    var credentialName: String { "the API key" }

    func obtainCredential(_ context: CredentialContext) async throws -> APIKey {
        let request = HTTPRequest(method: .post, url: keyEndpoint, body: JSONBody(["client_id": clientID]))
        let response = try await context.send(request).get()
        guard response.status == .ok else { throw KeyRefused(status: response.status) }
        let issued = try JSONDecoder().decode(IssuedKey.self, from: response.body)
        return APIKey(value: issued.key, expires: context.now.addingTimeInterval(issued.expiresIn))
    }

    func needsRefresh(_ key: APIKey, at now: Date) -> Bool {
        now >= key.expires.addingTimeInterval(-60)
    }

    func authenticate(_ request: inout HTTPRequest, with key: APIKey) {
        request.headers["X-API-Key"] = key.value
    }

    func forgetCredential(_ key: APIKey?, _ context: CredentialContext) async {
        guard let key else { return }
        var revocation = HTTPRequest(method: .post, url: keyEndpoint.appendingPathComponent("revoke"))
        revocation.headers["X-API-Key"] = key.value
        _ = await context.send(revocation)
    }
}

// CustomCredentialSchemes.md, "The loader, its method and its origins".
extension AuthenticationMethod {
    static let apiKey = AuthenticationMethod(rawValue: "apiKey")
}

func makeAPIKeyChain(keys: URL) -> HTTPLoader {
    let apiKey = CredentialLoader(
        scheme: APIKeyScheme(keyEndpoint: keys, clientID: "reports-app"),
        method: .apiKey,
        origins: ["api.example.com"]
    )
    return ApplyEnvironment(environment: ServerEnvironment(host: "api.example.com"))
        --> Auth(loaders: [.apiKey: apiKey])
        --> Retry()
        --> URLSessionLoader()
}

// CustomCredentialSchemes.md, "A request signer".
struct SigningKey: Sendable {
    var id: String
    var secret: Data
}

struct HMACSigner: CredentialScheme {
    let key: SigningKey
    let now: @Sendable () -> Date

    var credentialName: String { "the signing key" }

    func obtainCredential(_ context: CredentialContext) async throws -> SigningKey { key }

    func authenticate(_ request: inout HTTPRequest, with key: SigningKey) throws {
        let timestamp = String(Int(now().timeIntervalSince1970))
        // A body that can be read only once is not read here: it is marked unsigned instead.
        let body = request.body.isReplayable ? try request.body.encode() : Data("UNSIGNED-PAYLOAD".utf8)
        let digest = Data(SHA256.hash(data: body)).base64EncodedString()
        let target = request.percentEncodedPath + (request.percentEncodedQuery.map { "?" + $0 } ?? "")
        let signed = [request.method.rawValue, request.host ?? "", target, timestamp, digest].joined(separator: "\n")
        let code = HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: SymmetricKey(data: key.secret))
        request.headers["X-Timestamp"] = timestamp
        request.headers["X-Content-SHA256"] = digest
        request.headers["Authorization"] =
            "HMAC-SHA256 keyId=\"\(key.id)\", signature=\"\(Data(code).base64EncodedString())\""
    }
}

extension AuthenticationMethod {
    static let signed = AuthenticationMethod(rawValue: "signed")
}

func makeSignedChain(key: SigningKey) -> HTTPLoader {
    let signer = CredentialLoader(
        scheme: HMACSigner(key: key, now: Date.init),
        method: .signed,
        origins: ["api.example.com"],
        credential: key
    )
    return FollowRedirects() --> Retry() --> signer --> URLSessionLoader()
}

// CustomCredentialSchemes.md, "Test it with a mock".
@Test func signsEachAttemptAfresh() async {
    let clock = Box(Date(timeIntervalSince1970: 1_800_000_000))
    let mock = MockLoader()
        .then { request in
            clock.withLock { $0 += 5 }  // the first attempt takes five seconds, and fails
            return .success(HTTPResponse(request: request, status: .serviceUnavailable))
        }
        .then(status: .ok)
    let key = SigningKey(id: "k1", secret: Data("secret".utf8))
    let signer = CredentialLoader(
        scheme: HMACSigner(key: key, now: { clock.value }), method: .signed, origins: ["api.example.com"],
        credential: key)
    let chain = Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: 2)) --> signer --> mock
    var request = HTTPRequest(host: "api.example.com", path: "/reports")
    request.authenticationMethod = .signed
    _ = await chain.load(request)
    let timestamps = mock.receivedRequests.map { $0.headers["X-Timestamp"] }
    #expect(timestamps == ["1800000000", "1800000005"])
}

import Foundation
import HTTP
import HTTPAuth
import HTTPOpenAPI
import OpenAPIRuntime
import Testing

/// The generated client over `LoaderTransport` and `URLSessionLoader`, against the local httpbin.
@Suite(
    .timeLimit(.minutes(2)),
    .enabled(if: TestServers.httpbin != nil, "needs HTTPBIN_URL: run through scripts/servers.sh run"))
struct HTTPBinIntegrationTests {
    let httpbin = TestServers.httpbin!

    func client(
        _ chain: HTTPLoader,
        requestOverrides: (
            @Sendable (LoaderTransport.Configuration.RequestMetadata) ->
                LoaderTransport.Configuration
                .RequestOverrides
        )? = nil
    ) -> Client {
        let transport = LoaderTransport(configuration: .init(loader: chain, requestOverrides: requestOverrides))
        return Client(serverURL: httpbin, transport: transport)
    }

    @Test func anOperationReachesTheServer() async throws {
        let client = client(URLSessionLoader())

        let output = try await withDeadline { try await client.getAnything(query: .init(q: "Zoë & co")) }

        let echo = try output.ok.body.json
        #expect(echo.args?.additionalProperties["q"] == "Zoë & co")
        #expect(echo.headers.additionalProperties["Accept"] == "application/json")
        #expect(URLComponents(string: echo.url)?.path == "/get", "\(echo.url)")
    }

    @Test func statusesAreMappedAsTheGeneratedCodeExpects() async throws {
        let client = client(URLSessionLoader())

        let notFound = try await withDeadline { try await client.getStatus(path: .init(code: 404)) }
        let unavailable = try await withDeadline { try await client.getStatus(path: .init(code: 503)) }
        let teapot = try await withDeadline { try await client.getStatus(path: .init(code: 418)) }

        #expect(notFound == .notFound(.init()))
        #expect(unavailable == .serviceUnavailable(.init()))
        guard case .undocumented(statusCode: 418, _) = teapot else {
            Issue.record("expected an undocumented 418, got \(teapot)")
            return
        }
    }

    @Test func retryResendsAfterA503UntilItsLimit() async throws {
        let attempts = CountingLoader()
        let chain =
            Retry(strategy: RetryServiceUnavailable(attempts: 3), budget: nil) --> attempts --> URLSessionLoader()
        let client = client(chain)

        let output = try await withDeadline { try await client.getStatus(path: .init(code: 503)) }

        #expect(output == .serviceUnavailable(.init()))
        #expect(attempts.requests.value.map(\.attemptNumber) == [1, 2, 3])
        #expect(attempts.requests.value.allSatisfy { $0.openAPIOperationID == "getStatus" })
    }

    @Test func basicAuthAuthenticatesTheOperationsItsPolicyNames() async throws {
        let auth = Auth(loaders: [
            .basic: BasicAuth(
                origins: [try #require(Origin(httpbin))],
                credentials: BasicCredentials(username: "zoe", password: "s3cret"))
        ])
        let chain =
            operationPolicies(["getBasicAuth": { $0.authenticationMethod = .basic }])
            --> auth --> URLSessionLoader()
        let client = client(chain)

        let output = try await withDeadline {
            try await client.getBasicAuth(path: .init(user: "zoe", password: "s3cret"))
        }

        let result = try output.ok.body.json
        #expect(result.authenticated)
        #expect(result.user == "zoe")
        // Credentials the server refuses: BasicAuth has no delegate to ask for others, so the chain fails the load,
        // and the caller gets BasicAuth's error with the server's 401.
        let error = await #expect(throws: ClientError.self) {
            try await withDeadline { try await client.getBasicAuth(path: .init(user: "zoe", password: "other")) }
        }
        let failure = try #require(error.flatMap(chainError))
        #expect(failure.code == .cannotAuthenticate)
        #expect(failure.response?.status == .unauthorized)
    }

    @Test func aCacheServesTheSecondCallOfABufferedOperation() async throws {
        let network = CountingLoader()
        let chain = Cache() --> network --> URLSessionLoader()
        let client = client(chain) { metadata in
            var overrides = LoaderTransport.Configuration.RequestOverrides.empty
            if metadata.operationID == "getCached" { overrides.httpBodyProcessingMode = .buffered }
            return overrides
        }

        let first = try await withDeadline { try await client.getCached(path: .init(seconds: 60)) }
        let second = try await withDeadline { try await client.getCached(path: .init(seconds: 60)) }

        #expect(network.loadCount == 1)
        #expect(try first.ok.headers.cacheStatus?.contains("stored") == true)
        #expect(try second.ok.headers.cacheStatus?.hasPrefix("Cache; hit") == true)
        #expect(try second.ok.body.json == first.ok.body.json)
    }

    @Test func aResponseBodyIsReadWhileTheServerIsStillSendingIt() async throws {
        let client = client(URLSessionLoader())
        let start = ContinuousClock.now

        // httpbin sends one byte, then one every two seconds.
        let output = try await withDeadline { try await client.drip(query: .init(numbytes: 3, duration: 6)) }
        let body = try output.ok.body.binary
        let arrivals = try await withDeadline { () -> [Duration] in
            var arrivals: [Duration] = []
            for try await chunk in body {
                for _ in chunk { arrivals.append(ContinuousClock.now - start) }
            }
            return arrivals
        }

        #expect(arrivals.count == 3)
        #expect(try #require(arrivals.first) < .seconds(3), "\(arrivals)")
        #expect(try #require(arrivals.last) >= .seconds(3), "\(arrivals)")
    }

    @Test func aStreamedResponseBodyArrivesWhole() async throws {
        let client = client(URLSessionLoader())

        let output = try await withDeadline {
            try await client.streamBytes(path: .init(count: 100 * 1024), query: .init(chunkSize: 1024, seed: 7))
        }
        let bytes = try await collect(try output.ok.body.binary)

        #expect(bytes.count == 100 * 1024)
    }

    @Test func aSinglePassRequestBodyIsStreamedToTheServer() async throws {
        let client = client(URLSessionLoader())
        let (chunks, producer) = AsyncStream<OpenAPIRuntime.HTTPBody.ByteChunk>.makeStream()
        producer.yield(ArraySlice("hello, ".utf8))
        producer.yield(ArraySlice("world".utf8))
        producer.finish()

        let output = try await withDeadline {
            try await client.postAnything(body: .binary(OpenAPIRuntime.HTTPBody(chunks, length: .unknown)))
        }

        let echo = try output.ok.body.json
        #expect(echo.data == "hello, world")
        #expect(echo.method == "POST")
    }

    @Test func cancellingTheCallStopsARequestTheServerHoldsBack() async throws {
        let sent = CountingLoader()
        let client = client(sent --> URLSessionLoader())
        let start = ContinuousClock.now

        let call = Task { () -> Result<Operations.GetDelayed.Output, any Error> in
            do { return .success(try await client.getDelayed(path: .init(seconds: 10))) } catch {
                return .failure(error)
            }
        }
        try await eventually { sent.loadCount == 1 }
        try await Task.sleep(for: .milliseconds(200))  // let the transfer start; the server answers after 10 s
        call.cancel()

        let result = try await call.finished(within: 8)
        #expect(chainError(try #require(result.failure))?.code == .cancelled)
        #expect(ContinuousClock.now - start < .seconds(8))
        #expect(sent.resultCount == 1)
    }
}

/// The generated client's Server-Sent Events operation against the product's event-stream server
/// (sse-starlette's encoding under uvicorn).
@Suite(
    .timeLimit(.minutes(2)),
    .enabled(if: TestServers.eventStream != nil, "needs EVENT_STREAM_URL: run through scripts/servers.sh run"))
struct EventStreamIntegrationTests {
    @Test func eventsAreDecodedFromTheStreamedBody() async throws {
        let client = Client(serverURL: TestServers.eventStream!, transport: LoaderTransport(loader: URLSessionLoader()))

        let output = try await withDeadline { try await client.getNumbers(query: .init(count: 3)) }
        let events = try output.ok.body.textEventStream.asDecodedServerSentEventsWithJSONData(
            of: Components.Schemas.Number.self)
        let received = try await withDeadline { () -> [String] in
            var received: [String] = []
            for try await event in events {
                received.append("\(event.event ?? "message") \(event.id ?? "-") \(event.data?.n ?? -1)")
            }
            return received
        }

        #expect(received == ["number 1 1", "number 2 2", "number 3 3"])
        // Resumed after the last event, the stream has nothing more: the documented 204.
        let resumed = try await withDeadline {
            try await client.getNumbers(query: .init(count: 3), headers: .init(lastEventID: "3"))
        }
        #expect(resumed == .noContent(.init()))
    }
}

/// The generated client's bearer-protected operation, authenticated by `OAuth` logging into the local OpenID
/// Connect provider; httpbin's `/bearer` echoes the token it received.
@Suite(
    .timeLimit(.minutes(2)),
    .enabled(
        if: TestServers.httpbin != nil && TestServers.oidcIssuer != nil,
        "needs HTTPBIN_URL and OIDC_ISSUER_URL: run through scripts/servers.sh run"))
struct OAuthIntegrationTests {
    let httpbin = TestServers.httpbin!
    let issuer = TestServers.oidcIssuer!

    @Test func aBearerProtectedOperationGetsTheTokenOAuthObtained() async throws {
        let delegate = ProviderLoginDelegate()
        let oauth = OAuth(
            configuration: OAuthConfiguration(
                issuer: issuer,
                clientID: "openapi-tests",
                clientSecret: "any-secret",  // the provider accepts any secret, but wants one
                redirectURI: URL(string: "http://127.0.0.1/callback")!,
                scopes: ["openid"],
                resourceOrigins: [try #require(Origin(httpbin))]),
            delegate: delegate)
        let chain =
            operationPolicies(["getBearer": { $0.authenticationMethod = .oauth }])
            --> Auth(loaders: [.oauth: oauth]) --> URLSessionLoader()
        let client = Client(serverURL: httpbin, transport: LoaderTransport(loader: chain))

        let output = try await withDeadline { try await client.getBearer() }

        let result = try output.ok.body.json
        #expect(result.authenticated)
        #expect(result.token == oauth.credentials?.accessToken)
        #expect(delegate.logins.value == 1)
        // Without the policy, the same operation goes unauthenticated, and httpbin refuses it.
        let anonymous = Client(serverURL: httpbin, transport: LoaderTransport(loader: URLSessionLoader()))
        #expect(try await withDeadline { try await anonymous.getBearer() } == .unauthorized(.init()))
    }
}

/// Logs in the way a user would on oidc-provider-mock's page: posts `sub=<subject>` to the authorization URL and
/// returns the redirect it answers with. Keeps credentials in memory.
final class ProviderLoginDelegate: OAuthDelegate {
    let subject = "openapi-" + UUID().uuidString.prefix(8).lowercased()
    let store = InMemoryCredentialStore()
    let browser = URLSessionLoader()
    let logins = Box(0)

    func savedCredentials(for loader: OAuth) async throws -> OAuthCredentials? {
        try await store.load(OAuthCredentials.self, for: "oauth")
    }

    func save(_ credentials: OAuthCredentials, for loader: OAuth) async throws {
        try await store.save(credentials, for: "oauth")
    }

    func deleteCredentials(for loader: OAuth) async throws {
        try await store.delete(for: "oauth")
    }

    func logIn(at url: URL, for loader: OAuth) async -> URL? {
        logins.withLock { $0 += 1 }
        var request = HTTPRequest(method: .post, url: url, body: FormBody(["sub": subject]))
        request.redirectPolicy = .doNotFollow
        guard let response = try? await browser.load(request).get(), response.status.rawValue == 302,
            let location = response.headers["Location"]
        else { return nil }
        return URL(string: location)
    }

    func logOut(at url: URL, for loader: OAuth) async {}
}

// A guided tour of the loader chain against a real httpbin on loopback.
//
// Run it with `scripts/demo.sh`, which starts the local servers and sets HTTPBIN_URL.
import Foundation
import HTTP
import HTTPAuth
import HTTPConnection

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let environment = ProcessInfo.processInfo.environment
guard let base = environment["HTTPBIN_URL"].flatMap(URL.init(string:)),
    let httpbin = ServerEnvironment(baseURL: base, headers: ["X-API-Key": "demo-key-123"]),
    let api = environment["NGINX_URL"].flatMap(URL.init(string:)).flatMap({ ServerEnvironment(baseURL: $0) })
else {
    print("HTTPBIN_URL and NGINX_URL are not set. Run the demo with scripts/demo.sh, which starts local servers.")
    exit(1)
}

print(
    "HTTP loader chain demo over \(DemoTransport.name) — local servers: httpbin at \(base.absoluteString), an API (nginx) at \(api.host):\(api.port ?? 80)"
)
print("(→ request sent, ← response received, ✕ failed: lines written by PrintLoader)")

section("What app code writes: let person = try await connection.request(.person(42))")
let production = AppEnvironment.production(api).makeConnection { print("   \($0)") }
show(chain: production.loader)
do {
    let person = try await production.request(.person(42))
    print("   ✓ decoded Person: \(person.name) <\(person.email)> from \(person.address.city)")
} catch {
    print("   ✗ \(error)")
}

section("The value with its response: connection.response(for:) returns a DecodedResponse")
do {
    let person = try await production.response(for: .person(42))
    let headers = person.headers
    print("   ✓ \(person.value.name), \(person.status); ETag \(headers["ETag"] ?? "-"), Date \(headers["Date"] ?? "-")")
    print("   metrics: \(person.metrics.map { "\($0)" } ?? "none")")
} catch {
    print("   ✗ \(error)")
}

section("A 404 with a typed error body becomes ServerError<APIProblem>")
do {
    _ = try await production.request(.person(7))
} catch let error as ServerError<APIProblem> {
    print("   ✓ caught ServerError<APIProblem>: \(error.response.status) — \(error.body.message)")
} catch {
    print("   ✗ unexpected: \(error)")
}

section("Environments: the same call against an in-memory development backend")
let development = AppEnvironment.development.makeConnection { print("   \($0)") }
if let person = try? await development.request(.person(42)) {
    print("   ✓ \(person.name) — switching environments is choosing which chain the Connection wraps")
}

section("A paged listing: connection.pages(for:) follows each page's Link: <…>; rel=\"next\" until there is none")
// httpbin's /response-headers answers with the header fields its query names, and echoes them as JSON: a chain of
// such URLs, each naming the next in a Link field, is a paged API. Page 3 has no next link.
struct EchoedPage: Decodable, Sendable {
    var page: String
    var link: String?

    enum CodingKeys: String, CodingKey {
        case page
        case link = "Link"
    }
}
func pageRequest(_ number: Int, next: HTTPRequest?) -> HTTPRequest {
    var query = [URLQueryItem(name: "page", value: "\(number)")]
    if let next {
        let target = "\(next.percentEncodedPath)?\(next.percentEncodedQuery ?? "")"
        query.append(URLQueryItem(name: "Link", value: "<\(target)>; rel=\"next\""))
    }
    return HTTPRequest(path: "/response-headers", query: query)
}
let firstPage = pageRequest(1, next: pageRequest(2, next: pageRequest(3, next: nil)))
let listing = Connection(
    loader: ApplyEnvironment(environment: httpbin)
        --> ModifyRequest { request in
            print("   → GET \(request.path)?page=\(request.query.first { $0.name == "page" }?.value ?? "?")…")
            return request
        }
        --> DemoTransport.makeTerminal())
do {
    for try await page in listing.pages(for: Request<EchoedPage>(underlyingRequest: firstPage)) {
        // The target between < and >, itself a URL whose query names the page after it.
        let target = page.link.flatMap { $0.split(separator: ">").first?.dropFirst() }
        let shown = target.map { $0.count > 40 ? "\($0.prefix(40))…" : String($0) }
        let next = shown.map { "Link: <\($0)>; rel=\"next\"" } ?? "no Link: the listing ends"
        print("   ✓ page \(page.page) — \(next)")
    }
} catch {
    print("   ✗ \(error)")
}

section("Server-Sent Events: connection.events(for:) reconnects with Last-Event-ID when the server hangs up")
if let eventServer = environment["EVENT_STREAM_URL"].flatMap(URL.init(string:)) {
    // The server ends each connection after two events; a loader in the chain shows each connection it opens.
    let watched =
        ModifyRequest { request in
            if let last = request.headers["Last-Event-ID"] {
                print("   ↻ the connection ended: reconnecting with Last-Event-ID: \(last)")
            } else {
                print("   → GET \(request.percentEncodedPath)?\(request.percentEncodedQuery ?? "")")
            }
            return request
        }
        --> DemoTransport.makeTerminal()
    var numbers = HTTPRequest(url: eventServer.appending(path: "numbers"))
    numbers.query = [URLQueryItem(name: "count", value: "5"), URLQueryItem(name: "close_after", value: "2")]
    do {
        let request = Request<ServerSentEvent>(underlyingRequest: numbers)
        for try await event in Connection(loader: watched).events(for: request) {
            print("   ✓ event \(event.type) #\(event.lastEventID): \(event.data)")
        }
        print("   the server answered 204 No Content once all five were sent: the stream ended, not reconnected")
    } catch {
        print("   ✗ \(error)")
    }
} else {
    print("   ✗ EVENT_STREAM_URL is not set; run the demo with scripts/demo.sh")
}

// The chain: relative requests go to the httpbin environment, redirects are followed hop by hop, requests get a
// User-Agent, are logged (secrets redacted) with their full URL, are refused while a reset runs, and go out over
// the demo's transport (URLSession, or AsyncHTTPClient with scripts/demo.sh --transport asynchttpclient).
let chain =
    ResetGuard()
    --> ApplyEnvironment(environment: httpbin)
    --> FollowRedirects()
    --> ModifyRequest { request in
        var copy = request
        copy.headers["User-Agent"] = "HTTPDemo/1.0"
        return copy
    }
    --> PrintLoader(redaction: .standard.adding("X-API-Key")) { print("   \($0)") }
    --> DemoTransport.makeTerminal()

section("Basic authentication: credentials from a login screen, sent only to their origin, asked for again after a 401")
let loginScreen = DemoLogin(answers: [
    BasicCredentials(username: "user", password: "wrong-password"),
    BasicCredentials(username: "user", password: "passwd"),
])
let authenticated =
    ApplyEnvironment(environment: httpbin)
    --> Auth(loaders: [.basic: BasicAuth(origins: [Origin(base)!], delegate: loginScreen)])
    --> PrintLoader(redaction: .standard.adding("X-API-Key"), includesHeaders: true) { print("   \($0)") }
    --> DemoTransport.makeTerminal()
var protected = HTTPRequest(path: "/basic-auth/user/passwd")
protected.authenticationMethod = .basic
// Said before the transcript, so the 401 in it reads as what it is: the server refusing a wrong password.
print(
    "   Why the first attempt gets a 401: the login screen's first answer is a mistyped password, "
        + "and httpbin refuses it. BasicAuth then forgets it, asks the login screen again and "
        + "replays the request once with the new answer:")
show(await authenticated.load(protected)) { "\($0.status) after asking the delegate \(loginScreen.timesAsked) times" }
// Another origin: the same server under another name, and the same host over another scheme.
for url in ["http://localhost:\(httpbin.port ?? 80)/headers", "https://\(httpbin.host):\(httpbin.port ?? 80)/headers"] {
    var elsewhere = HTTPRequest(url: URL(string: url)!)
    elsewhere.authenticationMethod = .basic
    show(await authenticated.load(elsewhere))
}

section("OAuth 2 / OpenID Connect: log in at the local provider, refresh a 2-second token, log out")
if let issuer = environment["OIDC_ISSUER_URL"].flatMap(URL.init(string:)), let provider = Origin(issuer) {
    let browser = DemoBrowser(subject: "alice")
    let configuration = OAuthConfiguration(
        issuer: issuer,
        clientID: "demo-app",
        clientSecret: "demo-secret",
        redirectURI: URL(string: "http://127.0.0.1/callback")!,
        scopes: ["openid", "email"],
        resourceOrigins: [provider]  // the provider's /userinfo, over http on loopback
    )
    let oauth = OAuth(configuration: configuration, delegate: browser)
    let sessions = Shared<[String]>([])
    let watcher = Task { for await state in oauth.sessionStates() { sessions.withLock { $0.append("\(state)") } } }
    let oauthChain =
        Auth(loaders: [.oauth: oauth])
        --> PrintLoader(includesHeaders: true) { print("   \($0)") }
        --> DemoTransport.makeTerminal()
    var userInfo = HTTPRequest(url: issuer.appending(path: "userinfo"))
    userInfo.authenticationMethod = .oauth

    show(await oauthChain.load(userInfo)) { "\($0.status): userinfo says sub=\(json($0)["sub"] ?? "-")" }
    let lifetime = oauth.credentials?.lifetime ?? .seconds(2)
    print("   the token lives \(seconds(lifetime)) s; four requests after it expires share one refresh:")
    try? await Task.sleep(for: lifetime + .milliseconds(200))
    let request = userInfo
    let statuses = await withTaskGroup(of: String.self) { group in
        for _ in 0..<4 { group.addTask { "\(await oauthChain.load(request).response?.status.rawValue ?? 0)" } }
        var statuses: [String] = []
        for await status in group { statuses.append(status) }
        return statuses
    }
    print("   ✓ statuses \(statuses.joined(separator: ", ")) (one token request above)")
    print("   reset = log out:")
    await oauthChain.reset()
    print("   credentials now: \(oauth.credentials.map { "\($0)" } ?? "none")")
    try? await Task.sleep(for: .milliseconds(50))
    watcher.cancel()
    print("   session states observed: \(sessions.value.joined(separator: " → "))")
} else {
    print("   ✗ OIDC_ISSUER_URL is not set; run the demo with scripts/demo.sh")
}

section("Signing in on a TV or in a terminal: the device grant (RFC 8628) at django-oauth-toolkit")
if let provider = environment["OAUTH_PROVIDER_URL"].flatMap(URL.init(string:)), let providerOrigin = Origin(provider) {
    let endpoint = { (path: String) in URL(string: path, relativeTo: provider)!.absoluteURL }
    let phone = DemoPhone(terminal: DemoTransport.makeTerminal())
    let grant = DeviceAuthorizationGrant(
        deviceAuthorizationEndpoint: endpoint("o/device-authorization/"), tokenEndpoint: endpoint("o/token/"),
        clientID: "tv-app", scopes: ["read"], revocationEndpoint: endpoint("o/revoke_token/"), delegate: phone)
    let tv = CredentialLoader(scheme: grant, method: .oauth, origins: [providerOrigin])
    // PrintLoader below the credential loader shows its polls too: 400 authorization_pending until the phone accepts.
    let tvChain = tv --> PrintLoader { print("   \($0)") } --> DemoTransport.makeTerminal()
    var me = HTTPRequest(url: provider.appending(path: "api/me"))
    me.authenticationMethod = .oauth
    show(await tvChain.load(me)) {
        "\($0.status): the API sees user \(json($0)["user"] ?? "-") through client \(json($0)["client_id"] ?? "-")"
    }
    print("   reset = sign out: the refresh and access tokens are revoked at the server")
    await tvChain.reset()
    withExtendedLifetime(phone) {}
} else {
    print("   ✗ OAUTH_PROVIDER_URL is not set; run the demo with scripts/demo.sh")
}

section("Pinning a server's public key: checked where the transport can, never silently skipped where it cannot")
if let trustedServer = environment["TLS_TRUSTED_URL"].flatMap(URL.init(string:)),
    let caFile = environment["TLS_CA_FILE"],
    let caCertificate = certificates(inPEMFile: caFile).first
{
    let capabilities = DemoTransport.capabilities
    // The local HTTPS server's certificate is issued by a test CA made for this run: pin that CA's key.
    let terminal = DemoTransport.makeTerminal(trustingCAFile: caFile)
    let strangersPin = Data(repeating: 7, count: 32).base64EncodedString()
    func report(_ label: String, _ result: HTTPResult) {
        switch result {
        case .success(let response): print("   ✓ \(label): \(response.status) from \(json(response)["server"] ?? "?")")
        case .failure(let error): print("   ✗ \(label): \(error.code) — \(error.message)")
        }
    }
    do {
        let caPin = try PublicKeyPinning.pin(forCertificate: caCertificate)
        print(
            "   \(capabilities.name) \(capabilities.canEvaluateServerTrust ? "checks" : "cannot check") pins; "
                + "the test CA's pin: \(caPin)")
        var pinned = HTTPRequest(url: trustedServer)
        pinned.serverTrustPolicy = .evaluated(by: try PublicKeyPinning(pins: [caPin]))
        report("pinned to the test CA's key", await terminal.load(pinned))
        var wronglyPinned = HTTPRequest(url: trustedServer)
        wronglyPinned.serverTrustPolicy = .evaluated(by: try PublicKeyPinning(pins: [strangersPin]))
        report("pinned to another key", await terminal.load(wronglyPinned))
        if !capabilities.canEvaluateServerTrust {
            print("   both failed closed: refused before anything was sent, never sent unpinned")
            report(
                "not pinned (the platform's own trust, which has no test CA)",
                await terminal.load(HTTPRequest(url: trustedServer)))
        }
    } catch {
        print("   ✗ \(error)")
    }
} else {
    print("   ✗ TLS_TRUSTED_URL and TLS_CA_FILE are not set; run the demo with scripts/demo.sh")
}

print("\nThe HTTP layer underneath, against httpbin:")
print("The chain, as it describes itself (print(chain)):")
show(chain: chain)

section("A relative request: the environment supplies host, port and API key")
show(await chain.load(HTTPRequest(path: "/headers"))) { response in
    let headers = json(response)["headers"] as? [String: String] ?? [:]
    return
        "\(response.status); server saw X-API-Key=\(headers["X-Api-Key"] ?? "-"), User-Agent=\(headers["User-Agent"] ?? "-")"
}

section("A JSON body, echoed back")
struct NewPerson: Codable, Sendable {
    var name: String
    var languages: [String]
}
show(
    await chain.load(
        HTTPRequest(method: .post, path: "/anything", body: JSONBody(NewPerson(name: "Zoë", languages: ["Swift"]))))
) {
    "\($0.status); server received json=\(json($0)["json"].map { "\($0)" } ?? "-")"
        .replacingOccurrences(of: "\n", with: " ")
}

section("A 404 is a response, not an error")
show(await chain.load(HTTPRequest(path: "/status/404"))) {
    "status \($0.status) — the connection layer decides what it means"
}

section("Bad input fails before anything is sent, and never crashes")
// Foundation's URLComponents traps on this path; the chain checks it first and names the character.
var unencoded = HTTPRequest(path: "/")
unencoded.percentEncodedPath = "/a b"
show(await chain.load(unencoded))
show(await chain.load(HTTPRequest(path: "/headers", headers: ["X-Note": "hello\r\nX-Injected: evil"])))
show(await chain.load(HTTPRequest(method: .post, path: "/anything", body: JSONBody(["ratio": Double.nan]))))
// An absolute URL is never sent to the environment's host, whatever its scheme.
show(await chain.load(HTTPRequest(url: URL(string: "file:///etc/passwd")!)))
show(await chain.load(HTTPRequest(method: .get, path: "/get", body: DataBody(Data("a body".utf8)))))

section("Redirects followed in the chain: each hop logged, RFC 9110 method rules, credentials kept to their origin")
var redirect = HTTPRequest(url: base.appendingPathComponent("/redirect-to"))
redirect.host = "localhost"  // localhost → 127.0.0.1 is a different origin
redirect.query = [URLQueryItem(name: "url", value: base.appendingPathComponent("/headers").absoluteString)]
redirect.headers = ["Authorization": "Bearer secret-token", "Cookie": "session=secret"]
show(await chain.load(redirect)) { response in
    let headers = json(response)["headers"] as? [String: String] ?? [:]
    return
        "landed on \(response.url?.host ?? "?"); Authorization=\(headers["Authorization"] ?? "removed"), Cookie=\(headers["Cookie"] ?? "removed")"
}
// A 303 turns the POST into a GET, without its body (RFC 9110 §15.4.4), on every platform.
var seeOther = HTTPRequest(
    method: .post, path: "/redirect-to", body: JSONBody(NewPerson(name: "Zoë", languages: ["Swift"])))
seeOther.query = [URLQueryItem(name: "url", value: "/anything"), URLQueryItem(name: "status_code", value: "303")]
show(await chain.load(seeOther)) { response in
    "\(response.status) after \(response.redirects.count) redirect: the server saw \(json(response)["method"] ?? "?")"
}
var noFollow = HTTPRequest(path: "/redirect/1")
noFollow.redirectPolicy = .doNotFollow
show(await chain.load(noFollow)) { "\($0.status) with Location: \($0[header: "Location"] ?? "-") (not followed)" }

section("Cancelling the task cancels the request at once")
let start = ContinuousClock.now
let slow = Task { await chain.load(HTTPRequest(path: "/delay/5")) }
try? await Task.sleep(for: .milliseconds(100))
slow.cancel()
show(await slow.value)
print("   finished after \(milliseconds(ContinuousClock.now - start)) (the server would have taken 5 s)")

section("A per-request timeout")
var impatient = HTTPRequest(path: "/delay/3")
impatient.timeout = .seconds(1)
show(await chain.load(impatient))

section("The completion-handler API, with a cancellable HTTPTask")
await withCheckedContinuation { continuation in
    let task = chain.load(HTTPRequest(path: "/get")) { result in
        show(result) { "completion handler called once: \($0.status)" }
        continuation.resume()
    }
    print("   started task \(task.id.uuidString.prefix(8))")
}

section("Reproduce a request with cURL (secrets redacted)")
let login = HTTPRequest(
    method: .post,
    url: base.appendingPathComponent("/anything/login"),
    headers: ["Authorization": "Bearer secret-token"],
    body: FormBody(["user": "alice", "remember": "yes"])
)
print(login.cURLCommand().split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))

section("A retried failure: /status/503, exponential backoff, three attempts")
// No retry budget here: the default one would stop retrying after five failures in a row, which is what it is
// for when a real server is down.
let retrying =
    ApplyEnvironment(environment: httpbin)
    --> Retry(
        strategy: .exponential(initialDelay: .milliseconds(100), maximumNumberOfAttempts: 3, jitter: .none),
        budget: nil
    )
    --> PrintLoader { print("   \($0)") }
    --> DemoTransport.makeTerminal()
show(await retrying.load(HTTPRequest(path: "/status/503"))) {
    "gave up with \($0.status) after \($0.request.attemptNumber) attempts (100 ms, then 200 ms apart)"
}
var payment = HTTPRequest(method: .post, path: "/status/503")
show(await retrying.load(payment)) { "a POST is not retried: \($0.request.attemptNumber) attempt" }
payment.idempotencyKey = "demo-payment-1"
show(await retrying.load(payment)) { "with an Idempotency-Key it is: \($0.request.attemptNumber) attempts" }

section("Throttled concurrent requests: eight requests, at most three at a time")
let throttle = Throttle(maximumNumberOfRequests: 3)
let throttled = ApplyEnvironment(environment: httpbin) --> throttle --> DemoTransport.makeTerminal()
let throttleStart = ContinuousClock.now
let finishTimes = await withTaskGroup(of: Duration.self, returning: [Duration].self) { group in
    for index in 0..<8 {
        group.addTask {
            var request = HTTPRequest(path: "/delay/0.3")
            request.throttlePriority = index == 7 ? .high : .normal
            _ = await throttled.load(request)
            return ContinuousClock.now - throttleStart
        }
    }
    var times: [Duration] = []
    for await time in group { times.append(time) }
    return times
}
let waves = finishTimes.sorted().map {
    String(format: "%.1f s", seconds($0))
}
print("   each takes 0.3 s; they finished at \(waves.joined(separator: ", "))")

section("Reset: requests arriving meanwhile are refused; what is in flight drains, or is cancelled")
let inFlight = Task { await chain.load(HTTPRequest(path: "/delay/1")) }
try? await Task.sleep(for: .milliseconds(100))
let reset = Task { await chain.reset() }  // drains: waits for the request in flight to finish
try? await Task.sleep(for: .milliseconds(100))
show(await chain.load(HTTPRequest(path: "/get")))
show(await inFlight.value) { "the request in flight still completed: \($0.status)" }
await reset.value
show(await chain.load(HTTPRequest(path: "/get"))) { "after the reset: \($0.status)" }
let slowInFlight = Task { await chain.load(HTTPRequest(path: "/delay/5")) }
try? await Task.sleep(for: .milliseconds(200))
let cancelStart = ContinuousClock.now
await chain.reset(mode: .cancel)  // a logout the user asked for: nothing of the old session comes back
show(await slowInFlight.value)
print("   reset(mode: .cancel) returned after \(milliseconds(ContinuousClock.now - cancelStart))")

section("A streamed response: the head first, then the body as it arrives, line by line")
switch await chain.stream(HTTPRequest(path: "/stream/3")) {
case .success(let streamed):
    print("   head: \(streamed.head.status), body still on its way")
    do {
        for try await line in streamed.body.lines { print("   line: \(line.prefix(70))…") }
    } catch {
        print("   ✗ \(error)")
    }
case .failure(let error):
    print("   ✗ \(error)")
}

section("Downloads: 32 MiB to a file with a live progress bar, and one resumed after a dropped connection")
let downloads = FileManager.default.temporaryDirectory.appendingPathComponent("http-demo-\(UUID().uuidString)")
try? FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
let downloader = DemoTransport.makeTerminal()
var bigFile = HTTPRequest(url: api.apply(to: HTTPRequest(path: "/download/32M.bin")).url!)
let lastReport = Shared<HTTPProgress?>(nil)
bigFile.progressHandler = { progress in
    lastReport.withLock { $0 = progress }
    guard isTerminal else { return }  // into a file or a pipe, only the last report is printed
    print("\r   " + progressBar(progress), terminator: "")
    fflush(nil)  // the bar is redrawn in place with every report
}
let downloadStart = ContinuousClock.now
let bigDownload = await downloader.download(bigFile, to: downloads.appendingPathComponent("32M.bin"))
if let last = lastReport.withLock({ $0 }) { print((isTerminal ? "\r   " : "   ") + progressBar(last)) }
show(bigDownload) { response in
    "\(response.status), saved to \(response.fileURL?.lastPathComponent ?? "?") in \(milliseconds(ContinuousClock.now - downloadStart))"
}
if let downloadServer = environment["DOWNLOADS_URL"].flatMap(URL.init(string:)) {
    let attempts = Shared<[String]>([])
    let resuming =
        ModifyRequest { request in
            attempts.withLock { $0.append(request.headers["Range"] ?? "the whole file") }
            return request
        }
        --> downloader
    let cut = URL(string: "\(downloadServer.absoluteString)/file/4000000?drop=demo-\(UUID().uuidString)")!
    show(await resuming.download(HTTPRequest(url: cut), to: downloads.appendingPathComponent("resumed.bin"))) {
        "\($0.status) after asking for: \(attempts.value.joined(separator: ", then ")) (the first answer was cut off half-way)"
    }
}
try? FileManager.default.removeItem(at: downloads)

section("Deduplicate: five identical requests in flight, one sent; each caller gets its own result")
let deduplicate = Deduplicate(ignoringHeaderFields: ["X-Request-ID"])
let sharing =
    ApplyEnvironment(environment: httpbin)
    --> deduplicate
    --> PrintLoader { print("   \($0)") }
    --> DemoTransport.makeTerminal()
let shared = await withTaskGroup(of: HTTPResult.self, returning: [HTTPResult].self) { group in
    for index in 1...5 {
        group.addTask {
            var request = HTTPRequest(path: "/delay/0.5")
            request.headers["X-Request-ID"] = "demo-\(index)"
            return await sharing.load(request)
        }
    }
    var results: [HTTPResult] = []
    for await result in group { results.append(result) }
    return results
}
let requestID: (HTTPResult) -> String = { $0.response?.request.headers["X-Request-ID"] ?? "" }
for result in shared.sorted(by: { requestID($0) < requestID($1) }) {
    show(result) { "\($0.status) for the caller with X-Request-ID \($0.request.headers["X-Request-ID"] ?? "?")" }
}

section("CircuitBreaker: a failing origin is left alone until a trial shows it has recovered")
let breaker = CircuitBreaker(configuration: .init(minimumNumberOfRequests: 3, openDuration: .seconds(1)))
let guarded =
    ApplyEnvironment(environment: httpbin)
    --> breaker
    --> PrintLoader { print("   \($0)") }
    --> DemoTransport.makeTerminal()
let httpbinOrigin = Origin(scheme: httpbin.scheme, host: httpbin.host, port: httpbin.port)
for _ in 0..<3 { show(await guarded.load(HTTPRequest(path: "/status/503"))) }
print("   the circuit for \(httpbinOrigin) is \(breaker.state(for: httpbinOrigin))")
show(await guarded.load(HTTPRequest(path: "/get")))  // refused at once: no → line
try? await Task.sleep(for: .seconds(1))
show(await guarded.load(HTTPRequest(path: "/get"))) { "the trial: \($0.status)" }
print("   the circuit is \(breaker.state(for: httpbinOrigin)) again")

section("Record and replay: real traffic into a cassette, answered again without the server, exported as HAR")
let recordings = FileManager.default.temporaryDirectory.appendingPathComponent("http-demo-\(UUID().uuidString)")
try? FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
let cassetteFile = recordings.appendingPathComponent("httpbin.json")
let recorder = Recorder(file: cassetteFile)
let recording = ApplyEnvironment(environment: httpbin) --> recorder --> DemoTransport.makeTerminal()
show(chain: recording)
var session = [
    HTTPRequest(
        path: "/get", query: [URLQueryItem(name: "b", value: "2"), URLQueryItem(name: "a", value: "1")],
        headers: ["Authorization": "Bearer secret-token"]),
    HTTPRequest(method: .post, path: "/anything/people", body: JSONBody(NewPerson(name: "Zoë", languages: ["Swift"]))),
    HTTPRequest(path: "/status/503"),
]
for request in session { show(await recording.load(request)) { "recorded: \($0.status), \($0.body.count) bytes" } }
let recorded = (try? String(contentsOf: cassetteFile, encoding: .utf8)) ?? ""
print(
    "   \(recorder.cassette.entries.count) entries in \(cassetteFile.lastPathComponent); the token and the API key in it: "
        + "\(recorded.contains("secret-token") || recorded.contains("demo-key-123") ? "✗ present" : "<redacted>")")
do {
    let replaying = ApplyEnvironment(environment: httpbin) --> (try ReplayLoader(contentsOf: cassetteFile))
    // The same session, built afresh: the query in another order, a newer token.
    session[0] = HTTPRequest(
        path: "/get", query: [URLQueryItem(name: "a", value: "1"), URLQueryItem(name: "b", value: "2")],
        headers: ["Authorization": "Bearer a-newer-token"])
    for request in session { show(await replaying.load(request)) { "replayed: \($0.status), \($0.body.count) bytes" } }
    show(await replaying.load(HTTPRequest(path: "/never-recorded")))
    let har = recordings.appendingPathComponent("httpbin.har")
    try recorder.cassette.harData().write(to: har)
    print("   HAR 1.2 for a browser's developer tools (Network panel, import): \(har.lastPathComponent)")
} catch {
    print("   ✗ \(error)")
}
try? FileManager.default.removeItem(at: recordings)

section("Observing loads: an identity per load, metrics per attempt, a W3C traceparent")
let observed =
    Observe { event in
        if event.kind == .loadFinished, let metrics = event.metrics {
            print("   \(event.loadID) finished: \(metrics)")
        }
    }
    --> ApplyEnvironment(environment: httpbin)
    --> PropagateTraceContext()
    --> DemoTransport.makeTerminal()
for _ in 0..<2 {
    show(await observed.load(HTTPRequest(path: "/headers"))) { response in
        let headers = json(response)["headers"] as? [String: String] ?? [:]
        return "\(response.status); the server saw traceparent \(headers["Traceparent"] ?? "-")"
    }
}

section("Cache: fresh responses answered in process, stale ones revalidated with a 304, a logout empties it")
let cache = Cache()
let cached =
    ApplyEnvironment(environment: httpbin)
    --> cache
    --> PrintLoader { print("   \($0)") }
    --> DemoTransport.makeTerminal()
show(chain: cached)
let cacheStatus: (HTTPResponse) -> String = { "\($0.status), Cache-Status: \($0.headers["Cache-Status"] ?? "-")" }
for _ in 0..<2 { show(await cached.load(HTTPRequest(path: "/cache/60")), cacheStatus) }  // the second: no → line
// /etag/v1 is not fresh (no max-age): the second load asks with If-None-Match, and the 304 is answered with the 200.
for _ in 0..<2 { show(await cached.load(HTTPRequest(path: "/etag/v1")), cacheStatus) }
var offline = HTTPRequest(path: "/cache/60")
offline.cachePolicy = .onlyIfCached
show(await cached.load(offline)) { "onlyIfCached: \(cacheStatus($0))" }
await cached.reset()
show(await cached.load(offline)) { "after a reset, onlyIfCached: \(cacheStatus($0))" }

await DemoTransport.shutDown()
print("\nDone.")

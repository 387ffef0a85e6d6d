import Foundation
public import HTTP

/// Provides credentials to a ``BasicAuth`` loader: from storage, or by asking the user.
public protocol BasicAuthDelegate: AnyObject, Sendable {
    /// The credentials to use, or `nil` when there are none (the user cancelled, nothing is stored).
    ///
    /// ``BasicAuth`` asks once at a time: requests arriving while you answer wait for the same answer.
    func credentials(for loader: BasicAuth) async -> BasicCredentials?
}

/// A loader that adds `Authorization: Basic …` to requests that ask for Basic authentication.
///
/// ```swift
/// let basic = BasicAuth(origins: ["api.example.com"], delegate: loginController)
/// let chain = ApplyEnvironment(environment: .production) --> basic --> URLSessionLoader()
///
/// var request = HTTPRequest(path: "/reports")
/// request.authenticationMethod = .basic
/// ```
///
/// Which requests it authenticates, and with what:
/// - A request whose `HTTPRequest.authenticationMethod` is `nil` (the default) needs no
///   authentication and passes through untouched; so does one marked for another method.
/// - A request carrying its own `HTTPRequest.basicCredentials` is sent with those — over `https`, to
///   loopback, or to one of ``origins``; never over plain `http` elsewhere (RFC 7617 §4), where it fails with
///   `HTTPError.Code.cannotAuthenticate` instead.
/// - Otherwise the loader's credentials are used, and only for the ``origins`` they belong to — scheme, host
///   and port: a host name alone (`"api.example.com"`) means `https` on port 443. A request for another origin
///   fails with `HTTPError.Code.cannotAuthenticate` rather than carry them there. To send them over plain
///   `http`, list the `http` origin itself (`"http://127.0.0.1:8080"`).
/// - A redirect that `FollowRedirects` follows reaches the loader as a request of its own
///   (`HTTPRequest.redirects`), and gets credentials for its own origin: the loader's where they belong, none
///   elsewhere — and never the request's own `basicCredentials`, which are for the origin the caller asked for.
///
/// Credentials that cannot be sent — a user-id containing `:`, a control character (RFC 7617 §2, see
/// ``BasicCredentials/invalidityReason``) — fail the request before anything is sent: with
/// `HTTPError.Code.invalidRequest` when the request carried them, `HTTPError.Code.cannotAuthenticate` when the
/// loader or its delegate did.
///
/// Without credentials, the loader asks its ``delegate`` — once: every request arriving meanwhile waits for
/// that one answer. No delegate, or no answer, fails them all with `HTTPError.Code.cannotAuthenticate`.
/// A waiting request whose task is cancelled completes with `HTTPError.Code.cancelled` at once.
///
/// A `401` for a request sent with the loader's current credentials means they are wrong: the loader
/// forgets them, asks the delegate again, and replays the request once with the new ones. A `401` for a
/// request sent with credentials that have since been replaced is replayed once with the current ones,
/// without asking. Either way a request is replayed at most once, so wrong credentials cannot loop.
///
/// A reset fails waiting requests with `HTTPError.Code.resetInProgress` at once, refuses to authenticate (or
/// replay) requests while it runs, and forgets the credentials once the chain is quiet.
///
/// When the loader gives up after a `401` — no delegate, no answer, a reset — the error carries that response,
/// with its `WWW-Authenticate`.
// Safety: configuration is immutable; credentials, waiters and the delegate live in `state`, behind a lock.
public final class BasicAuth: HTTPLoader, @unchecked Sendable {
    private enum Answer: Sendable {
        case credentials(BasicCredentials, version: Int)
        case failed(HTTPError.Code, String)
    }

    private struct WeakDelegate {
        weak var value: (any BasicAuthDelegate)?
    }

    private struct State {
        var credentials: BasicCredentials?
        var version = 0
        var isAsking = false
        var generation = 0
        /// Requests waiting for the delegate; a woken one takes its answer here, under the lock.
        var waiters = Waiters<Answer>()
        var delegate = WeakDelegate()
    }

    /// The origins the loader's credentials belong to.
    public let origins: Set<Origin>
    private let scope: CredentialOrigins
    private let state = Locked(State())
    /// The requests sent on with credentials, counted with this loader's loads in flight, so a reset waits for them
    /// (and their 401s) before it forgets the credentials, also when this loader heads the chain.
    private var inFlight: InFlightLoads { participation.inFlight }

    /// - Parameters:
    ///   - origins: Where the loader's credentials may be sent: origins such as `"https://api.example.com:8443"`
    ///     or `"http://127.0.0.1:8080"`, or host names, which mean `https` on port 443.
    ///   - credentials: Credentials to start with, if already known.
    ///   - delegate: Asked for credentials when there are none. Held weakly.
    public init(origins: Set<Origin>, credentials: BasicCredentials? = nil, delegate: (any BasicAuthDelegate)? = nil) {
        self.origins = origins
        self.scope = CredentialOrigins(origins, holder: "BasicAuth's credentials")
        super.init()
        state.withLock { state in
            state.credentials = credentials
            state.delegate.value = delegate
        }
    }

    /// Creates a loader whose credentials belong to `hosts`: each a host name, which means `https` on port 443,
    /// or an origin such as `"http://127.0.0.1:8080"`.
    public convenience init(
        hosts: Set<String>, credentials: BasicCredentials? = nil, delegate: (any BasicAuthDelegate)? = nil
    ) {
        self.init(origins: CredentialOrigins.origins(fromHosts: hosts), credentials: credentials, delegate: delegate)
    }

    /// The hosts of ``origins``.
    public var hosts: Set<String> { Set(origins.map(\.host)) }

    /// The origins credentials are sent to.
    public override var configurationDescription: String {
        "origins: " + origins.map(\.description).sorted().joined(separator: ", ")
    }

    /// Asked for credentials when the loader has none. Held weakly.
    public var delegate: (any BasicAuthDelegate)? {
        get { state.withLock { $0.delegate.value } }
        set { state.withLock { $0.delegate.value = newValue } }
    }

    /// How many requests are waiting for the delegate's credentials now: a gauge for metrics, as
    /// `Throttle.waitingCount` is for its queue.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        if let own = request.basicCredentials {
            // A redirect elsewhere goes on without the caller's credentials: they were for the caller's origin.
            if request.isRedirectedToAnotherOrigin { return await loadNext(request) }
            return await send(request, withItsOwn: own)
        }
        guard request.isForAuthenticatingLoader(self) else { return await loadNext(request) }
        guard scope.contains(request) else {
            if request.isRedirectedToAnotherOrigin { return await loadNext(request) }
            return .failure(scope.refusal(of: request))
        }
        inFlight.begin()
        defer { inFlight.end() }

        var staleVersion: Int?
        var refused: HTTPResponse?
        while true {
            let (credentials, version): (BasicCredentials, Int)
            switch await currentCredentials(replacingVersion: staleVersion) {
            case .credentials(let current, let currentVersion): (credentials, version) = (current, currentVersion)
            case .failed(let code, let message):
                // After a 401, the error keeps it: its WWW-Authenticate says what the server wanted.
                return .failure(HTTPError(code, request: request, message: message, response: refused))
            }
            if let reason = credentials.invalidityReason {
                return .failure(
                    HTTPError(.cannotAuthenticate, request: request, message: "BasicAuth's credentials: \(reason)"))
            }
            let result = await loadNext(authorized(request, with: credentials))
            guard case .success(let response) = result, response.status == .unauthorized, refused == nil else {
                return result
            }
            guard request.body.isReplayable else {
                return .failure(
                    HTTPError(
                        .bodyNotReplayable, request: request,
                        message: "the server answered 401, and the request's body (\(type(of: request.body))) can be "
                            + "sent only once, so it cannot be replayed with other credentials",
                        response: response))
            }
            response.discardBody()
            refused = response
            staleVersion = version
        }
    }

    /// Sends a request with the credentials it carries: checked, and never over plain `http` to a server that is
    /// neither loopback nor one of ``origins``.
    private func send(_ request: HTTPRequest, withItsOwn credentials: BasicCredentials) async -> HTTPResult {
        if let reason = credentials.invalidityReason {
            return .failure(
                HTTPError(.invalidRequest, request: request, message: "the request's Basic credentials: \(reason)"))
        }
        if let origin = request.origin, !origin.isSecure, !origin.isLoopback, !scope.contains(request) {
            return .failure(
                HTTPError(
                    .cannotAuthenticate,
                    request: request,
                    message: "BasicAuth does not send credentials over plain http to \(origin) (RFC 7617 §4); use "
                        + "https, or list the origin in BasicAuth's origins to allow it"
                )
            )
        }
        return await loadNext(authorized(request, with: credentials))
    }

    private func authorized(_ request: HTTPRequest, with credentials: BasicCredentials) -> HTTPRequest {
        var copy = request
        copy.headers["Authorization"] = credentials.authorizationHeaderValue
        return copy
    }

    /// The current credentials, asking the delegate when there are none. When `staleVersion` is still the
    /// current version, those credentials were refused by the server: they are forgotten first.
    private func currentCredentials(replacingVersion staleVersion: Int?) async -> Answer {
        if Task.isCancelled { return .failed(.cancelled, "cancelled while waiting for credentials") }
        let id = state.withLock { $0.waiters.nextID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let decision = state.withLock { state -> (answered: Bool, (any BasicAuthDelegate)?, Int)? in
                    if isResetting {
                        state.waiters.answerUnparked(
                            id, with: .failed(.resetInProgress, "BasicAuth is resetting; the request was not sent"))
                        return (true, nil, 0)
                    }
                    if let staleVersion, staleVersion == state.version { state.credentials = nil }
                    if let credentials = state.credentials {
                        state.waiters.answerUnparked(id, with: .credentials(credentials, version: state.version))
                        return (true, nil, 0)
                    }
                    if Task.isCancelled {
                        state.waiters.answerUnparked(
                            id, with: .failed(.cancelled, "cancelled while waiting for credentials"))
                        return (true, nil, 0)
                    }
                    state.waiters.park(id, continuation)
                    guard !state.isAsking else { return nil }
                    state.isAsking = true
                    return (false, state.delegate.value, state.generation)
                }
                guard let (answered, delegate, generation) = decision else { return }
                if answered {
                    continuation.resume()
                    return
                }
                guard let delegate else {
                    finishAsking(
                        with: nil, generation: generation, reason: "BasicAuth has no delegate to ask for credentials")
                    return
                }
                Task {
                    let credentials = await delegate.credentials(for: self)
                    self.finishAsking(
                        with: credentials, generation: generation, reason: "the delegate provided no credentials")
                }
            }
        } onCancel: {
            let waiter = state.withLock {
                $0.waiters.answer(id, with: .failed(.cancelled, "cancelled while waiting for credentials"))
            }
            waiter?.resume()
        }
        guard let answer = state.withLock({ $0.waiters.takeAnswer(id) }) else {
            preconditionFailure("BasicAuth: waiter \(id) was resumed without an answer")
        }
        return answer
    }

    private func finishAsking(with credentials: BasicCredentials?, generation: Int, reason: String) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.isAsking, state.generation == generation else { return [] }
            state.isAsking = false
            guard let credentials else { return state.waiters.answerAll(with: .failed(.cannotAuthenticate, reason)) }
            if let invalidity = credentials.invalidityReason {
                // Not kept: the next request asks again.
                return state.waiters.answerAll(
                    with: .failed(.cannotAuthenticate, "the delegate's credentials cannot be sent: \(invalidity)"))
            }
            state.credentials = credentials
            state.version += 1
            return state.waiters.answerAll(with: .credentials(credentials, version: state.version))
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Fails the requests waiting for credentials with `HTTPError.Code.resetInProgress`, and ignores an answer still
    /// on its way.
    public override func failHeldLoads(_ mode: ResetMode) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isAsking = false
            state.generation += 1
            return state.waiters.answerAll(
                with: .failed(.resetInProgress, "the credentials were reset while this request waited"))
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Forgets the credentials.
    public override func forgetState() async {
        state.withLock { state in
            state.credentials = nil
            state.version += 1
        }
    }
}

extension BasicAuth: NativelyAuthenticating {
    var nativeAuthenticationMethod: AuthenticationMethod { .basic }
}

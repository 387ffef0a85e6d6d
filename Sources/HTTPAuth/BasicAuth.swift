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
///   loopback, or to one of ``CredentialLoader/origins``; never over plain `http` elsewhere (RFC 7617 §4), where it fails with
///   `HTTPError.Code.cannotAuthenticate` instead.
/// - Otherwise the loader's credentials are used, and only for the ``CredentialLoader/origins`` they belong to — scheme, host
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
/// `BasicAuth` is a ``CredentialLoader`` whose scheme is ``BasicAuthScheme``: waiting, replaying and resetting work as
/// they do for every credential scheme. Unlike most schemes it sets no ``CredentialLoader/refusalLimit``: each refused
/// password is answered by the user.
///
/// When the loader gives up after a `401` — no delegate, no answer, a reset — the error carries that response,
/// with its `WWW-Authenticate`.
// Safety: the scheme keeps its delegate behind a lock; everything else is the base class's.
public final class BasicAuth: CredentialLoader<BasicAuthScheme>, @unchecked Sendable {
    /// - Parameters:
    ///   - origins: Where the loader's credentials may be sent: origins such as `"https://api.example.com:8443"`
    ///     or `"http://127.0.0.1:8080"`, or hosts with or without a port (`"api.example.com"`,
    ///     `"localhost:8443"`), which mean `https`.
    ///   - credentials: Credentials to start with, if already known.
    ///   - delegate: Asked for credentials when there are none. Held weakly.
    public init(origins: Set<Origin>, credentials: BasicCredentials? = nil, delegate: (any BasicAuthDelegate)? = nil) {
        super.init(
            scheme: BasicAuthScheme(delegate: delegate), method: .basic, origins: origins, credential: credentials,
            refusalLimit: nil)
    }

    /// Creates a loader whose credentials belong to `hosts`, read as ``init(origins:credentials:delegate:)`` reads
    /// origins: the same loader, for code that lists host names. Configuration speaks of origins everywhere now; a
    /// host name is an origin (`https`, its default port).
    @available(*, deprecated, renamed: "init(origins:credentials:delegate:)")
    public convenience init(
        hosts: Set<String>, credentials: BasicCredentials? = nil, delegate: (any BasicAuthDelegate)? = nil
    ) {
        self.init(origins: CredentialOrigins.origins(fromHosts: hosts), credentials: credentials, delegate: delegate)
    }

    /// The hosts of ``CredentialLoader/origins``.
    @available(*, deprecated, message: "use origins, which keeps each origin's scheme and port")
    public var hosts: Set<String> { Set(origins.map(\.host)) }

    /// The origins credentials are sent to.
    public override var configurationDescription: String {
        "origins: " + origins.map(\.description).sorted().joined(separator: ", ")
    }

    /// Asked for credentials when the loader has none. Held weakly.
    public var delegate: (any BasicAuthDelegate)? {
        get { scheme.delegate }
        set { scheme.delegate = newValue }
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        guard let own = request.basicCredentials else { return await loadWithCredential(request) }
        // A redirect elsewhere goes on without the caller's credentials: they were for the caller's origin.
        if request.isRedirectedToAnotherOrigin { return await loadNext(request) }
        return await send(request, withItsOwn: own)
    }

    /// Sends a request with the credentials it carries: checked, and never over plain `http` to a server that is
    /// neither loopback nor one of the origins.
    nonisolated(nonsending) private func send(
        _ request: HTTPRequest, withItsOwn credentials: BasicCredentials
    ) async -> HTTPResult {
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
        var authorized = request
        authorized.headers["Authorization"] = credentials.authorizationHeaderValue
        return await loadNext(authorized)
    }
}

/// HTTP Basic authentication (RFC 7617) as a ``CredentialScheme``: ``BasicAuth``'s. Credentials come from the
/// loader's ``BasicAuthDelegate``, which is asked again when the server refuses them.
// Safety: the delegate is behind a lock.
public final class BasicAuthScheme: CredentialScheme, @unchecked Sendable {
    private struct WeakDelegate {
        weak var value: (any BasicAuthDelegate)?
    }

    private let weakDelegate: Locked<WeakDelegate>

    init(delegate: (any BasicAuthDelegate)?) {
        weakDelegate = Locked(WeakDelegate(value: delegate))
    }

    var delegate: (any BasicAuthDelegate)? {
        get { weakDelegate.withLock { $0.value } }
        set { weakDelegate.withLock { $0.value = newValue } }
    }

    public var credentialName: String { "BasicAuth's credentials" }

    /// The delegate's credentials; fails without a delegate, without an answer, or with credentials that cannot be
    /// sent (which are not kept: the next request asks again).
    public func obtainCredential(_ context: CredentialContext) async throws -> BasicCredentials {
        guard let delegate, let loader = context.loader as? BasicAuth else {
            throw CredentialFailure("BasicAuth has no delegate to ask for credentials")
        }
        guard let credentials = await delegate.credentials(for: loader) else {
            throw CredentialFailure("the delegate provided no credentials")
        }
        return try Self.checked(credentials)
    }

    /// The delegate's new credentials, after the server refused the current ones. When there are none to try —
    /// no delegate, or a delegate with no answer — the failure says first that the server refused the credentials
    /// BasicAuth was given: that is what happened; the missing delegate is only why nothing else was tried.
    public func refreshCredential(
        _ credentials: BasicCredentials, _ context: CredentialContext
    ) async throws
        -> BasicCredentials
    {
        guard case .refused(let response) = context.trigger else { return try await obtainCredential(context) }
        let refusal = "the server refused BasicAuth's credentials (HTTP \(response.status.rawValue))"
        guard let delegate, let loader = context.loader as? BasicAuth else {
            throw CredentialFailure("\(refusal), and no delegate is set to ask for others")
        }
        guard let replacement = await delegate.credentials(for: loader) else {
            throw CredentialFailure("\(refusal), and the delegate provided no others")
        }
        return try Self.checked(replacement)
    }

    /// `credentials`, or a failure when they cannot be sent (RFC 7617 §2).
    private static func checked(_ credentials: BasicCredentials) throws -> BasicCredentials {
        if let invalidity = credentials.invalidityReason {
            throw CredentialFailure("the delegate's credentials cannot be sent: \(invalidity)")
        }
        return credentials
    }

    /// Sets `Authorization: Basic …`; fails for credentials that cannot be sent (RFC 7617 §2).
    public func authenticate(_ request: inout HTTPRequest, with credentials: BasicCredentials) throws {
        if let reason = credentials.invalidityReason { throw CredentialFailure("BasicAuth's credentials: \(reason)") }
        request.headers["Authorization"] = credentials.authorizationHeaderValue
    }
}

public import Foundation
public import HTTP

/// A way of authenticating requests — a password, an API key fetched from an endpoint, a request signature — that a
/// ``CredentialLoader`` runs.
///
/// The scheme says what its credential is, how to get one, how to put it on a request and when it is no longer good;
/// the loader does the rest, the same for every scheme: one flow at a time however many requests need a credential,
/// requests waiting for it (and cancelled at once with their task), a `401` for the current credential answered with
/// one refresh and one replay, a `401` for a replaced credential replayed with the current one, credentials sent only
/// to their origins, a guard against a server that refuses every fresh credential, and the chain's reset protocol.
///
/// ```swift
/// struct APIKeyScheme: CredentialScheme {
///     let keyEndpoint: URL
///
///     var credentialName: String { "the API key" }
///
///     func obtainCredential(_ context: CredentialContext) async throws -> String {
///         let response = try await context.send(HTTPRequest(method: .post, url: keyEndpoint)).get()
///         return try JSONDecoder().decode(KeyResponse.self, from: response.body).key
///     }
///
///     func authenticate(_ request: inout HTTPRequest, with key: String) {
///         request.headers["X-API-Key"] = key
///     }
/// }
///
/// let apiKey = CredentialLoader(scheme: APIKeyScheme(keyEndpoint: keys), method: .apiKey, origins: ["api.example.com"])
/// ```
///
/// Every member but ``obtainCredential(_:)`` and ``authenticate(_:with:)`` has a default. The loader never calls two
/// of the scheme's flows (``obtainCredential(_:)``, ``refreshCredential(_:_:)``, ``forgetCredential(_:_:)``) at once,
/// and calls ``authenticate(_:with:)`` for every request it sends — a replay after a `401` included, and every request
/// that passes it again (a retry, a redirect hop, when `Retry` and `FollowRedirects` are above it in the chain) — so a
/// scheme that signs requests signs each one afresh.
public protocol CredentialScheme: Sendable {
    /// What the scheme authenticates with: a password, a key, tokens.
    associatedtype Credential: Sendable

    /// The credential as messages name it: `"the API key"`, `"BasicAuth's credentials"`. Never the credential itself.
    var credentialName: String { get }

    /// A credential, when the loader has none: read from storage, asked of the user, fetched from an endpoint.
    ///
    /// Requests that need a credential wait for this one call. Throwing fails them with
    /// `HTTPError.Code.cannotAuthenticate`, the error as the `HTTPError`'s underlying error (or, for a
    /// ``CredentialFailure``, its message as the error's message); the next request calls it again. The calling task is cancelled when a reset interrupts the flow; the loader stops waiting at once either
    /// way and ignores what a flow it interrupted returns.
    func obtainCredential(_ context: CredentialContext) async throws -> Credential

    /// A replacement for `credential`, which is due (``needsRefresh(_:at:)``, ``CredentialLoader/setNeedsRefresh()``)
    /// or which the server refused (`context.trigger`). By default, ``obtainCredential(_:)``.
    ///
    /// Throwing fails the waiting requests as ``obtainCredential(_:)`` does. The credential is kept — a refused one is
    /// never sent again — and the next request tries again, unless the failure is a ``CredentialFailure`` that
    /// ``CredentialFailure/forgetsCredential``.
    func refreshCredential(_ credential: Credential, _ context: CredentialContext) async throws -> Credential

    /// Whether `credential` must be replaced before it is used at `now` (it expires soon). By default, never.
    ///
    /// Called on every request, under the loader's lock: answer from the credential alone, quickly.
    func needsRefresh(_ credential: Credential, at now: Date) -> Bool

    /// Authenticates `request` with `credential`: sets a header, adds a query item, signs the request.
    ///
    /// Throwing fails the request with `HTTPError.Code.cannotAuthenticate` before anything is sent.
    func authenticate(_ request: inout HTTPRequest, with credential: Credential) throws

    /// Whether `response` says the server refused the credential `request` carried. By default, a `401`.
    func isRefusal(_ response: HTTPResponse, of request: HTTPRequest) -> Bool

    /// Forgets `credential` at a reset, once every load the loader sent has completed: revokes it at the server,
    /// deletes stored copies. By default, nothing. The loader forgets its own copy either way.
    ///
    /// Requests sent through `context` are part of the reset: the loaders below, which refuse everything else while
    /// it runs, let them through.
    func forgetCredential(_ credential: Credential?, _ context: CredentialContext) async
}

extension CredentialScheme {
    public func refreshCredential(_ credential: Credential, _ context: CredentialContext) async throws -> Credential {
        try await obtainCredential(context)
    }

    public func needsRefresh(_ credential: Credential, at now: Date) -> Bool { false }

    public func isRefusal(_ response: HTTPResponse, of request: HTTPRequest) -> Bool {
        response.status == .unauthorized
    }

    public func forgetCredential(_ credential: Credential?, _ context: CredentialContext) async {}
}

/// What a ``CredentialScheme``'s flow is given: why it runs, the time, the loader, and a way to send requests of its
/// own (to a key endpoint, a token endpoint) down the chain.
public struct CredentialContext: Sendable {
    /// Why the loader runs a flow.
    @frozen
    public enum Trigger: Sendable {
        /// A request needs a credential and the loader has none.
        case missing
        /// The credential is due: ``CredentialScheme/needsRefresh(_:at:)`` said so, or
        /// ``CredentialLoader/setNeedsRefresh()`` was called.
        case due
        /// The server refused the current credential with this response.
        case refused(HTTPResponse)
        /// A reset: the loader forgets the credential.
        case reset
    }

    /// Why the flow runs.
    public let trigger: Trigger
    /// The time the flow started, from the loader's clock.
    public let now: Date
    /// The loader running the flow: the one whose delegate to ask.
    public let loader: HTTPLoader
    private let sender: @Sendable (HTTPRequest) async -> HTTPResult

    package init(
        trigger: Trigger, now: Date, loader: HTTPLoader, sender: @escaping @Sendable (HTTPRequest) async -> HTTPResult
    ) {
        self.trigger = trigger
        self.now = now
        self.loader = loader
        self.sender = sender
    }

    /// Sends `request` down the chain from the loader, unauthenticated (its `authenticationMethod` is cleared) and
    /// past `Throttle`'s queue, which may hold the very requests waiting for this flow. It does not pass the loader
    /// again, so it cannot start a flow of its own. During ``CredentialScheme/forgetCredential(_:_:)`` it is part of
    /// the reset: the loaders below let it through.
    public func send(_ request: HTTPRequest) async -> HTTPResult {
        await sender(request)
    }
}

/// A failure a ``CredentialScheme`` throws to say in its own words why there is no credential: the requests waiting for
/// it fail with ``message`` as their `HTTPError`'s message, and ``underlyingError`` as its underlying error.
///
/// ```swift
/// guard let key = keychain.apiKey else { throw CredentialFailure("no API key is stored; sign in first") }
/// ```
///
/// Any other error a scheme throws is kept as the `HTTPError`'s underlying error, for callers to inspect, under a
/// message of the loader's. A failure that ``forgetsCredential`` also drops the current credential — the server
/// said it can never be refreshed (OAuth's `invalid_grant`) — so the next request obtains a new one rather than
/// refresh it again.
public struct CredentialFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for the requests' errors. Never a secret.
    public let message: String
    /// The error behind the failure, for callers to inspect; it takes no part in equality.
    public let underlyingError: (any Error & Sendable)?
    /// Whether the loader forgets its current credential (it obtains a new one next), rather than keep it for the
    /// next refresh.
    public let forgetsCredential: Bool

    /// - Parameters:
    ///   - message: What went wrong; never a secret.
    ///   - underlyingError: The error behind it, kept as the `HTTPError`'s underlying error.
    ///   - forgetsCredential: Whether the current credential is dead for good, so that the loader forgets it.
    public init(_ message: String, underlyingError: (any Error & Sendable)? = nil, forgetsCredential: Bool = false) {
        self.message = message
        self.underlyingError = underlyingError
        self.forgetsCredential = forgetsCredential
    }

    public var description: String { message }

    public static func == (lhs: CredentialFailure, rhs: CredentialFailure) -> Bool {
        lhs.message == rhs.message && lhs.forgetsCredential == rhs.forgetsCredential
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(message)
        hasher.combine(forgetsCredential)
    }
}

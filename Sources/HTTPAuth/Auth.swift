public import HTTP
import Synchronization

/// A loader that routes each request to the authentication loader for its
/// `HTTPRequest.authenticationMethod`.
///
/// ```swift
/// let auth = Auth(loaders: [
///     .basic: BasicAuth(origins: ["legacy.example.com"], delegate: basicLogin),
///     .oauth: oauthLoader,
/// ])
/// let chain = ApplyEnvironment(environment: .production) --> auth --> Retry() --> URLSessionLoader()
/// ```
///
/// - A request with no method (`nil`, the default) passes through unauthenticated.
/// - A request with a registered method goes through that method's loader, which authenticates it: an
///   ``OAuth`` or ``BasicAuth`` loader registered under a method of your own (`.partnerAPI: partnerOAuth`)
///   authenticates that method's requests as it does `.oauth` or `.basic` ones.
/// - A request with a method nobody registered fails with `HTTPError.Code.cannotAuthenticate`.
///
/// ## One downstream, reset once
///
/// Every sub-loader sends its requests to the same place: a private guard in front of `Auth`'s own next
/// loader (setting ``nextLoader`` on `Auth` sets it behind that guard). The guard passes loads through and
/// refuses them with `HTTPError.Code.resetInProgress` during a reset, except a sub-loader's own reset traffic
/// (an OAuth logout's token revocation). `Auth` lists its sub-loaders and the guard as its ``nextLoaders``, so a
/// reset reaches each sub-loader once (logging out of each) and the rest of the chain once.
// Safety: `loaders`, `routes` and `downstream` are immutable; the downstream guard's reset counter is atomic.
public final class Auth: HTTPLoader, @unchecked Sendable {
    /// The loader for each method.
    public let loaders: [AuthenticationMethod: HTTPLoader]
    /// `loaders` as an array: for the few methods a chain has, comparing names beats hashing them. `isMarked`
    /// when the loader authenticates another method on its own, so that a routed request must say it was routed.
    private let routes: [(method: AuthenticationMethod, loader: HTTPLoader, isMarked: Bool)]
    private let downstream = SharedDownstream()

    /// - Parameter loaders: The loader for each authentication method. Their next loader is set here.
    public init(loaders: [AuthenticationMethod: HTTPLoader]) {
        self.loaders = loaders
        self.routes = loaders.sorted { $0.key.rawValue < $1.key.rawValue }.map { method, loader in
            (method, loader, (loader as? any NativelyAuthenticating)?.nativeAuthenticationMethod != method)
        }
        super.init()
        for loader in loaders.values { loader.nextLoader = downstream }
    }

    /// The loader after `Auth`, which every sub-loader's requests reach through `Auth`'s private guard.
    public override var nextLoader: HTTPLoader? {
        get { downstream.nextLoader }
        set { downstream.nextLoader = newValue }
    }

    /// The sub-loaders, then the guard in front of the rest of the chain.
    public override var nextLoaders: [HTTPLoader] {
        routes.map(\.loader) + [downstream]
    }

    /// The authentication methods, in the order of the branches below `Auth` in the chain's description.
    public override var configurationDescription: String {
        "methods: " + (routes.isEmpty ? "none" : routes.map(\.method.rawValue).joined(separator: ", "))
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        guard let method = request.authenticationMethod else { return await send(request, to: downstream) }
        guard let route = routes.first(where: { $0.method == method }) else {
            let known = routes.map(\.method.rawValue).joined(separator: ", ")
            return .failure(
                HTTPError(
                    .cannotAuthenticate,
                    request: request,
                    message: "no loader handles the authentication method '\(method)' (Auth knows: \(known))"
                )
            )
        }
        // A loader's own method needs no mark: marking would copy the request.
        guard route.isMarked else { return await send(request, to: route.loader) }
        var routed = request
        routed.authenticatingLoader = ObjectIdentifier(route.loader)
        return await send(routed, to: route.loader)
    }
}

/// The link between ``Auth``'s sub-loaders and `Auth`'s next loader: forwards loads, and refuses them during a
/// reset in `Auth`'s name (a sub-loader's own reset traffic passes: logging out revokes tokens).
// Safety: no state of its own.
private final class SharedDownstream: HTTPLoader, @unchecked Sendable {
    override func load(_ request: HTTPRequest) async -> HTTPResult {
        if isResetting, !request.isPartOfReset {
            return .failure(
                HTTPError(.resetInProgress, request: request, message: "refused by Auth while the chain resets"))
        }
        return await loadNext(request)
    }
}

extension Auth: BranchingLoader {
    /// Each sub-loader, labelled with its method.
    package var describedBranches: [(label: String, loader: HTTPLoader)] {
        routes.map { ($0.method.rawValue, $0.loader) }
    }

    /// The private guard every sub-loader sends to: the chain's description goes on with `Auth`'s next loader.
    package var describedJunction: HTTPLoader { downstream }
}

/// A loader that authenticates the requests of one method without ``Auth`` (``OAuth`` `.oauth` ones, ``BasicAuth``
/// `.basic` ones): `Auth` marks only the requests it routes to it under another method.
protocol NativelyAuthenticating: HTTPLoader {
    /// The method whose requests the loader authenticates on its own.
    var nativeAuthenticationMethod: AuthenticationMethod { get }
}

/// The loader ``Auth`` routed a request to, so that a loader registered under a method of the app's own
/// authenticates that method's requests.
enum AuthenticatingLoader: HTTPRequestOption {
    static let defaultOptionValue: ObjectIdentifier? = nil
}

extension HTTPRequest {
    /// The sub-loader ``Auth`` routed this request to, if any.
    var authenticatingLoader: ObjectIdentifier? {
        get { self[option: AuthenticatingLoader.self] }
        set { self[option: AuthenticatingLoader.self] = newValue }
    }

    /// Whether `loader` should authenticate this request: it is a request of the loader's own method, or ``Auth``
    /// routed it to `loader` under another method.
    func isForAuthenticatingLoader(_ loader: some NativelyAuthenticating) -> Bool {
        authenticationMethod == loader.nativeAuthenticationMethod || authenticatingLoader == ObjectIdentifier(loader)
    }
}

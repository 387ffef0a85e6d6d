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
/// - A request with a registered method goes through that method's loader.
/// - A request with a method nobody registered fails with `HTTPError.Code.cannotAuthenticate`.
///
/// ## One downstream, reset once
///
/// Every sub-loader sends its requests to the same place: a private guard in front of `Auth`'s own next
/// loader (setting ``nextLoader`` on `Auth` sets it behind that guard). The guard passes loads through and
/// refuses them with `HTTPError.Code.resetInProgress` while `Auth` resets. The sub-loaders' resets
/// stop at the guard: ``reset()`` resets every sub-loader (logging out of each), waits for all of them, and
/// then resets the rest of the chain exactly once — where a chain in which every sub-loader forwarded its
/// reset would reset it once per sub-loader.
// Safety: `loaders`, `routes` and `downstream` are immutable; the downstream guard's reset counter is atomic.
public final class Auth: HTTPLoader, @unchecked Sendable {
    /// The loader for each method.
    public let loaders: [AuthenticationMethod: HTTPLoader]
    /// `loaders` as an array: for the few methods a chain has, comparing names beats hashing them.
    private let routes: [(method: AuthenticationMethod, loader: HTTPLoader)]
    private let downstream = SharedDownstream()

    /// - Parameter loaders: The loader for each authentication method. Their next loader is set here.
    public init(loaders: [AuthenticationMethod: HTTPLoader]) {
        self.loaders = loaders
        self.routes = loaders.map { ($0.key, $0.value) }
        super.init()
        for loader in loaders.values { loader.nextLoader = downstream }
    }

    /// The loader after `Auth`, which every sub-loader's requests reach through `Auth`'s private guard.
    public override var nextLoader: HTTPLoader? {
        get { downstream.nextLoader }
        set { downstream.nextLoader = newValue }
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        guard let method = request.authenticationMethod else { return await downstream.load(request) }
        guard let loader = routes.first(where: { $0.method == method })?.loader else {
            let known = loaders.keys.map(\.rawValue).sorted().joined(separator: ", ")
            return .failure(
                HTTPError(
                    .cannotAuthenticate,
                    request: request,
                    message: "no loader handles the authentication method '\(method)' (Auth knows: \(known))"
                )
            )
        }
        return await loader.load(request)
    }

    /// Resets every sub-loader, then the rest of the chain once.
    public override func reset() async {
        downstream.beginReset()
        await withTaskGroup(of: Void.self) { group in
            for loader in loaders.values { group.addTask { await loader.reset() } }
        }
        await downstream.nextLoader?.reset()
        downstream.endReset()
    }
}

/// The guard between ``Auth``'s sub-loaders and `Auth`'s next loader: forwards loads, refuses them while
/// `Auth` resets, and keeps the sub-loaders' resets from reaching further.
// Safety: the reset counter is atomic.
private final class SharedDownstream: HTTPLoader, @unchecked Sendable {
    /// Read on every load, written only by resets: an atomic counter rather than a lock.
    private let resetsInProgress = Atomic<Int>(0)

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        // A sub-loader's own requests pass: logging out may revoke tokens while `Auth` resets.
        if resetsInProgress.load(ordering: .acquiring) > 0, !request.isAuthorizationServerTraffic {
            return .failure(
                HTTPError(.resetInProgress, request: request, message: "refused by Auth while the chain resets")
            )
        }
        return await loadNext(request)
    }

    /// A sub-loader's reset ends here; ``Auth/reset()`` resets what follows, once.
    override func reset() async {}

    func beginReset() { resetsInProgress.add(1, ordering: .sequentiallyConsistent) }
    func endReset() { resetsInProgress.subtract(1, ordering: .sequentiallyConsistent) }
}

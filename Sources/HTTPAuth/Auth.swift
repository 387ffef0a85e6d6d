public import HTTP

/// A loader that routes each request to the authentication loader for its
/// `HTTPRequest.authenticationMethod`.
///
/// ```swift
/// let auth = Auth(loaders: [
///     .basic: BasicAuth(hosts: ["legacy.example.com"], delegate: basicLogin),
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
// Safety: `loaders` and `downstream` are immutable; the downstream guard keeps its state behind a lock.
public final class Auth: HTTPLoader, @unchecked Sendable {
    /// The loader for each method.
    public let loaders: [AuthenticationMethod: HTTPLoader]
    private let downstream = SharedDownstream()

    /// - Parameter loaders: The loader for each authentication method. Their next loader is set here.
    public init(loaders: [AuthenticationMethod: HTTPLoader]) {
        self.loaders = loaders
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
        guard let loader = loaders[method] else {
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
// Safety: the reset counter lives behind a lock.
private final class SharedDownstream: HTTPLoader, @unchecked Sendable {
    private let resetsInProgress = Locked(0)

    override func load(_ request: HTTPRequest) async -> HTTPResult {
        // A sub-loader's own requests pass: logging out may revoke tokens while `Auth` resets.
        if resetsInProgress.value > 0, !request.isAuthorizationServerTraffic {
            return .failure(
                HTTPError(.resetInProgress, request: request, message: "refused by Auth while the chain resets")
            )
        }
        return await super.load(request)
    }

    /// A sub-loader's reset ends here; ``Auth/reset()`` resets what follows, once.
    override func reset() async {}

    func beginReset() { resetsInProgress.withLock { $0 += 1 } }
    func endReset() { resetsInProgress.withLock { $0 -= 1 } }
}

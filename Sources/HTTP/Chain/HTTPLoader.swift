/// A link in a chain of loaders that together turn an ``HTTPRequest`` into an ``HTTPResult``.
///
/// Each loader does one thing — fill in the server environment, add credentials, retry, throttle — and
/// hands the request to its ``nextLoader``. The last loader in the chain (a *terminal* such as
/// ``URLSessionLoader`` or ``MockLoader``) produces the result:
///
/// ```
///  load(request) ──► ApplyEnvironment ──► ModifyRequest ──► ResetGuard ──► URLSessionLoader ──► network
///  HTTPResult    ◄──────────────────────────────────────────────────────────────────────────┘
/// ```
///
/// Loaders are linked with ``-->(_:_:)-(_,HTTPLoader)``, which returns the head of the chain:
///
/// ```swift
/// let chain = ApplyEnvironment(environment: .production) --> PrintLoader() --> URLSessionLoader()
/// let result = await chain.load(HTTPRequest(path: "/people/42"))
/// ```
///
/// ## The contract
///
/// - Every load completes exactly once, with a response or an ``HTTPError``. Any status, `404` included,
///   is a response.
/// - Cancellation is the caller's task cancellation. A loader that waits (for a slot, a delay,
///   credentials) stops waiting at once when the task is cancelled and returns ``HTTPError/Code/cancelled``.
/// - ``reset()`` propagates down the chain and returns once the chain has quiesced.
///
/// ## Writing a loader
///
/// Override only what you change; the default ``load(_:)`` forwards to the next loader, as a SwiftNIO
/// handler forwards to the next handler.
///
/// ```swift
/// final class UserAgent: HTTPLoader, @unchecked Sendable {  // Sendable: `value` is a `let`
///     let value: String
///     init(_ value: String) { self.value = value }
///
///     override func load(_ request: HTTPRequest) async -> HTTPResult {
///         var copy = request
///         if copy.headers["User-Agent"] == nil { copy.headers["User-Agent"] = value }
///         return await super.load(copy)
///     }
/// }
/// ```
///
/// Subclasses are shared between concurrent loads: keep configuration in `let` properties and any
/// mutable state behind one lock, and never `await` while holding it. `Synchronization.Mutex` is the
/// natural choice; note that on Linux (Swift 6.3.1) ThreadSanitizer cannot see `Mutex` and reports its
/// contended accesses as races, so if you test under ThreadSanitizer there, use a pthread-based lock such
/// as `NSLock` (this package uses its own pthread-based lock for that reason).
// Safety: an open class cannot be checked for Sendable. The base class's only mutable state, the next
// loader, is behind a lock; subclasses are required (above) to keep theirs behind a lock as well.
open class HTTPLoader: @unchecked Sendable {
    private let next = Locked<HTTPLoader?>(nil)

    public init() {}

    /// The loader this one hands requests to.
    ///
    /// It may be set once: setting it again to a different loader is a programming error and traps,
    /// because silently re-linking a chain that is already in use would route requests unpredictably.
    /// Composite loaders override it to route through an inner loader; call `super` to store the value.
    open var nextLoader: HTTPLoader? {
        get { next.withLock { $0 } }
        set {
            next.withLock { current in
                precondition(
                    current == nil || current === newValue,
                    "\(type(of: self)).nextLoader is already set to \(type(of: current!)); a loader's next loader can be set only once"
                )
                current = newValue
            }
        }
    }

    /// Loads a request and returns its result.
    ///
    /// The default forwards to ``nextLoader``, or fails with ``HTTPError/Code/cannotConnect`` when there is
    /// none (the chain has no terminal loader).
    open func load(_ request: HTTPRequest) async -> HTTPResult {
        await loadNext(request)
    }

    /// Hands `request` to ``nextLoader``, as the default ``load(_:)`` does. The package's loaders call this
    /// rather than `super.load(_:)`: inlined, it saves an async call per loader on every request.
    @inlinable
    package final func loadNext(_ request: HTTPRequest) async -> HTTPResult {
        guard let nextLoader else { return .failure(endOfChain(request)) }
        return await nextLoader.load(request)
    }

    /// The failure of a loader with no next loader to send a request to.
    @usableFromInline
    package final func endOfChain(_ request: HTTPRequest) -> HTTPError {
        HTTPError(
            .cannotConnect,
            request: request,
            message: "\(type(of: self)) is the end of the chain and has no next loader to send the request to"
        )
    }

    /// Resets the chain from this loader down, and returns when it has quiesced.
    ///
    /// What reset means is up to each loader (forget credentials, drop queued requests); the default
    /// forwards to ``nextLoader``. Place a ``ResetGuard`` at the head of a chain so that loads arriving
    /// during a reset are refused rather than caught half-way.
    open func reset() async {
        await nextLoader?.reset()
    }
}

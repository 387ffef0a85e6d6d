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
/// - ``reset()`` resets the whole chain below and returns once it has quiesced; once it has begun, no request
///   leaves the chain that had not already left it (see ``reset(mode:)``).
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

    /// Hands `request` to ``nextLoader``, as the default ``load(_:)`` does — unless the task is cancelled: the
    /// first loader that sees a cancelled load stops it, rather than carry it to the terminal. The package's
    /// loaders call this rather than `super.load(_:)`: inlined, it saves an async call per loader on every
    /// request.
    @inlinable
    package final func loadNext(_ request: HTTPRequest) async -> HTTPResult {
        guard let nextLoader else { return .failure(endOfChain(request)) }
        if Task.isCancelled { return .failure(cancelledBeforeSending(request)) }
        return await nextLoader.load(request)
    }

    /// The failure of a load whose task was cancelled before this loader passed it on.
    @usableFromInline
    package final func cancelledBeforeSending(_ request: HTTPRequest) -> HTTPError {
        HTTPError(.cancelled, request: request, message: "cancelled before \(type(of: self)) passed it on")
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

    // MARK: - Description

    /// This loader's configuration, for the ``description`` of its chain: a short phrase of `label: value` pairs,
    /// such as `maximumNumberOfRequests: 6`; empty (the default) for a loader with nothing to configure.
    ///
    /// Override it to show what a reader of `print(chain)` needs to know — never a secret: name the header fields
    /// an environment adds, not their values. The line is passed through ``Redaction/standard`` all the same.
    open var configurationDescription: String { "" }

    // MARK: - Reset

    /// The loaders this one hands requests to, for ``reset(mode:)``: its ``nextLoader`` by default. A composite
    /// loader that routes through inner loaders lists them, so that the reset reaches every loader once.
    open var nextLoaders: [HTTPLoader] {
        nextLoader.map { [$0] } ?? []
    }

    /// Resets the chain from this loader down, draining the loads in flight: ``reset(mode:)`` with
    /// ``ResetMode/drain``.
    ///
    /// Override it to forget what a loader keeps (credentials, a cache, counters): the reset calls it once on
    /// every loader of the chain, top to bottom, after every load has completed and before the chain accepts
    /// loads again; call `super`, which then does nothing. Called from outside a reset, the default runs the
    /// whole protocol.
    open func reset() async {
        if isTakingPartInReset { return }
        await reset(mode: .drain)
    }

    /// Resets the chain from this loader down, and returns once it has quiesced.
    ///
    /// The reset is a protocol in four phases, each run on every loader of the chain (``nextLoaders``, each
    /// loader once) before the next phase starts:
    ///
    /// 1. ``beginReset(_:)``, top to bottom, without waiting on anything: each loader refuses new loads with
    ///    ``HTTPError/Code/resetInProgress`` and fails the requests it holds waiting (in a queue, for a retry
    ///    delay, for credentials) with the same code; with ``ResetMode/cancel``, terminals also cancel the loads
    ///    they are sending, which complete with ``HTTPError/Code/cancelled``.
    /// 2. ``waitUntilIdle()``: each loader waits until the loads it sent on have completed.
    /// 3. ``reset()``: each loader forgets its state — `OAuth` logs out, `BasicAuth` forgets its credentials.
    ///    Requests a loader sends as part of its own reset (a token revocation) are let through.
    /// 4. ``endReset()``, bottom to top: each loader accepts loads again.
    ///
    /// So once a reset has begun, no request leaves the chain that had not left it already, whatever the order
    /// of the loaders: every request waiting anywhere fails at once, and every loader refuses new work until the
    /// chain is quiet and clean.
    ///
    /// - Parameter mode: What happens to the loads already sent on: they finish (``ResetMode/drain``, the
    ///   default of ``reset()``) or are cancelled at once (``ResetMode/cancel``).
    public final func reset(mode: ResetMode) async {
        if isTakingPartInReset { return }
        let loaders = loadersForReset()
        let members = ResetProtocol.members.union(loaders.map(ObjectIdentifier.init))
        await ResetProtocol.$members.withValue(members) {
            for loader in loaders { loader.beginReset(mode) }
            for loader in loaders { await loader.waitUntilIdle() }
            for loader in loaders { await loader.reset() }
            for loader in loaders.reversed() { loader.endReset() }
        }
    }

    /// Phase 1 of a reset: stop accepting loads and fail the requests waiting here with
    /// ``HTTPError/Code/resetInProgress``; with ``ResetMode/cancel``, a terminal also cancels what it is sending.
    /// It must not wait for anything. Resets may overlap, so count them: a loader accepts loads again once each
    /// reset that began has ended (``endReset()``). The default does nothing.
    open func beginReset(_ mode: ResetMode) {}

    /// Phase 2 of a reset: return once the loads this loader sent on have completed. The default returns at once.
    open func waitUntilIdle() async {}

    /// Phase 4 of a reset: accept loads again (once every reset that began here has ended). The default does
    /// nothing.
    open func endReset() {}

    /// Whether a reset running in the current task is resetting this loader: then ``reset()`` is the call of its
    /// phase 3, not a request to start one.
    public final var isTakingPartInReset: Bool {
        ResetProtocol.members.contains(ObjectIdentifier(self))
    }

    /// This loader and every loader it reaches, each once, each before the loaders it sends to.
    private func loadersForReset() -> [HTTPLoader] {
        var visited: Set<ObjectIdentifier> = []
        var postOrder: [HTTPLoader] = []
        func visit(_ loader: HTTPLoader) {
            guard visited.insert(ObjectIdentifier(loader)).inserted else { return }
            for next in loader.nextLoaders { visit(next) }
            postOrder.append(loader)
        }
        visit(self)
        return postOrder.reversed()
    }
}

/// What a reset does with the loads already sent on.
public enum ResetMode: Sendable, Hashable {
    /// They finish, and their callers get their results; the reset returns once they have. A request that was
    /// sent cannot be unsent, and cancelling it would leave its outcome unknown (did the payment go through?),
    /// so this is the default.
    case drain
    /// They are cancelled at once and complete with ``HTTPError/Code/cancelled``; the reset returns once they
    /// have. For a logout the user asked for: nothing from the old session reaches the app afterwards.
    case cancel
}

/// The loaders being reset by the reset protocol running in the current task.
enum ResetProtocol {
    @TaskLocal static var members: Set<ObjectIdentifier> = []
}

/// Marks requests a loader sends as part of its own reset (a logout's token revocation), which the loaders
/// below let through while they refuse everything else.
enum PartOfReset: HTTPRequestOption {
    static let defaultOptionValue = false
}

extension HTTPRequest {
    /// Whether a loader sends this request as part of its reset (a logout's token revocation); loaders that refuse
    /// loads during a reset let it through. A terminal loader of your own reads it in ``HTTPLoader/load(_:)``: while
    /// a reset runs it refuses every load with ``HTTPError/Code/resetInProgress`` except these.
    public package(set) var isPartOfReset: Bool {
        get { self[option: PartOfReset.self] }
        set { self[option: PartOfReset.self] = newValue }
    }
}

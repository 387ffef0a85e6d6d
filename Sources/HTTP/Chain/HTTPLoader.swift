import Synchronization

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
/// The base class keeps the reset protocol for every loader (``reset(mode:)``): while a reset runs it refuses what a
/// loader would pass on, and it counts what a loader has passed on so the reset waits for it. A loader with state
/// to forget overrides ``forgetState()``; one that holds requests fails them in ``failHeldLoads(_:)``. Nothing else.
///
/// Subclasses are shared between concurrent loads: keep configuration in `let` properties and any
/// mutable state behind one lock, and never `await` while holding it. `Synchronization.Mutex` is the
/// natural choice; note that on Linux (Swift 6.3.1) ThreadSanitizer cannot see `Mutex` and reports its
/// contended accesses as races, so if you test under ThreadSanitizer there, use a pthread-based lock such
/// as `NSLock` (this package uses its own pthread-based lock for that reason).
// Safety: an open class cannot be checked for Sendable. The base class's only mutable state, the next
// loader, is an atomic reference set once; subclasses are required (above) to keep theirs behind a lock.
open class HTTPLoader: @unchecked Sendable {
    /// Set once and read on every hop: an atomic reference, which a read does not lock. It holds a retain of the
    /// loader, released in `deinit`.
    private let next = Atomic<Unmanaged<HTTPLoader>?>(nil)
    /// This loader's part in resets: whether one runs, the loads it has passed on, the resets entered here.
    @usableFromInline package let participation = ResetParticipation()

    public init() {}

    /// The loader this one hands requests to.
    ///
    /// It may be set once: setting it again to a different loader is a programming error and traps,
    /// because silently re-linking a chain that is already in use would route requests unpredictably.
    /// Composite loaders override it to route through an inner loader; call `super` to store the value.
    open var nextLoader: HTTPLoader? {
        get { next.load(ordering: .acquiring)?.takeUnretainedValue() }
        set {
            var current = next.load(ordering: .acquiring)?.takeUnretainedValue()
            if current == nil, let newValue {
                let retained = Unmanaged.passRetained(newValue)
                let (stored, original) = next.compareExchange(
                    expected: nil, desired: retained, ordering: .acquiringAndReleasing)
                if stored { return }
                retained.release()
                current = original?.takeUnretainedValue()
            }
            precondition(
                current === newValue,
                "\(type(of: self)).nextLoader is already set to \(type(of: current!)); a loader's next loader can be set only once"
            )
        }
    }

    deinit {
        next.load(ordering: .acquiring)?.release()
    }

    /// Loads a request and returns its result.
    ///
    /// The default forwards to ``nextLoader``, or fails with ``HTTPError/Code/cannotConnect`` when there is
    /// none (the chain has no terminal loader).
    ///
    /// It runs where its caller runs (`nonisolated(nonsending)`, and so does every override): a chain called from
    /// the main actor does its synchronous work there, and one loader hands a request to the next without a hop to
    /// another executor. Keep what a loader does between two `await`s short; put anything slow — decoding a large
    /// body, hashing, file I/O — in a `@concurrent` function or on a queue of its own, as the cache's disk store
    /// does with its files.
    nonisolated(nonsending) open func load(_ request: HTTPRequest) async -> HTTPResult {
        await loadNext(request)
    }

    /// Hands `request` to ``nextLoader``, as the default ``load(_:)`` does — unless the task is cancelled: the
    /// first loader that sees a cancelled load stops it, rather than carry it to the terminal.
    ///
    /// A loader's ``load(_:)`` may call it instead of `super.load(_:)`: it does the same, keeping the reset
    /// protocol, and, inlined, saves an async call per loader on every request.
    @inlinable
    nonisolated(nonsending) public final func loadNext(_ request: HTTPRequest) async -> HTTPResult {
        guard let nextLoader else { return .failure(endOfChain(request)) }
        return await send(request, to: nextLoader)
    }

    /// Hands `request` to `next` — the next loader, or an inner loader of a composite — keeping the reset protocol
    /// for both: while a reset runs at this loader, a request that is not part of it is refused here with
    /// ``HTTPError/Code/resetInProgress``; and the load is counted at `next` until it returns, so that a reset waits
    /// for it there (a terminal's sends, and what a loader does after its own next load returns, included).
    @inlinable
    @inline(__always)  // into `loadNext`, so a hop is one async call and one task-allocator frame, not two
    nonisolated(nonsending) package final func send(_ request: HTTPRequest, to next: HTTPLoader) async -> HTTPResult {
        if Task.isCancelled { return .failure(cancelledBeforeSending(request)) }
        // Counted before the check, both sequentially consistent: a reset that has begun here has begun below too,
        // so it either finds this load counted when it waits at `next`, or this load sees the reset and is refused.
        next.participation.inFlight.begin()
        if participation.isResetting, !request.isPartOfReset {
            next.participation.inFlight.end()
            return .failure(resetRefusal(of: request))
        }
        // Not in a `defer`, which is outlined and retains the counter around the count.
        let result = await next.load(request)
        next.participation.inFlight.end()
        return result
    }

    /// Runs `load` — one load of this loader — counted in flight at this loader, so that a draining reset waits for
    /// all of it, not only for the requests it hands on.
    ///
    /// A reset counts a load at a loader when the loader above hands it over, so the loads of a chain's head are not
    /// counted. That is harmless for a loader that hands each load on once; one that sends again after an answer —
    /// the next hop of a redirect, another attempt, a replay with a new credential — wraps its ``load(_:)`` in this,
    /// so that at the head of a chain too a reset cannot end between an answer and the loader's decision about it,
    /// and the next request cannot go out after the reset has returned:
    ///
    /// ```swift
    /// override func load(_ request: HTTPRequest) async -> HTTPResult {
    ///     await withLoadCounted {
    ///         let first = await loadNext(request)
    ///         guard first.response?.status == .serviceUnavailable else { return first }
    ///         return await loadNext(request)  // refused if a reset has begun meanwhile
    ///     }
    /// }
    /// ```
    ///
    /// A load the loader holds waiting must still be failed in ``failHeldLoads(_:)``: the reset waits for it.
    @inlinable
    nonisolated(nonsending) public final func withLoadCounted(
        _ load: nonisolated(nonsending) () async -> HTTPResult
    ) async -> HTTPResult {
        participation.inFlight.begin()
        let result = await load()
        participation.inFlight.end()
        return result
    }

    /// Hands `request` to ``nextLoader`` without counting it there: for a loader's own requests that a reset
    /// abandons rather than waits for (an authorization flow the reset interrupted, whose late answer is ignored).
    /// It is refused during a reset like any other unless it is part of it.
    nonisolated(nonsending) package final func loadNextUncounted(_ request: HTTPRequest) async -> HTTPResult {
        guard let nextLoader else { return .failure(endOfChain(request)) }
        if Task.isCancelled { return .failure(cancelledBeforeSending(request)) }
        if participation.isResetting, !request.isPartOfReset { return .failure(resetRefusal(of: request)) }
        return await nextLoader.load(request)
    }

    /// The failure of a load whose task was cancelled before this loader passed it on.
    @usableFromInline
    @inline(never)  // rarely taken: one copy, not one in each async piece of every loader that forwards
    package final func cancelledBeforeSending(_ request: HTTPRequest) -> HTTPError {
        HTTPError(.cancelled, request: request, message: "cancelled before \(type(of: self)) passed it on")
    }

    /// The failure of a loader with no next loader to send a request to.
    @usableFromInline
    @inline(never)  // rarely taken: one copy, not one in each async piece of every loader that forwards
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
    public final func reset() async {
        await reset(mode: .drain)
    }

    /// Resets the chain from this loader down, and returns once it has quiesced.
    ///
    /// The base class runs the reset as a protocol in four phases, each on every loader of the chain
    /// (``nextLoaders``, each loader once) before the next phase starts:
    ///
    /// 1. Top to bottom, without waiting on anything: each loader starts refusing the loads it would pass on with
    ///    ``HTTPError/Code/resetInProgress`` (``isResetting``), then fails what it holds waiting — in a queue, for a
    ///    retry delay, for credentials — with the same code (``failHeldLoads(_:)``); with ``ResetMode/cancel``,
    ///    terminals also cancel what they are sending, which completes with ``HTTPError/Code/cancelled``.
    /// 2. Top to bottom, each loader waits until the loads passed to it by the loader above have returned (the base
    ///    class counts them), and until whatever else it sends has ended (``waitUntilIdle()``).
    /// 3. Top to bottom, each loader forgets its state (``forgetState()``): `OAuth` logs out, `BasicAuth` forgets
    ///    its credentials, `Cache` empties. Requests a loader sends as part of its own reset (a token revocation,
    ///    ``HTTPRequest/isPartOfReset``) are let through.
    /// 4. Bottom to top, each loader accepts loads again (``resetDidEnd()``, then ``isResetting`` turns false).
    ///
    /// So once a reset has begun, no request leaves the chain that had not left it already, whatever the order
    /// of the loaders: every request waiting anywhere fails at once, and every loader refuses new work until the
    /// chain is quiet and clean. A loader that holds nothing overrides nothing to keep this promise.
    ///
    /// A reset called on a loader while one that was called on the same loader runs does not start another: it
    /// waits for the running one — after cancelling what is in flight, if it asks for ``ResetMode/cancel`` and
    /// the running one drains. Resets called on different loaders of a chain overlap, and a loader accepts loads
    /// again once each has ended. Called from a loader's own reset on a loader that the reset is resetting, it
    /// returns at once.
    ///
    /// - Parameter mode: What happens to the loads already sent on: they finish (``ResetMode/drain``, the
    ///   default of ``reset()``) or are cancelled at once (``ResetMode/cancel``).
    public final func reset(mode: ResetMode) async {
        if isTakingPartInReset { return }
        let loaders = loadersForReset()
        switch participation.enter(mode) {
        case .join(let escalate):
            if escalate { for loader in loaders { loader.failHeldLoads(.cancel) } }
            await participation.waitForRunningReset()
            return
        case .run:
            break
        }
        let members = ResetProtocol.members.union(loaders.map(ObjectIdentifier.init))
        await ResetProtocol.$members.withValue(members) {
            for loader in loaders { loader.beginResetPhase(mode) }
            for loader in loaders {
                await loader.participation.inFlight.waitUntilIdle()
                await loader.waitUntilIdle()
            }
            for loader in loaders { await loader.forgetState() }
            for loader in loaders.reversed() { loader.endResetPhase() }
        }
        participation.leave()
    }

    /// Phase 1 of a reset at this loader alone: it refuses loads from now on, and fails what it holds. Tests call it
    /// (with ``endResetPhase()``) to hold one loader in a reset.
    package final func beginResetPhase(_ mode: ResetMode) {
        participation.begin()
        failHeldLoads(mode)
    }

    /// Phase 4 of a reset at this loader alone: it accepts loads again once every reset that began here has ended.
    package final func endResetPhase() {
        resetDidEnd()
        participation.end()
    }

    /// Phase 1 of a reset: fail the loads this loader holds waiting — in a queue, for a delay, for credentials —
    /// with ``HTTPError/Code/resetInProgress`` (``resetRefusal(of:)``), and with ``ResetMode/cancel`` cancel what it
    /// is sending itself. It must not wait for anything. By the time it is called, ``isResetting`` is true: a load
    /// that parks under the same lock this method takes checks it there, so it either parks in time to be failed
    /// here or sees the reset and does not park. The default does nothing: a loader that holds nothing overrides
    /// nothing.
    open func failHeldLoads(_ mode: ResetMode) {}

    /// Phase 2 of a reset, after the loads passed to this loader have returned: return once whatever else it sends
    /// has ended — a terminal's transfers whose bodies outlive `load(_:)`, background work. The default returns at
    /// once.
    open func waitUntilIdle() async {}

    /// Phase 3 of a reset, once the chain is quiet: forget what this loader keeps — credentials, a cache, counters.
    /// Requests it sends meanwhile must be marked ``HTTPRequest/isPartOfReset`` (the loaders below refuse the rest).
    /// The default does nothing.
    open func forgetState() async {}

    /// Phase 4 of a reset, bottom to top, just before this loader accepts loads again: for a loader whose own state
    /// machine tracks resets. The default does nothing.
    open func resetDidEnd() {}

    /// Whether a reset is under way at this loader: from phase 1, before ``failHeldLoads(_:)`` is called, until the
    /// end of phase 4. While it is, the loader refuses the loads it would pass on that are not part of the reset;
    /// a loader that parks loads checks it under the lock it parks them with.
    public final var isResetting: Bool { participation.isResetting }

    /// The failure of a load this loader refuses because a reset is under way: ``HTTPError/Code/resetInProgress``,
    /// naming the loader.
    @inline(never)  // rarely taken: one copy, not one in each async piece of every loader that forwards
    public final func resetRefusal(of request: HTTPRequest) -> HTTPError {
        HTTPError(.resetInProgress, request: request, message: "refused by \(type(of: self)) while the chain resets")
    }

    /// Whether a reset running in the current task is resetting this loader.
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
@frozen
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

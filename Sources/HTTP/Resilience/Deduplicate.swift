/// A loader that lets identical safe requests in flight share one load downstream.
///
/// When a request arrives while an identical one is being loaded, it does not go downstream: it waits for the
/// load in flight and gets its result. A screen that asks three times for `/me` while the first answer is on its
/// way sends one request, not three.
///
/// ```swift
/// let chain =
///     ApplyEnvironment(environment: .production)
///     --> Deduplicate(ignoringHeaderFields: ["X-Request-ID"])
///     --> Retry()
///     --> URLSessionLoader()
/// ```
///
/// ## What is shared
///
/// Only requests whose method is one of ``methods`` (safe methods: `GET` and `HEAD` by default) and that have no
/// body, and only while a load is in flight: the result is not kept afterwards (that is a cache's job). Two
/// requests share a load when they are identical:
/// - the same method, and the same URL as sent — scheme, host, port, percent-encoded path and query, exactly as
///   written;
/// - the same header fields in the same order (names compared without case), `Authorization` included, so that
///   requests sent with different credentials never share an answer — except the fields named in
///   ``ignoredHeaderFields``, such as a trace identifier that differs on every request;
/// - the same options (a `Hashable` option's value compared by value, any other by identity), so that requests
///   with different timeouts, redirect policies or per-request credentials never share a load.
///
/// A request with ``HTTPRequest/deduplication`` set to ``DeduplicationOption/never`` goes downstream on its own.
///
/// ## Every caller gets its own result
///
/// The first request of a group goes downstream; the others get its result with their own request in it: a
/// response's ``HTTPResponse/request`` (and an error's ``HTTPError/request``) is the request as it was sent, with
/// the caller's ``HTTPRequest/id``, fragment and ignored header fields. Status, header fields and body are the
/// same for everyone.
///
/// ## Cancellation
///
/// The shared load runs in a task of its own. A caller whose task is cancelled leaves at once with
/// ``HTTPError/Code/cancelled``, and the others go on waiting; the load downstream is cancelled only when its last
/// caller has left. A request arriving after that starts a new load.
///
/// ## Where it goes in the chain
///
/// After ``ApplyEnvironment``, so that relative requests have their full URL, and after the loader that adds
/// credentials, so that `Authorization` is part of what makes requests identical; before `Retry`, so that the
/// callers share the retries too. Above ``Observe``, ``PrintLoader`` and ``PropagateTraceContext``: each stamps its
/// load's own identity (``LoadID``) on the request, and a load's identity is part of what makes requests different
/// — below them no two requests are identical and nothing is shared (sharing there would report one caller's
/// attempts under another caller's load).
///
/// ## Reset
///
/// A reset (``HTTPLoader/reset(mode:)``) refuses new requests with ``HTTPError/Code/resetInProgress`` until it
/// ends. Callers that joined a load in flight are in flight themselves: with ``ResetMode/drain`` they get its
/// result, with ``ResetMode/cancel`` the loaders below cancel it and every caller gets
/// ``HTTPError/Code/cancelled``.
// Safety: configuration is immutable; the loads in flight and their callers live in `state`, behind a lock.
public final class Deduplicate: HTTPLoader, @unchecked Sendable {
    /// The methods whose requests may share a load: safe methods only (RFC 9110 §9.2.1).
    public let methods: Set<HTTPMethod>
    /// Header fields that do not make requests different, such as a trace identifier.
    public let ignoredHeaderFields: [String]

    /// What a waiting caller is woken with.
    private enum Answer {
        /// The shared load's result, as the loader below returned it.
        case result(HTTPResult)
        case cancelled
    }

    /// One load in flight downstream and the callers waiting for it.
    private struct SharedLoad {
        let key: DeduplicationKey
        /// The waiting callers' identifiers (in ``State/waiters``).
        var callers: Set<UInt64>
        /// The task that runs the load; `nil` until its creator has stored it.
        var upstream: Task<Void, Never>?
    }

    private struct State {
        var waiters = Waiters<Answer>()
        var loads: [UInt64: SharedLoad] = [:]
        /// The load in flight for each key, which an identical request joins.
        var loadForKey: [DeduplicationKey: UInt64] = [:]
        var lastLoadID: UInt64 = 0
    }

    /// How a caller takes part.
    private enum Admission {
        /// It starts load `load`, and waits as caller `caller`.
        case starts(load: UInt64, caller: UInt64)
        /// It joins load `load` in flight, as caller `caller`.
        case joins(load: UInt64, caller: UInt64)
        /// A reset is in progress.
        case refused
    }

    private let state = Locked(State())

    /// Creates a loader that shares loads between identical requests.
    ///
    /// - Parameters:
    ///   - headerFields: Header fields that do not make requests different, compared without case: a trace or
    ///     request identifier, say. Everything else, `Authorization` included, does.
    ///   - methods: The methods whose requests may share a load; `GET` and `HEAD` by default. Methods that are not
    ///     safe (`POST`, `PUT`, `DELETE`, …) are left out: each of those requests must reach the server.
    public init(ignoringHeaderFields headerFields: [String] = [], methods: Set<HTTPMethod> = [.get, .head]) {
        self.ignoredHeaderFields = headerFields
        self.methods = methods.filter(\.isSafe)
    }

    /// The number of loads in flight downstream on behalf of shared requests now: a gauge for metrics (see
    /// "Gauges" in <doc:ObservingLoads>).
    public var inFlightCount: Int { state.withLock { $0.loads.count } }

    /// The number of callers waiting for a shared load now, the ones whose request went downstream included: with
    /// ``inFlightCount``, how much sharing saves.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        // This frame, and `wait`'s, are what a waiting caller holds, so they stay small: the key and the results
        // are made out of line.
        guard isShareable(request) else { return await loadAlone(request) }
        if Task.isCancelled { return .failure(cancelledBeforeSending(request)) }
        switch admit(request) {
        case .refused:
            return .failure(resetRefusal(of: request))
        case .starts(let load, let caller):
            start(load, request: request)
            return await wait(as: caller, of: load, request: request, isLeader: true)
        case .joins(let load, let caller):
            return await wait(as: caller, of: load, request: request, isLeader: false)
        }
    }

    /// Whether `request` may share a load: a method of ``methods``, no body, not opted out, not a reset's own.
    private func isShareable(_ request: HTTPRequest) -> Bool {
        methods.contains(request.method) && request.body.isEmpty && request.deduplication != .never
            && !request.isPartOfReset
    }

    /// Loads a request that shares nothing (during a reset, `loadNext` lets only a loader's own reset traffic
    /// through).
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    nonisolated(nonsending) private func loadAlone(_ request: HTTPRequest) async -> HTTPResult {
        await loadNext(request)
    }

    /// Joins the load in flight for an identical request, or registers a new one.
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    private func admit(_ request: HTTPRequest) -> Admission {
        let key = DeduplicationKey(request, ignoringHeaderFields: ignoredHeaderFields)
        return state.withLock { state -> Admission in
            if isResetting { return .refused }
            let caller = state.waiters.nextID()
            if let load = state.loadForKey[key] {
                state.loads[load]?.callers.insert(caller)
                return .joins(load: load, caller: caller)
            }
            state.lastLoadID += 1
            let load = state.lastLoadID
            state.loads[load] = SharedLoad(key: key, callers: [caller])
            state.loadForKey[key] = load
            return .starts(load: load, caller: caller)
        }
    }

    /// Starts load `load` in a task of its own, which outlives any one caller. The task starts on this thread and
    /// runs until it first suspends: a load answered at once (from a cache, say) costs no hop to another thread.
    private func start(_ load: UInt64, request: HTTPRequest) {
        let upstream: Task<Void, Never>
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            upstream = Task.immediate { await self.runUpstream(load, request: request) }
        } else {
            upstream = Task { await self.runUpstream(load, request: request) }
        }
        let isAbandoned = state.withLock { state -> Bool in
            guard state.loads[load] != nil else { return true }
            state.loads[load]?.upstream = upstream
            return false
        }
        // Every caller left before the task was stored (or it has finished already): nobody else can cancel it.
        if isAbandoned { upstream.cancel() }
    }

    /// Sends the shared request downstream and hands its result to every caller still waiting.
    private func runUpstream(_ load: UInt64, request: HTTPRequest) async {
        // A reset that began after the load was registered is seen by `loadNext`, which refuses the request: it has
        // not left yet, so it must not. One that begins later waits for it there.
        let result = await loadNext(request)
        let continuations = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard let shared = state.loads.removeValue(forKey: load) else { return [] }
            if state.loadForKey[shared.key] == load { state.loadForKey[shared.key] = nil }
            return shared.callers.sorted().compactMap { caller in
                if state.waiters.isWaiting(caller) { return state.waiters.answer(caller, with: .result(result)) }
                state.waiters.answerUnparked(caller, with: .result(result))
                return nil
            }
        }
        for continuation in continuations { continuation.resume() }
    }

    /// Waits, as caller `caller`, for the result of load `load`, or leaves it when the task is cancelled.
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    private func wait(as caller: UInt64, of load: UInt64, request: HTTPRequest, isLeader: Bool) async -> HTTPResult {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let isAnswered = state.withLock { state -> Bool in
                    if state.waiters.isAnswered(caller) { return true }
                    state.waiters.park(caller, continuation)
                    return false
                }
                if isAnswered { continuation.resume() }
            }
        } onCancel: {
            leave(load, caller: caller)
        }
        return answer(of: caller, for: request, isLeader: isLeader)
    }

    /// What caller `caller`, woken, returns: the shared result for its request, or its cancellation.
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    private func answer(of caller: UInt64, for request: HTTPRequest, isLeader: Bool) -> HTTPResult {
        switch state.withLock({ $0.waiters.takeAnswer(caller) }) {
        case .result(let result)?:
            return isLeader ? result : self.result(result, for: request)
        case .cancelled?, nil:
            return .failure(
                HTTPError(.cancelled, request: request, message: "cancelled while waiting for a load in Deduplicate"))
        }
    }

    /// Takes caller `caller` out of load `load`, answering it as cancelled; cancels the load when it was the last.
    private func leave(_ load: UInt64, caller: UInt64) {
        let (continuation, abandoned) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            guard state.loads[load]?.callers.remove(caller) != nil else { return (nil, nil) }  // answered already
            var abandoned: Task<Void, Never>?
            if let shared = state.loads[load], shared.callers.isEmpty {
                state.loads[load] = nil
                if state.loadForKey[shared.key] == load { state.loadForKey[shared.key] = nil }
                abandoned = shared.upstream
            }
            if state.waiters.isWaiting(caller) { return (state.waiters.answer(caller, with: .cancelled), abandoned) }
            state.waiters.answerUnparked(caller, with: .cancelled)
            return (nil, abandoned)
        }
        abandoned?.cancel()
        continuation?.resume()
    }

    /// The shared result as caller `request` gets it: with the request as sent, under the caller's identity.
    private func result(_ shared: HTTPResult, for request: HTTPRequest) -> HTTPResult {
        switch shared {
        case .success(var response):
            response.request = sharedCopy(of: response.request, for: request)
            return .success(response)
        case .failure(var error):
            error.request = sharedCopy(of: error.request, for: request)
            if var response = error.response {
                response.request = sharedCopy(of: response.request, for: request)
                error.response = response
            }
            return .failure(error)
        }
    }

    /// `sent`, a request a loader below sent for an identical one, as `caller` sees it: with the caller's
    /// identifier, fragment and values of the ignored header fields (every other field is equal already).
    private func sharedCopy(of sent: HTTPRequest, for caller: HTTPRequest) -> HTTPRequest {
        var copy = sent
        copy.adoptID(of: caller)
        if copy.fragment != caller.fragment { copy.fragment = caller.fragment }
        for name in ignoredHeaderFields where copy.headers.contains(name) || caller.headers.contains(name) {
            copy.headers.remove(name)
            for field in caller.headers where field.hasName(name) { copy.headers.add(field.value, for: field.name) }
        }
        return copy
    }
}

/// Whether ``Deduplicate`` may let a request share a load with identical ones; see ``HTTPRequest/deduplication``.
@frozen
public enum DeduplicationOption: HTTPRequestOption, Sendable, Hashable {
    /// Share a load with identical requests in flight, when the method and body allow it (the default).
    case automatic
    /// Always go downstream on its own: for a request whose every copy must reach the server, such as a poll
    /// whose answer changes from one moment to the next.
    case never

    public static let defaultOptionValue: DeduplicationOption = .automatic
}

extension HTTPRequest {
    /// Whether ``Deduplicate`` may let this request share a load with identical ones in flight;
    /// ``DeduplicationOption/automatic`` by default.
    public var deduplication: DeduplicationOption {
        get { self[option: DeduplicationOption.self] }
        set { self[option: DeduplicationOption.self] = newValue }
    }
}

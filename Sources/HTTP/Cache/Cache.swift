public import Foundation
import Synchronization

/// A loader that answers requests from stored responses, as a private HTTP cache does (RFC 9111).
///
/// ```swift
/// let cache = Cache(store: DiskCacheStore(directory: cachesDirectory.appending(path: "http")))
/// let chain = ApplyEnvironment(environment: .production) --> cache --> Auth(...) --> Retry() --> URLSessionLoader()
/// ```
///
/// A `GET` whose stored response is fresh is answered at once, without reaching the loaders below. A stale one is
/// revalidated: the cache asks the server with `If-None-Match` / `If-Modified-Since`, and on a `304 Not Modified`
/// it updates the stored header fields and answers with the stored response and its body. Other responses are
/// stored when RFC 9111 lets them be, and delivered.
///
/// - **Freshness**: `max-age`, then `Expires` − `Date`, then a heuristic — a tenth of the time since
///   `Last-Modified`, at most a day — for statuses that allow one; the age counts `Age`, the time in transit and
///   the time in the store. Time comes from the `now` closure, so tests move it.
/// - **Directives**: `no-store` (not stored, and an earlier entry is removed), `no-cache` (always revalidated;
///   `no-cache="field"`: served without revalidation only without the fields named), `must-revalidate` (never
///   served stale), `public` and `private` (this is a private cache: both are stored, qualified or not),
///   RFC 5861's `stale-while-revalidate` (served stale while a background request revalidates it) and
///   `stale-if-error` (served stale when revalidating fails with a transport error or a 500, 502, 503 or 504), and
///   `must-understand` (a response with a status whose caching rules the cache knows is stored despite its
///   `no-store`; one with another status never is). A request's own `no-cache` (or `Pragma: no-cache` without
///   `Cache-Control`), `no-store`, `max-age`, `max-stale`, `min-fresh` and `only-if-cached` apply, and
///   ``HTTPRequest/cachePolicy`` chooses per request (``CachePolicy``).
/// - **`Vary`**: the request's values of the fields the response varies on are stored with it; a request with
///   other values is a miss, and its response is stored beside it as another variant of the URL, up to eight, the
///   least recently stored dropped first (RFC 9111 §4.1). `Vary: *` is never stored.
/// - **`HEAD`** is sent on as it is, never answered from the store; a `200` whose `ETag`, `Last-Modified` and
///   `Content-Length` agree with those of the stored `GET` response updates its header fields, as a `304` does — a
///   new `max-age` freshens it — and one that disagrees removes it (RFC 9111 §4.3.5).
/// - **Ranges** (RFC 9111 §3.3–3.4): a request for one byte range is answered with a `206` from a fresh stored
///   response that holds it — a whole one, or a stored part; a `206` with a strong `ETag` is stored as a part, and
///   parts of one representation are combined, into a whole `200` once every byte is there. A part never answers
///   a request without `Range`.
/// - **Not stored**: the `Set-Cookie` fields of any response — delivered with the response the server sent, never
///   served from the store.
/// - **Unsafe methods**: a `POST`, `PUT`, `DELETE` (any method but `GET`, `HEAD`, `OPTIONS` and `TRACE`) answered
///   with a 2xx or 3xx removes the stored response for its URL, and for the `Location` and `Content-Location` it
///   names on the same origin (RFC 9111 §4.4).
/// - **Conditional requests of your own** (`If-None-Match`, …) are sent as they are, and their answer — a `304`
///   included — comes back to you; a `304` with the stored `ETag` freshens the entry. Requests with several ranges
///   or `If-Range` pass.
/// - **`Cache-Status`** (RFC 9211): every `GET` response gets a member saying what the cache did —
///   `Cache; hit; ttl=42`, `Cache; fwd=uri-miss; fwd-status=200; stored`, `Cache; fwd=stale; fwd-status=304`.
///   A response served from the store also gets its current `Age`.
///
/// ## Where it goes in the chain
///
/// After ``ApplyEnvironment`` — the key is the method and the full URL, so relative requests must have their host
/// by then (a request without one passes uncached) — and before authentication, `Retry` and `Throttle`:
///
/// ```
/// ApplyEnvironment --> Cache --> Auth --> Retry --> Throttle --> URLSessionLoader
/// ```
///
/// - A hit costs no token and no slot, and still works while the token is expired or the network is gone.
/// - Above `Auth`, the cache sees requests before credentials are added, so the key does not change when a token
///   is refreshed. It holds the responses of the one user the chain serves — that is what a *private* cache is
///   (RFC 9111 §1.1) — and a reset (a logout) empties it, so the next user never sees them.
/// - Above `Retry`, `stale-if-error` applies to the last attempt's failure, not the first.
///
/// A request that does carry `Authorization` when it reaches the cache (set by the caller, or with the cache
/// placed below `Auth`) is answered from the store like any other, but its response is stored only as RFC 9111
/// §3.5 allows a shared cache to — with `public`, `must-revalidate` or `s-maxage` — unless the
/// ``AuthorizationPolicy`` says otherwise. The request's credentials are never part of the key, nor stored.
///
/// ## Reset
///
/// During a reset the cache refuses loads with ``HTTPError/Code/resetInProgress`` (hits too), and waits for the
/// loads it sent — background revalidations included, which a ``ResetMode/cancel`` reset cancels. Then it removes
/// every stored response. A revalidation never starts during a reset.
// Safety: configuration is immutable (`let`); mutable state is in `state`, behind a lock, and in atomics.
public final class Cache: HTTPLoader, @unchecked Sendable {
    /// How the cache stores responses to requests that carry `Authorization` when they reach it.
    @frozen
    public enum AuthorizationPolicy: Sendable, Hashable {
        /// Store them only when the response says a shared cache may (RFC 9111 §3.5): `public`,
        /// `must-revalidate` or `s-maxage` (the default). Other responses to such requests pass unstored.
        case sharedCacheRules
        /// Store them like any other response, as RFC 9111 lets a private cache do. For a cache placed below
        /// `Auth`, in a client that serves one user and resets its chain on logout.
        case privateCacheRules
    }

    /// Where responses are kept.
    public let store: any CacheStore
    /// How responses to requests with `Authorization` are stored.
    public let authorizationPolicy: AuthorizationPolicy
    private let now: @Sendable () -> Date

    private struct Revalidation {
        var key: String
        var task: Task<Void, Never>?
        /// `cancellingResets` when it was reserved: a cancelling reset since then cancels it.
        var epoch: UInt64
    }

    private struct State {
        var cancellingResets: UInt64 = 0
        var revalidations: [UInt64: Revalidation] = [:]
        var revalidatingKeys: Set<String> = []
        var lastRevalidationID: UInt64 = 0
    }

    private let state = Locked(State())
    /// The loads sent on with their store updates, background revalidations included, counted as this loader's
    /// loads in flight: a reset waits for them before the store is emptied.
    private var inFlight: InFlightLoads { participation.inFlight }

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - store: Where responses are kept; a ``MemoryCacheStore`` of 10 MiB by default.
    ///   - authorizationPolicy: How responses to requests with `Authorization` are stored;
    ///     ``AuthorizationPolicy/sharedCacheRules`` by default.
    ///   - now: The current time, for ages and freshness; the system clock by default, a manual one in tests.
    public init(
        store: any CacheStore = MemoryCacheStore(),
        authorizationPolicy: AuthorizationPolicy = .sharedCacheRules,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.authorizationPolicy = authorizationPolicy
        self.now = now
    }

    public override var configurationDescription: String {
        "store: \(type(of: store)), authorizationPolicy: \(authorizationPolicy)"
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        // Refused during a reset even when the cache could answer: the answer may belong to the user being logged out.
        if isResetting, !request.isPartOfReset { return .failure(resetRefusal(of: request)) }
        var transaction = CacheTransaction(request: request, authorizationPolicy: authorizationPolicy)
        let started = now()
        switch transaction.start(now: started) {
        case .pass:
            return await loadNext(request)
        case .forward(let sent):
            return await send(sent, for: &transaction)
        case .lookUp(let key):
            let variants = await store.variants(for: key)
            switch transaction.lookedUp(variants, now: started) {
            case .respond(let response):
                return .success(response)
            case .respondAndRevalidate(let response, let entry, let sent):
                let revalidation = CacheTransaction(
                    revalidating: entry, key: key, for: request, authorizationPolicy: authorizationPolicy,
                    sentAt: started)
                revalidateInBackground(key: key, sending: sent, with: revalidation)
                return .success(response)
            case .forward(let sent):
                return await send(sent, for: &transaction)
            }
        }
    }

    /// Removes every stored response.
    public func removeAllResponses() async {
        await store.removeAll()
    }

    /// Removes the stored responses for `request`'s URL, every variant, if any.
    public func removeResponse(for request: HTTPRequest) async {
        guard let key = CacheKey.make(for: request) else { return }
        await store.removeEntry(for: key)
    }

    /// The number of background revalidations running; for tests.
    package var backgroundRevalidationCount: Int { state.withLock { $0.revalidations.count } }

    /// Sends `request` on, and the requests the transaction asks for after it, applying its store updates before
    /// the result is delivered (so a reset, which waits for these loads, empties the store after them).
    private func send(_ request: HTTPRequest, for transaction: inout CacheTransaction) async -> HTTPResult {
        inFlight.begin()
        defer { inFlight.end() }
        // Checked after `begin`: a reset that began before is seen here; one that begins after waits for this load.
        if isResetting, !request.isPartOfReset { return .failure(resetRefusal(of: request)) }
        return await exchange(request, for: &transaction)
    }

    /// Sends `request`, and each request `transaction` asks for after it, applying the store updates it asks for,
    /// until it delivers a result.
    @inline(never)  // one copy of the loop's async pieces for loads and background revalidations alike
    private func exchange(_ request: HTTPRequest, for transaction: inout CacheTransaction) async -> HTTPResult {
        var next = request
        while true {
            switch transaction.received(await loadNext(next), now: now()) {
            case .deliver(let result, let update):
                await apply(update)
                return result
            case .forward(let request, let update):
                await apply(update)
                next = request
            }
        }
    }

    private func apply(_ update: CacheTransaction.StoreUpdate) async {
        switch update {
        case .none: break
        case .store(let entry, let key, let request):
            // Read again just before writing: a variant another load stored since this one looked up is kept.
            let stored = await store.variants(for: key)
            await store.store(CacheEntry.variants(stored, adding: entry, for: request), for: key)
        case .remove(let keys): for key in keys { await store.removeEntry(for: key) }
        }
    }

    /// Starts revalidating `key`'s entry in a task of its own, unless one runs for it already or a reset does.
    /// The request goes in the Throttle's low-priority lane: nobody waits for it.
    private func revalidateInBackground(key: String, sending request: HTTPRequest, with transaction: CacheTransaction) {
        // Counted before the check (see `HTTPLoader.loadNext(_:)`): a reset either waits for the revalidation or
        // is seen here.
        inFlight.begin()
        let reservation = state.withLock { state -> (id: UInt64, epoch: UInt64)? in
            guard !isResetting, state.revalidatingKeys.insert(key).inserted else { return nil }
            state.lastRevalidationID += 1
            let id = state.lastRevalidationID
            state.revalidations[id] = Revalidation(key: key, task: nil, epoch: state.cancellingResets)
            return (id, state.cancellingResets)
        }
        guard let reservation else {
            inFlight.end()
            return
        }
        var background = request
        background.throttlePriority = .low
        let task = Task { [background] in
            var transaction = transaction
            _ = await self.exchange(background, for: &transaction)
            self.finishRevalidation(reservation.id)
        }
        let cancel = state.withLock { state -> Bool in
            guard state.revalidations[reservation.id] != nil else { return false }
            state.revalidations[reservation.id]?.task = task
            return state.cancellingResets != reservation.epoch
        }
        if cancel { task.cancel() }
    }

    private func finishRevalidation(_ id: UInt64) {
        state.withLock { state in
            if let revalidation = state.revalidations.removeValue(forKey: id) {
                state.revalidatingKeys.remove(revalidation.key)
            }
        }
        inFlight.end()
    }

    // MARK: - Reset

    /// With ``ResetMode/cancel``, cancels the background revalidations.
    public override func failHeldLoads(_ mode: ResetMode) {
        guard mode == .cancel else { return }
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            state.cancellingResets += 1
            return state.revalidations.values.compactMap(\.task)
        }
        for task in tasks { task.cancel() }
    }

    /// Removes every stored response: they belong to the user the chain served until now.
    public override func forgetState() async {
        await store.removeAll()
    }
}

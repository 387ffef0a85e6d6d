import Foundation

/// One load's way through a ``Cache``, as a value: events in (the load starts, the store answered, a result came
/// back), actions out (look up, answer, send, store). No I/O, no lock, no `await` — the ``Cache`` performs the
/// actions; tests drive the value directly, state by state.
///
/// ```
///            start ──► pass (not the cache's business)
///              │  └──► invalidating ──result──► deliver, and remove the target's entries (unsafe methods)
///              ▼
///          lookingUp ──lookedUp──► respond (fresh, or stale where allowed; 504 for only-if-cached)
///              │             └───► respond stale, revalidate in the background (stale-while-revalidate)
///              ▼
///   forwarding (miss, reload)    validating (a conditional request for a stale entry)
///              │                   │   ├─ 304 ─► deliver the stored 200, freshened
///              │                   │   └─ 304 for another response ─► forwarding, unconditionally
///              └───────────────────┴─ result ─► deliver, store or not (stale-if-error: the stale entry)
///
///   HEAD: start ──► lookingUpForHead ──lookedUp──► updatingFromHead ──result──► deliver; a 200 updates the
///                                                                              stored GET response, or removes it
///
///   Range (one byte range): start ──► lookingUp ──lookedUp──► respond 206 from a whole or partial entry that holds
///                                                   └───────► forwarding ──result──► deliver; a 206 is stored as a
///                                                                                    part, combined with others
/// ```
struct CacheTransaction {
    /// What to do once the load starts.
    enum StartAction {
        /// Not the cache's business (another safe method, several ranges or `If-Range`, a request without a usable
        /// URL, one that fails validation): send it on untouched and deliver what comes back.
        case pass
        /// Look up the entry under this key, then call ``lookedUp(_:now:)``.
        case lookUp(key: String)
        /// Send this request, then call ``received(_:now:)``.
        case forward(HTTPRequest)
    }

    /// What to do once the store has answered.
    enum LookupAction {
        /// Answer with this response; nothing is sent.
        case respond(HTTPResponse)
        /// Answer with this stale response, and revalidate `entry`, the variant it was made from, in the background:
        /// send this request with a transaction made by ``init(revalidating:key:for:authorizationPolicy:sentAt:)``,
        /// and apply to the store what its ``received(_:now:)`` says.
        case respondAndRevalidate(HTTPResponse, entry: CacheEntry, request: HTTPRequest)
        /// Send this request, then call ``received(_:now:)``.
        case forward(HTTPRequest)
    }

    /// What to do with a result.
    enum ResultAction {
        /// Apply the update, then deliver this result.
        case deliver(HTTPResult, StoreUpdate)
        /// Apply the update, then send this request and call ``received(_:now:)`` with its result.
        case forward(HTTPRequest, StoreUpdate)
    }

    /// A change to the store.
    enum StoreUpdate {
        case none
        /// Store the entry under the key as the variant `request` selects (``CacheEntry/variants(_:adding:for:)``),
        /// beside the other variants stored there.
        case store(CacheEntry, key: String, request: HTTPRequest)
        /// Remove every variant stored under the keys.
        case remove(keys: [String])
    }

    private struct Forwarding {
        var key: String
        var sentAt: Date
        /// The stored entry, when there is one: for `stale-if-error`, and for a caller's own conditional request.
        var stored: CacheEntry?
        /// Why the request was sent (RFC 9211's `fwd`).
        var reason: String
    }

    private struct Validation {
        var key: String
        var sentAt: Date
        var entry: CacheEntry
        var isBackground: Bool
    }

    private struct HeadUpdate {
        var key: String
        var sentAt: Date
        /// The stored `GET` response the `HEAD` could have selected (RFC 9111 §4.3.5), when there is one.
        var stored: CacheEntry?
    }

    private enum State {
        case initial
        case lookingUp(key: String)
        case lookingUpForHead(key: String)
        case updatingFromHead(HeadUpdate)
        case forwarding(Forwarding)
        case validating(Validation)
        case invalidating(key: String)
        case finished
    }

    /// The request the cache received.
    let request: HTTPRequest
    /// How responses to requests with `Authorization` are stored.
    let authorizationPolicy: Cache.AuthorizationPolicy
    /// The request's own `Cache-Control` directives (and `Pragma: no-cache`).
    private let requestControl: CacheControl
    private let requestFields: CacheRequestFields
    /// The one byte range the request asks for, when its `Range` is one the cache reads (RFC 9110 §14.2).
    private let requestedRange: ByteRange.Requested?
    private var state = State.initial

    init(request: HTTPRequest, authorizationPolicy: Cache.AuthorizationPolicy) {
        self.request = request
        self.authorizationPolicy = authorizationPolicy
        let fields = CacheRequestFields(request.headers)
        self.requestFields = fields
        var control = fields.hasCacheControl ? CacheControl(request.headers) : CacheControl()
        // RFC 9111 §5.4: Pragma: no-cache counts as no-cache when Cache-Control is absent.
        if !fields.hasCacheControl, fields.hasPragma,
            request.headers.values(for: "Pragma").contains(where: Self.listsNoCache)
        {
            control.noCache = true
        }
        self.requestControl = control
        self.requestedRange = fields.hasRange ? ByteRange.requested(by: request.headers.values(for: "Range")) : nil
    }

    /// A transaction revalidating `entry`, stored under `key`, in the background for `request` (the one that was
    /// answered stale), its conditional request sent at `sentAt`.
    init(
        revalidating entry: CacheEntry, key: String, for request: HTTPRequest,
        authorizationPolicy: Cache.AuthorizationPolicy, sentAt: Date
    ) {
        self.init(request: request, authorizationPolicy: authorizationPolicy)
        state = .validating(Validation(key: key, sentAt: sentAt, entry: entry, isBackground: true))
    }

    // MARK: Events

    /// The load starts at `now`.
    mutating func start(now: Date) -> StartAction {
        guard case .initial = state else { preconditionFailure("CacheTransaction started twice") }
        let method = request.method
        if method == .head { return startHead() }
        guard method == .get else {
            // RFC 9111 §4.4: a non-error response to an unsafe method (or one of unknown safety) invalidates.
            guard !method.isSafe, let key = CacheKey.make(for: request) else {
                state = .finished
                return .pass
            }
            state = .invalidating(key: key)
            return .forward(request)
        }
        // A streamed or downloaded body is never held in memory, so it is neither stored nor served from the store.
        // A request for a range the cache reads, without conditions of its own (If-Range), is looked up; other
        // requests with Range pass.
        let readsRange = !requestFields.hasRange || (requestedRange != nil && !requestFields.isConditional)
        guard request.responseDelivery == .buffered, readsRange, let key = CacheKey.make(for: request), isSendable
        else {
            state = .finished
            return .pass
        }
        if request.cachePolicy == .reload {
            state = .forwarding(Forwarding(key: key, sentAt: now, stored: nil, reason: "request"))
            return .forward(request)
        }
        state = .lookingUp(key: key)
        return .lookUp(key: key)
    }

    /// A `HEAD` is sent on as it is, after the stored `GET` response for its URL is looked up for
    /// ``headUpdate(after:_:now:)``; it passes when it could not update one (as for a `GET` that passes, or one whose
    /// response may not be stored).
    private mutating func startHead() -> StartAction {
        guard request.responseDelivery == .buffered, !requestFields.hasRange, request.cachePolicy != .doNotStore,
            !requestControl.noStore, !followsSharedCacheRules,
            let key = CacheKey.make(for: request), isSendable
        else {
            state = .finished
            return .pass
        }
        state = .lookingUpForHead(key: key)
        return .lookUp(key: key)
    }

    /// The store answered with the variants `found` at `now`.
    mutating func lookedUp(_ found: [CacheEntry], now: Date) -> LookupAction {
        if case .lookingUpForHead(let key) = state {
            let stored = CacheEntry.select(from: found, for: request)
            state = .updatingFromHead(HeadUpdate(key: key, sentAt: now, stored: stored))
            return .forward(request)
        }
        guard case .lookingUp(let key) = state else { preconditionFailure("CacheTransaction: lookedUp out of turn") }
        let onlyIfCached = request.cachePolicy == .onlyIfCached || requestControl.onlyIfCached
        if let requestedRange {
            return lookedUp(found, key: key, asking: requestedRange, onlyIfCached: onlyIfCached, now: now)
        }
        guard let entry = CacheEntry.select(from: found, for: request) else {
            if onlyIfCached {
                state = .finished
                return .respond(gatewayTimeout())
            }
            let reason = found.isEmpty ? "uri-miss" : "vary-miss"
            state = .forwarding(Forwarding(key: key, sentAt: now, stored: nil, reason: reason))
            return .forward(request)
        }
        let metadata = entry.metadata
        let age = metadata.currentAge(at: now, responseDate: entry.responseDate)
        let remaining = metadata.freshnessLifetime - age
        let ttl = CacheEntry.Metadata.signedSeconds(remaining)

        if onlyIfCached {
            state = .finished
            guard remaining > 0 || metadata.mayServeStale else { return .respond(gatewayTimeout()) }
            return .respond(entry.response(to: request, age: age, cacheStatus: "Cache; hit; ttl=\(ttl)"))
        }
        if requestFields.isConditional {
            // The caller's own condition: its answer (a 304 included) goes back to it as is.
            state = .forwarding(Forwarding(key: key, sentAt: now, stored: entry, reason: "request"))
            return .forward(request)
        }
        if !requestControl.noCache, !metadata.control.noCache,
            requestControl.maxAge.map({ age <= Double($0) }) ?? true
        {
            if remaining > 0, remaining >= Double(requestControl.minFresh ?? 0) {
                state = .finished
                return .respond(entry.response(to: request, age: age, cacheStatus: "Cache; hit; ttl=\(ttl)"))
            }
            if remaining <= 0, metadata.mayServeStale {
                if let maxStale = requestControl.maxStale, maxStale.allows(-remaining) {
                    state = .finished
                    return .respond(entry.response(to: request, age: age, cacheStatus: "Cache; hit; ttl=\(ttl)"))
                }
                if let window = metadata.control.staleWhileRevalidate, -remaining <= Double(window) {
                    state = .finished
                    let stale = entry.response(
                        to: request, age: age, cacheStatus: "Cache; hit; ttl=\(ttl); detail=stale-while-revalidate")
                    return .respondAndRevalidate(stale, entry: entry, request: conditionalRequest(for: entry))
                }
            }
        }
        guard metadata.hasValidator else {
            let reason = requestControl.noCache ? "request" : "stale"
            state = .forwarding(Forwarding(key: key, sentAt: now, stored: entry, reason: reason))
            return .forward(request)
        }
        state = .validating(Validation(key: key, sentAt: now, entry: entry, isBackground: false))
        return .forward(conditionalRequest(for: entry))
    }

    /// A request for one byte range: answered with a `206` from a whole or partial variant that holds the range and
    /// is fresh enough — as a whole request would be from a fresh one (stale ones are not served for ranges, but to
    /// `only-if-cached`) — else sent on as it is, and its `206` (or `200`) stored.
    private mutating func lookedUp(
        _ found: [CacheEntry], key: String, asking requested: ByteRange.Requested, onlyIfCached: Bool, now: Date
    ) -> LookupAction {
        if let (entry, range) = CacheEntry.select(from: found, for: request, asking: requested) {
            let metadata = entry.metadata
            let age = metadata.currentAge(at: now, responseDate: entry.responseDate)
            let remaining = metadata.freshnessLifetime - age
            let isFreshEnough =
                !requestControl.noCache && !metadata.control.noCache && remaining > 0
                && remaining >= Double(requestControl.minFresh ?? 0)
                && (requestControl.maxAge.map { age <= Double($0) } ?? true)
            if isFreshEnough || (onlyIfCached && metadata.mayServeStale) {
                state = .finished
                let ttl = CacheEntry.Metadata.signedSeconds(remaining)
                return .respond(
                    entry.partialResponse(to: request, range: range, age: age, cacheStatus: "Cache; hit; ttl=\(ttl)"))
            }
        }
        if onlyIfCached {
            state = .finished
            return .respond(gatewayTimeout())
        }
        let reason = found.isEmpty ? "uri-miss" : "miss"
        state = .forwarding(Forwarding(key: key, sentAt: now, stored: nil, reason: reason))
        return .forward(request)
    }

    /// The result of the request sent last came back at `now`.
    @inline(never)  // called in each async piece of `Cache`'s exchange loop: one copy, not one per piece
    mutating func received(_ result: HTTPResult, now: Date) -> ResultAction {
        switch state {
        case .invalidating(let key):
            state = .finished
            guard case .success(let response) = result, (200..<400).contains(response.status.rawValue) else {
                return .deliver(result, .none)
            }
            return .deliver(result, .remove(keys: [key] + CacheKey.locationKeys(of: response, for: request)))
        case .forwarding(let forwarding):
            state = .finished
            return forwarded(result, forwarding, now: now)
        case .validating(let validation):
            return validated(result, validation, now: now)
        case .updatingFromHead(let update):
            state = .finished
            return .deliver(result, headUpdate(after: result, update, now: now))
        case .initial, .lookingUp, .lookingUpForHead, .finished:
            preconditionFailure("CacheTransaction: a result out of turn")
        }
    }

    // MARK: Results

    private func forwarded(_ result: HTTPResult, _ forwarding: Forwarding, now: Date) -> ResultAction {
        if let stale = forwarding.stored, let served = staleIfError(stale, after: result, now: now) {
            return .deliver(.success(served), .none)
        }
        guard case .success(let response) = result else { return .deliver(result, .none) }
        if response.status == .notModified {
            // Only a caller's own conditional request expects a 304; it freshens the entry it names.
            var update = StoreUpdate.none
            if let stored = forwarding.stored, let tag = response.headers.values(for: "ETag").first,
                let storedTag = stored.metadata.entityTag, Self.weaklyMatch(tag, storedTag)
            {
                let freshened = stored.freshened(
                    with: response.headers, requestDate: forwarding.sentAt, responseDate: now)
                update =
                    freshened.metadata.forbidsStoring
                    ? .remove(keys: [forwarding.key])
                    : .store(storable(freshened), key: forwarding.key, request: request)
            }
            return .deliver(.success(Self.tagged(response, "Cache; fwd=\(forwarding.reason); fwd-status=304")), update)
        }
        return newResponse(
            response, key: forwarding.key, sentAt: forwarding.sentAt, reason: forwarding.reason, now: now)
    }

    private mutating func validated(_ result: HTTPResult, _ validation: Validation, now: Date) -> ResultAction {
        if !validation.isBackground, let served = staleIfError(validation.entry, after: result, now: now) {
            state = .finished
            return .deliver(.success(served), .none)
        }
        guard case .success(let response) = result else {
            state = .finished
            return .deliver(result, .none)
        }
        guard response.status == .notModified else {
            state = .finished
            if validation.isBackground, response.status.isServerError { return .deliver(result, .none) }
            return newResponse(response, key: validation.key, sentAt: validation.sentAt, reason: "stale", now: now)
        }
        guard Self.selects(response.headers, validation.entry) else {
            // A 304 for another response than the one stored (RFC 9111 §4.3.4): drop it, and ask again without
            // conditions.
            guard !validation.isBackground else {
                state = .finished
                return .deliver(result, .remove(keys: [validation.key]))
            }
            state = .forwarding(Forwarding(key: validation.key, sentAt: now, stored: nil, reason: "stale"))
            return .forward(request, .remove(keys: [validation.key]))
        }
        state = .finished
        let freshened = validation.entry.freshened(
            with: response.headers, requestDate: validation.sentAt, responseDate: now)
        let keeps = !freshened.metadata.forbidsStoring
        let age = freshened.metadata.currentAge(at: now, responseDate: now)
        var served = freshened.response(
            to: response.request, age: age,
            cacheStatus: "Cache; fwd=stale; fwd-status=304" + (keeps ? "; stored" : ""), isValidated: true)
        // Cookies the server set with its 304 are not stored, but they are its answer to this request: a cookie
        // jar above the cache must see them.
        for field in response.headers where field.hasName("Set-Cookie") || field.hasName("Set-Cookie2") {
            served.headers.add(field.value, for: field.name)
        }
        return .deliver(
            .success(served),
            keeps
                ? .store(storable(freshened), key: validation.key, request: request) : .remove(keys: [validation.key]))
    }

    /// What a `HEAD`'s result does to the stored `GET` response it could have selected (RFC 9111 §4.3.5): a `200`
    /// whose validators (`ETag`, `Last-Modified`) and `Content-Length`, those it has, agree with the stored ones
    /// updates its header fields as a `304` would (§3.2) — a new `max-age` freshens it —; a `200` that disagrees
    /// removes it. Other results leave it as it is.
    private func headUpdate(after result: HTTPResult, _ update: HeadUpdate, now: Date) -> StoreUpdate {
        guard let stored = update.stored, case .success(let response) = result, response.status == .ok else {
            return .none
        }
        let fields = response.headers
        func agrees(_ name: String, with storedValue: String?) -> Bool {
            guard let received = fields.values(for: name).first else { return true }
            guard let storedValue else { return false }
            return received.trimmingCharacters(in: .whitespaces) == storedValue.trimmingCharacters(in: .whitespaces)
        }
        let storedLength = stored.headers.values(for: "Content-Length").first ?? String(stored.body.count)
        guard agrees("ETag", with: stored.metadata.entityTag),
            agrees("Last-Modified", with: stored.metadata.lastModified),
            agrees("Content-Length", with: storedLength)
        else { return .remove(keys: [update.key]) }
        let updated = stored.freshened(with: fields, requestDate: update.sentAt, responseDate: now)
        return updated.metadata.forbidsStoring
            ? .remove(keys: [update.key]) : .store(storable(updated), key: update.key, request: request)
    }

    /// A response the server sent in full: delivered, and stored when it may be.
    private func newResponse(
        _ response: HTTPResponse, key: String, sentAt: Date, reason: String, now: Date
    ) -> ResultAction {
        let entry = CacheEntry(storing: response, for: request, requestDate: sentAt, responseDate: now)
        let update: StoreUpdate
        if entry.metadata.forbidsStoring {
            update = .remove(keys: [key])  // what was stored is no longer to be kept either
        } else if mayStore(entry) {
            update = .store(storable(entry), key: key, request: request)
        } else {
            update = .none
        }
        var status = "Cache; fwd=\(reason); fwd-status=\(response.status.rawValue)"
        if case .store = update { status += "; stored" }
        return .deliver(.success(Self.tagged(response, status)), update)
    }

    // MARK: Rules

    /// Whether the request could be sent as it is: a stored response answers only a request the terminal would
    /// accept, so that whether it fails never depends on what is stored.
    private var isSendable: Bool {
        (try? request.validateHeaderFields()) != nil && (try? request.validateBodyAllowed()) != nil
    }

    /// Whether the shared-cache rules apply to what this load stores: the request carries `Authorization` and the
    /// policy is ``Cache/AuthorizationPolicy/sharedCacheRules``.
    private var followsSharedCacheRules: Bool {
        requestFields.hasAuthorization && authorizationPolicy == .sharedCacheRules
    }

    /// `entry` as this load may store it: under the shared-cache rules, without the fields a qualified
    /// `private="…"` lists (RFC 9111 §5.2.2.7); a private cache stores them.
    private func storable(_ entry: CacheEntry) -> CacheEntry {
        followsSharedCacheRules ? entry.removingFields(entry.metadata.control.privateFields) : entry
    }

    /// Whether this response may be stored (RFC 9111 §3), and is worth storing.
    private func mayStore(_ entry: CacheEntry) -> Bool {
        let metadata = entry.metadata
        let control = metadata.control
        let status = entry.status.rawValue
        // §3.3: a 206 only in answer to the range asked for, and only one that can be combined (``isStorablePartial``).
        guard request.cachePolicy != .doNotStore, !requestControl.noStore, !metadata.forbidsStoring,
            (200..<600).contains(status), status != 206 || (requestedRange != nil && entry.isStorablePartial),
            status != 304,
            !metadata.varyNames.contains("*")
        else { return false }
        // §3.5: a response to a request with credentials only where a shared cache could store it; and a shared
        // cache never stores an unqualified `private` (§5.2.2.7).
        if followsSharedCacheRules,
            control.isPrivateUnqualified || !(control.isPublic || control.mustRevalidate || control.sharedMaxAge != nil)
        {
            return false
        }
        let mayBeStored =
            control.isPublic || control.isPrivate || control.maxAge != nil || control.hasInvalidMaxAge
            || entry.headers.contains("Expires")
            || CacheEntry.Metadata.heuristicallyCacheable.contains(status)
        // A response that is stale at once, with nothing to revalidate it by nor leave to serve it on error, would
        // never be used.
        let isUsable = metadata.freshnessLifetime > 0 || metadata.hasValidator || control.staleIfError != nil
        return mayBeStored && isUsable
    }

    /// The stale entry, served because sending failed (RFC 5861 `stale-if-error`): a transport failure or a
    /// 500, 502, 503 or 504, within the window the response or the request allows; `nil` otherwise.
    private func staleIfError(_ entry: CacheEntry, after result: HTTPResult, now: Date) -> HTTPResponse? {
        let failure: String
        switch result {
        case .success(let response):
            guard [500, 502, 503, 504].contains(response.status.rawValue) else { return nil }
            failure = "; fwd-status=\(response.status.rawValue)"
        case .failure(let error):
            guard [.cannotConnect, .timedOut, .invalidResponse].contains(error.code) else { return nil }
            failure = ""
        }
        let metadata = entry.metadata
        guard metadata.mayServeStale,
            let window = [metadata.control.staleIfError, requestControl.staleIfError].compactMap({ $0 }).max()
        else { return nil }
        let age = metadata.currentAge(at: now, responseDate: entry.responseDate)
        guard age - metadata.freshnessLifetime <= Double(window) else { return nil }
        return entry.response(
            to: request, age: age, cacheStatus: "Cache; fwd=stale\(failure); detail=stale-if-error")
    }

    /// Whether a 304's header fields name `entry` (RFC 9111 §4.3.4): an `ETag` must match the stored one (weakly);
    /// a 304 without one answers the conditional request made from this entry.
    private static func selects(_ notModified: HTTPHeaders, _ entry: CacheEntry) -> Bool {
        guard let tag = notModified.values(for: "ETag").first else { return true }
        guard let stored = entry.metadata.entityTag else { return false }
        return weaklyMatch(tag, stored)
    }

    /// RFC 9110 §8.8.3.2's weak comparison: the opaque tags are equal, whether or not either is weak.
    static func weaklyMatch(_ lhs: String, _ rhs: String) -> Bool {
        func opaque(_ tag: String) -> Substring {
            let trimmed = tag.trimmingCharacters(in: .whitespaces)[...]
            return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
        }
        return opaque(lhs) == opaque(rhs)
    }

    /// The request, asking the server whether `entry` is still current.
    private func conditionalRequest(for entry: CacheEntry) -> HTTPRequest {
        var conditional = request
        if let tag = entry.metadata.entityTag { conditional.headers["If-None-Match"] = tag }
        if let modified = entry.metadata.lastModified { conditional.headers["If-Modified-Since"] = modified }
        return conditional
    }

    /// Whether a `Pragma` field value has the `no-cache` directive among its comma-separated members (RFC 9111 §5.4);
    /// `x-no-cache` or `no-cache-x` is another directive.
    private static func listsNoCache(_ pragma: String) -> Bool {
        pragma.split(separator: ",").contains { member in
            let name = member.prefix { $0 != "=" }.trimmingCharacters(in: .whitespaces)
            return HTTPHeaders.namesMatch(name, "no-cache")
        }
    }

    /// The answer to an `only-if-cached` request the cache cannot satisfy (RFC 9111 §5.2.1.7).
    private func gatewayTimeout() -> HTTPResponse {
        HTTPResponse(
            request: request, status: .gatewayTimeout, headers: ["Cache-Status": "Cache; detail=only-if-cached"])
    }

    private static func tagged(_ response: HTTPResponse, _ cacheStatus: String) -> HTTPResponse {
        var response = response
        response.headers.add(cacheStatus, for: "Cache-Status")
        return response
    }
}

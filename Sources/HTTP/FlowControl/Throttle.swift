/// A loader that lets at most ``maximumNumberOfRequests`` requests run downstream at once; the rest wait.
///
/// ```swift
/// let throttle = Throttle(maximumNumberOfRequests: 4)
/// let chain = Retry() --> throttle --> URLSessionLoader()
/// throttle.maximumNumberOfRequests = 8   // takes effect at once: waiting requests start
/// ```
///
/// ## Who goes next
///
/// Waiting requests sit in three lanes by ``HTTPRequest/throttlePriority``. When a slot frees, the oldest
/// request of the highest non-empty lane goes — unless a lower lane has been passed over
/// ``starvationLimit`` times in a row while it had a request waiting: then the oldest request of that lane
/// goes first (the lowest such lane, if several). So high-priority requests overtake, and a low-priority
/// request is overtaken at most `starvationLimit` times by the lanes above it before it runs.
///
/// A request with ``HTTPRequest/throttle`` set to ``ThrottleOption/never`` skips the queue and takes no slot.
///
/// ## Slots, cancellation and reset
///
/// A slot is held until the downstream load returns. A waiting request whose task is cancelled leaves the
/// queue at once and completes with ``HTTPError/Code/cancelled``. A reset (``HTTPLoader/reset(mode:)``) fails
/// every waiting request with ``HTTPError/Code/resetInProgress`` at once, refuses new ones — a
/// ``ThrottleOption/never`` request too — until it ends, and waits until the requests running downstream have
/// finished.
// Safety: all mutable state lives in `state`, behind a lock.
public final class Throttle: HTTPLoader, @unchecked Sendable {
    private enum Admission: Sendable {
        case granted, cancelled, reset
    }

    /// A FIFO queue of waiter identifiers; identifiers whose waiter is gone are skipped lazily, so that
    /// leaving the queue on cancellation is O(1).
    private struct Lane {
        var ids: [UInt64] = []
        var head = 0
        var skips = 0

        mutating func append(_ id: UInt64) { ids.append(id) }

        /// Drops identifiers of waiters that left, and returns the first live one without removing it.
        mutating func first(liveIn waiters: Waiters<Admission>) -> UInt64? {
            while head < ids.count, !waiters.isWaiting(ids[head]) { head += 1 }
            compactIfNeeded()
            return head < ids.count ? ids[head] : nil
        }

        mutating func removeFirst() {
            head += 1
            compactIfNeeded()
        }

        private mutating func compactIfNeeded() {
            if head == ids.count {
                ids.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1_024, head * 2 > ids.count {
                ids.removeFirst(head)
                head = 0
            }
        }
    }

    private struct State {
        var limit: Int
        var running = 0
        var lanes = [Lane](repeating: Lane(), count: ThrottlePriority.allCases.count)
        var waiters = Waiters<Admission>()
    }

    /// How many times in a row a lane with a waiting request may be passed over by higher lanes.
    public let starvationLimit: Int
    private let state: Locked<State>

    /// - Parameters:
    ///   - maximumNumberOfRequests: How many requests may run downstream at once (at least 1).
    ///   - starvationLimit: How many times in a row a waiting lower-priority request may be overtaken; 8 by default.
    public init(maximumNumberOfRequests: Int, starvationLimit: Int = 8) {
        self.state = Locked(State(limit: max(1, maximumNumberOfRequests)))
        self.starvationLimit = max(1, starvationLimit)
    }

    /// How many requests may run downstream at once. Raising it starts waiting requests at once; lowering it
    /// lets running requests finish and holds new ones until fewer than the new limit run. At least 1.
    public var maximumNumberOfRequests: Int {
        get { state.withLock { $0.limit } }
        set {
            let admitted = state.withLock { state in
                state.limit = max(1, newValue)
                return Self.admitWaiters(&state, starvationLimit: starvationLimit)
            }
            for continuation in admitted { continuation.resume() }
        }
    }

    /// The current limit and the starvation limit.
    public override var configurationDescription: String {
        "maximumNumberOfRequests: \(maximumNumberOfRequests), starvationLimit: \(starvationLimit)"
    }

    /// The number of requests running downstream through a slot now: a gauge for metrics (see "Gauges" in
    /// <doc:ObservingLoads>).
    public var runningCount: Int { state.withLock { $0.running } }

    /// The number of requests waiting for a slot now: a gauge for metrics, the queue's length.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        // This frame stays small — what a waiting request holds is this frame and `waitForSlot`'s — so the
        // work on either side of the wait is out of line.
        if request.throttle == .never { return await bypass(request) }
        var admission = admitNow()
        if admission == nil { admission = await waitForSlot(request.throttlePriority) }
        guard admission == .granted else { return refusal(admission ?? .reset, of: request) }
        return await loadInSlot(request)
    }

    /// Loads a request that bypasses the queue (during a reset, `loadNext` lets only a loader's own reset traffic
    /// through).
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    nonisolated(nonsending) private func bypass(_ request: HTTPRequest) async -> HTTPResult {
        await loadNext(request)
    }

    /// Loads a request that holds a slot, and frees the slot when the load completes.
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    nonisolated(nonsending) private func loadInSlot(_ request: HTTPRequest) async -> HTTPResult {
        let result = await loadNext(request)
        release()
        return result
    }

    /// The failure of a request that did not get a slot.
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    private func refusal(_ admission: Admission, of request: HTTPRequest) -> HTTPResult {
        switch admission {
        case .cancelled:
            .failure(HTTPError(.cancelled, request: request, message: "cancelled while waiting in the Throttle"))
        case .reset, .granted:
            .failure(resetRefusal(of: request))
        }
    }

    /// Takes a free slot, or says why not now: `nil` when the request must wait.
    private func admitNow() -> Admission? {
        state.withLock { state -> Admission? in
            if isResetting { return .reset }
            guard state.running < state.limit, state.waiters.count == 0 else { return nil }
            state.running += 1
            return .granted
        }
    }

    /// Waits in `priority`'s lane for a slot. Kept out of line and small: its frames are what every waiting
    /// request holds.
    @inline(never)
    private func waitForSlot(_ priority: ThrottlePriority) async -> Admission {
        let id = state.withLock { $0.waiters.nextID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in enqueue(continuation, id: id, priority: priority) }
        } onCancel: {
            state.withLock { $0.waiters.answer(id, with: .cancelled) }?.resume()
        }
        return state.withLock { $0.waiters.takeAnswer(id) } ?? .cancelled
    }

    /// Puts a waiter in its lane, or answers it at once (cancelled, resetting, or a slot freed meanwhile).
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    private func enqueue(_ continuation: CheckedContinuation<Void, Never>, id: UInt64, priority: ThrottlePriority) {
        let decided = state.withLock { state -> (refused: Bool, admitted: [CheckedContinuation<Void, Never>]) in
            if Task.isCancelled {
                state.waiters.answerUnparked(id, with: .cancelled)
                return (true, [])
            }
            if isResetting {
                state.waiters.answerUnparked(id, with: .reset)
                return (true, [])
            }
            state.waiters.park(id, continuation)
            state.lanes[priority.rawValue].append(id)
            // A slot may have freed between the first check and now.
            return (false, Self.admitWaiters(&state, starvationLimit: starvationLimit))
        }
        if decided.refused { continuation.resume() }
        for admitted in decided.admitted { admitted.resume() }
    }

    /// Frees a slot and hands it on.
    private func release() {
        let admitted = state.withLock { state in
            state.running -= 1
            return Self.admitWaiters(&state, starvationLimit: starvationLimit)
        }
        for continuation in admitted { continuation.resume() }
    }

    /// Picks waiters for every free slot, by the rule in the type's documentation; the caller resumes them
    /// after unlocking.
    private static func admitWaiters(
        _ state: inout State, starvationLimit: Int
    ) -> [CheckedContinuation<Void, Never>] {
        var admitted: [CheckedContinuation<Void, Never>] = []
        while state.running < state.limit, state.waiters.count > 0 {
            var heads: [UInt64?] = []
            for lane in state.lanes.indices { heads.append(state.lanes[lane].first(liveIn: state.waiters)) }
            guard let highest = heads.indices.last(where: { heads[$0] != nil }) else { break }
            let starved = heads.indices.first {
                $0 < highest && heads[$0] != nil && state.lanes[$0].skips >= starvationLimit
            }
            let chosen = starved ?? highest
            for lane in heads.indices where lane != chosen && lane < highest && heads[lane] != nil {
                state.lanes[lane].skips += 1
            }
            state.lanes[chosen].skips = 0
            state.lanes[chosen].removeFirst()
            if let id = heads[chosen], let continuation = state.waiters.answer(id, with: .granted) {
                state.running += 1
                admitted.append(continuation)
            }
        }
        return admitted
    }

    /// Fails every waiting request with ``HTTPError/Code/resetInProgress``.
    public override func failHeldLoads(_ mode: ResetMode) {
        let waiting = state.withLock { state in
            for lane in state.lanes.indices { state.lanes[lane] = Lane() }
            return state.waiters.answerAll(with: .reset)
        }
        for continuation in waiting { continuation.resume() }
    }
}

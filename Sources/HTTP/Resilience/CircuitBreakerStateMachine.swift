/// The circuit of one origin: closed, open or half-open, as a value that takes events and returns what to do. Its
/// states and transitions are the ones ``CircuitBreaker``'s documentation draws.
///
/// No `await`, no lock, no clock: ``CircuitBreaker`` holds one per origin in its lock, passes the time in, and acts
/// on what comes back (sends the request, or fails it at once). Time is a `Duration` since the breaker was made.
///
/// Every request sent gets a ``Ticket`` naming the circuit's generation, which grows with every change of state;
/// a completion whose ticket is from another generation (a request sent while closed, answered once open) is
/// ignored. In half-open only the trial has a ticket of the current generation.
package struct CircuitBreakerStateMachine: Sendable {
    /// A request sent through the circuit, to be reported back with ``complete(_:with:at:)``.
    package struct Ticket: Sendable, Hashable {
        package let generation: UInt64
    }

    /// What a completed request says about the origin's health.
    package enum Outcome: Sendable {
        /// A response whose status is not a failure: the origin answers.
        case success
        /// A failure that counts: a transport error or a failure status.
        case failure(HTTPResult)
        /// Says nothing about the origin (cancelled, refused by a reset, invalid, an error not counted).
        case ignored
    }

    /// What to do with a request that arrives.
    package enum Arrival: Sendable {
        /// Send it, and report its outcome with this ticket.
        case send(Ticket)
        /// Fail it at once: the circuit is open (or half-open with its trial in flight).
        case failFast(Refusal)
    }

    /// Why a request is failed at once, for ``OpenCircuit``.
    package struct Refusal: Sendable {
        package let opening: Opening
        /// ``CircuitState/open`` or ``CircuitState/halfOpen``.
        package let state: CircuitState
        /// How long until the next trial is let through: zero while a trial is in flight.
        package let retryAfter: Duration
    }

    /// Why the circuit opened, and how many times in a row.
    package struct Opening: Sendable {
        /// The failure that opened it (or the failed trial that opened it again).
        package let lastFailure: HTTPResult
        /// The failures and requests in the window when it opened; `nil` when a trial failed.
        package let failures: (count: Int, requests: Int)?
        /// 1 when it opened from closed; one more for every failed trial since.
        package let count: Int
    }

    /// A change of the visible state.
    package typealias Change = (from: CircuitState, to: CircuitState)

    package enum Phase: Sendable {
        /// Counting outcomes in ``CircuitBreakerStateMachine/window``.
        case closed
        case open(Opening, nextTrial: Duration)
        case halfOpen(Opening, isTrialInFlight: Bool)
    }

    /// The numbers of a ``CircuitBreaker/Configuration`` the circuit works with, already sanitized.
    package struct Limits: Sendable {
        package let failureRateThreshold: Double
        package let minimumNumberOfRequests: Int
        package let window: Duration
        package let openDuration: Duration
        package let maximumOpenDuration: Duration

        /// The limits of `configuration`, taken as ``CircuitBreaker/Configuration/sanitized``.
        package init(_ configuration: CircuitBreaker.Configuration) {
            let sanitized = configuration.sanitized
            failureRateThreshold = sanitized.failureRateThreshold
            minimumNumberOfRequests = sanitized.minimumNumberOfRequests
            window = sanitized.window
            openDuration = sanitized.openDuration
            maximumOpenDuration = sanitized.maximumOpenDuration
        }
    }

    package private(set) var phase: Phase = .closed
    /// The outcomes counted while closed; emptied on every change of state. Kept out of ``phase`` so that counting
    /// changes it in place, without copying its buckets.
    package private(set) var window: Window
    package private(set) var generation: UInt64 = 0
    package let limits: Limits

    /// A closed circuit.
    package init(limits: Limits) {
        self.limits = limits
        window = Window(length: limits.window)
    }

    /// A closed circuit with the limits of `configuration`.
    package init(configuration: CircuitBreaker.Configuration) {
        self.init(limits: Limits(configuration))
    }

    /// The state as users see it.
    package var state: CircuitState {
        switch phase {
        case .closed: .closed
        case .open: .open
        case .halfOpen: .halfOpen
        }
    }

    /// A request arrives at `now`: send it (as the trial, if the open time has passed), or fail it at once. The time
    /// is read only when the circuit is not closed.
    package mutating func arrive(at now: @autoclosure () -> Duration) -> (Arrival, Change?) {
        switch phase {
        case .closed:
            return (.send(Ticket(generation: generation)), nil)
        case .open(let opening, let nextTrial):
            let now = now()
            if now < nextTrial {
                return (.failFast(Refusal(opening: opening, state: .open, retryAfter: nextTrial - now)), nil)
            }
            let change = moveTo(.halfOpen(opening, isTrialInFlight: true))
            return (.send(Ticket(generation: generation)), change)
        case .halfOpen(let opening, true):
            return (.failFast(Refusal(opening: opening, state: .halfOpen, retryAfter: .zero)), nil)
        case .halfOpen(let opening, false):
            phase = .halfOpen(opening, isTrialInFlight: true)
            return (.send(Ticket(generation: generation)), nil)
        }
    }

    /// The request sent with `ticket` completed at `now` with `outcome`.
    package mutating func complete(
        _ ticket: Ticket, with outcome: Outcome, at now: Duration
    ) -> Change? {
        guard ticket.generation == generation else { return nil }
        switch (phase, outcome) {
        case (_, .ignored):
            if case .halfOpen(let opening, true) = phase { phase = .halfOpen(opening, isTrialInFlight: false) }
            return nil
        case (.closed, .success):
            window.record(isFailure: false, at: now)
            return nil
        case (.closed, .failure(let result)):
            window.record(isFailure: true, at: now)
            let (requests, failures) = window.totals
            let rate = Double(failures) / Double(requests)
            guard requests >= limits.minimumNumberOfRequests, rate >= limits.failureRateThreshold else { return nil }
            let opening = Opening(lastFailure: result, failures: (failures, requests), count: 1)
            return moveTo(.open(opening, nextTrial: now + openDuration(afterOpening: 1)))
        case (.halfOpen, .success):
            return moveTo(.closed)
        case (.halfOpen(let previous, _), .failure(let result)):
            let opening = Opening(lastFailure: result, failures: nil, count: previous.count + 1)
            return moveTo(.open(opening, nextTrial: now + openDuration(afterOpening: opening.count)))
        case (.open, _):
            return nil  // no ticket of an open generation exists
        }
    }

    /// Closes the circuit and forgets what it counted.
    package mutating func reset() -> Change? {
        moveTo(.closed)
    }

    /// Whether the circuit is closed and has counted nothing within the window: it may be forgotten.
    package func isIdle(at now: Duration) -> Bool {
        guard case .closed = phase else { return false }
        var window = window
        window.advance(to: now)
        return window.totals.requests == 0
    }

    /// How long the circuit stays open after its `count`th opening in a row: the open duration, doubled for
    /// every failed trial, at most the maximum.
    package func openDuration(afterOpening count: Int) -> Duration {
        var duration = limits.openDuration
        var doublings = count - 1
        // At most about 130 rounds: a positive duration reaches any maximum (a century) by then.
        while doublings > 0, duration > .zero, duration < limits.maximumOpenDuration {
            duration = min(duration * 2, limits.maximumOpenDuration)
            doublings -= 1
        }
        return duration
    }

    /// Enters `next`, starting a new generation with an empty window; returns the change when the visible state
    /// changed.
    private mutating func moveTo(_ next: Phase) -> Change? {
        let from = state
        phase = next
        window = Window(length: limits.window)
        generation &+= 1
        return from == state ? nil : (from, state)
    }
}

extension CircuitBreakerStateMachine {
    /// Requests and failures over a sliding window of time, in ten buckets: a request is forgotten between
    /// 90% and 100% of the window after it completed. Memory stays the same whatever the traffic.
    package struct Window: Sendable {
        private static let bucketCount = 10

        private var buckets = [(requests: Int, failures: Int)](repeating: (0, 0), count: bucketCount)
        /// The number of the bucket last written, counted from time zero.
        private var newestBucket: Int64 = 0
        private let bucketNanoseconds: Int64
        /// The requests and failures in every bucket.
        package private(set) var totals: (requests: Int, failures: Int) = (0, 0)

        package init(length: Duration) {
            bucketNanoseconds = max(1, Self.nanoseconds(length) / Int64(Self.bucketCount))
        }

        /// Counts a completed request.
        package mutating func record(isFailure: Bool, at now: Duration) {
            advance(to: now)
            let slot = Int(newestBucket % Int64(Self.bucketCount))
            buckets[slot].requests += 1
            totals.requests += 1
            if isFailure {
                buckets[slot].failures += 1
                totals.failures += 1
            }
        }

        /// Forgets the buckets that have left the window at `now`. Time that goes backwards is taken as now.
        package mutating func advance(to now: Duration) {
            let bucket = Self.nanoseconds(now) / bucketNanoseconds
            guard bucket > newestBucket else { return }
            let expired = min(bucket - newestBucket, Int64(Self.bucketCount))
            for step in 1...expired {
                let slot = Int((newestBucket + step) % Int64(Self.bucketCount))
                totals.requests -= buckets[slot].requests
                totals.failures -= buckets[slot].failures
                buckets[slot] = (0, 0)
            }
            newestBucket = bucket
        }

        /// `duration` in nanoseconds, clamped to `0...` a century, so that no clock or configuration can overflow
        /// the arithmetic.
        private static func nanoseconds(_ duration: Duration) -> Int64 {
            let clamped = min(max(duration, .zero), .century)
            let (seconds, attoseconds) = clamped.components
            return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        }
    }
}

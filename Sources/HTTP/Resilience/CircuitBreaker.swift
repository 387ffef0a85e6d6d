/// A loader that stops sending requests to an origin that keeps failing, and fails them at once instead, until a
/// trial request shows that the origin has recovered.
///
/// Each origin (scheme, host and port; see ``Origin``) has a circuit of its own:
///
/// ```
///            failure rate ≥ threshold                      the open time has passed:
///            over the window (≥ minimum requests)          the next request is the trial
///   closed ─────────────────────────────────────► open ─────────────────────────────► half-open
///     ▲                                            ▲                                      │
///     │                                            └──────── the trial fails ─────────────┤
///     └─────────────────────────────── the trial succeeds ───────────────────────────────┘
/// ```
///
/// - **Closed**: requests go through. Their outcomes are counted over a sliding ``Configuration/window``: when at
///   least ``Configuration/minimumNumberOfRequests`` have completed in it and the share of failures reaches
///   ``Configuration/failureRateThreshold``, the circuit opens. A failure is a transport error listed in
///   ``Configuration/failureCodes`` or a status listed in ``Configuration/failureStatuses``.
/// - **Open**: requests fail at once with ``HTTPError/Code/circuitOpen``, without being sent. The error's
///   ``HTTPError/openCircuit`` carries the last failure and how long until the next trial
///   (``OpenCircuit/retryAfter``); its ``HTTPError/response`` is the last failure's response, if it was one.
/// - **Half-open**: once ``Configuration/openDuration`` has passed, the next request goes through as the trial,
///   and the others fail at once until it is answered. A success closes the circuit; a failure opens it again,
///   for twice as long as the time before (at most ``Configuration/maximumOpenDuration``). A trial that says
///   nothing (cancelled, say) lets the next request be the trial.
///
/// ```swift
/// let breaker = CircuitBreaker()
/// let chain = ApplyEnvironment(environment: .production) --> Retry() --> breaker --> URLSessionLoader()
///
/// Task {
///     for await transition in breaker.transitions() { print(transition) }  // "https://api.example.com: closed → open"
/// }
/// ```
///
/// ## Where it goes in the chain
///
/// After ``ApplyEnvironment``: a request without a host has no origin yet and passes uncounted. Below ``Retry``, so
/// that the breaker counts every attempt and an open circuit stops the retries at once (``Backoff`` does not
/// retry ``HTTPError/Code/circuitOpen``); above ``Throttle``, so that a refused request does not wait for a slot.
///
/// ## Time, observation and reset
///
/// Time is read from the `Clock` given to the initializer; tests pass a manual one. ``state(for:)`` tells the state
/// of one origin's circuit, and ``transitions()`` reports every change as it happens. An open circuit becomes
/// half-open when the first request arrives after its open time. A reset (``HTTPLoader/reset(mode:)``) refuses
/// requests with ``HTTPError/Code/resetInProgress`` until it ends, waits for the requests in flight, and then closes
/// every circuit and forgets what it counted (each open circuit reports its change to closed).
// Safety: configuration is immutable; the circuits and observers live in `state`, behind a lock.
public final class CircuitBreaker: HTTPLoader, @unchecked Sendable {
    /// The configuration every circuit uses, as given.
    public let configuration: Configuration
    /// The configuration, sanitized: what counts as a failure.
    private let settings: Configuration
    /// Its numbers, for each circuit.
    private let limits: CircuitBreakerStateMachine.Limits
    /// The time since the breaker was made, on its clock.
    private let elapsed: @Sendable () -> Duration

    /// One origin's circuit.
    private struct Circuit {
        /// Identifies the circuit across its origin's forgotten and recreated ones, for tickets.
        let id: UInt64
        var machine: CircuitBreakerStateMachine
        /// The message of its refusals, made when it opens.
        var refusalMessage = ""
    }

    private struct State {
        var circuits: [Origin: Circuit] = [:]
        var lastCircuitID: UInt64 = 0
        /// Circuits are forgotten when idle, once there are this many.
        var pruningThreshold = 256
        var observers: [UInt64: AsyncStream<CircuitTransition>.Continuation] = [:]
        var lastObserverID: UInt64 = 0
    }

    /// A request that was sent, to be reported back.
    private struct Ticket {
        let origin: Origin
        let circuit: UInt64
        let machineTicket: CircuitBreakerStateMachine.Ticket
    }

    private enum Decision {
        case send(Ticket)
        case failFast(CircuitBreakerStateMachine.Refusal, message: String)
        case refuse
    }

    private let state = Locked(State())
    /// Counted from the decision until the result is recorded, so a reset forgets the circuits only after it.
    private var inFlight: InFlightLoads { participation.inFlight }

    /// Creates a circuit breaker.
    ///
    /// - Parameters:
    ///   - configuration: When circuits open and for how long, and what counts as a failure; the defaults
    ///     described on ``Configuration``'s properties unless you pass one. Values out of range are brought into it
    ///     (a threshold above 1 is 1, a negative duration zero).
    ///   - clock: The clock that measures the window and the open time; a `ContinuousClock` by default, a manual
    ///     one in tests.
    public init(configuration: Configuration = Configuration(), clock: any Clock<Duration> = ContinuousClock()) {
        self.configuration = configuration
        self.settings = configuration.sanitized
        self.limits = CircuitBreakerStateMachine.Limits(configuration)
        self.elapsed = Self.elapsedTime(on: clock)
    }

    deinit {
        let observers = state.withLock { $0.observers.values }
        for observer in observers { observer.finish() }
    }

    private static func elapsedTime<C: Clock<Duration>>(on clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// The state of `origin`'s circuit: ``CircuitState/closed`` for an origin it has not seen. An open circuit whose
    /// open time has passed stays ``CircuitState/open`` until the next request for it arrives.
    public func state(for origin: Origin) -> CircuitState {
        state.withLock { $0.circuits[origin]?.machine.state ?? .closed }
    }

    /// The number of origins with a circuit; for tests.
    package var circuitCount: Int { state.withLock { $0.circuits.count } }

    /// The number of streams from ``transitions()`` still being fed; for tests.
    package var observerCount: Int { state.withLock { $0.observers.count } }

    /// Every change of a circuit's state from now on, in order, until the breaker is gone.
    ///
    /// Each call returns a new stream; iterate it in a task of its own. Changes are buffered until read.
    public func transitions() -> AsyncStream<CircuitTransition> {
        let (stream, continuation) = AsyncStream.makeStream(of: CircuitTransition.self)
        let id = state.withLock { state -> UInt64 in
            state.lastObserverID += 1
            state.observers[state.lastObserverID] = continuation
            return state.lastObserverID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        guard let origin = request.origin else { return await loadUncounted(request) }
        switch decide(for: request, origin: origin) {
        case .send(let ticket):
            let result = await loadNext(request)
            complete(ticket, with: result)
            inFlight.end()
            return result
        case .failFast(let refusal, let message):
            return .failure(Self.failure(of: request, origin: origin, refusal: refusal, message: message))
        case .refuse:
            return .failure(resetRefusal(of: request))
        }
    }

    /// Sends a request that has no origin yet, past the circuits (during a reset, `loadNext` lets only a loader's
    /// own reset traffic through).
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    nonisolated(nonsending) private func loadUncounted(_ request: HTTPRequest) async -> HTTPResult {
        await loadNext(request)
    }

    /// Asks `origin`'s circuit what to do with a request arriving now. The clock is read only when the circuit is
    /// not closed (or idle circuits are forgotten).
    private func decide(for request: HTTPRequest, origin: Origin) -> Decision {
        // Counted before the reset check (see `HTTPLoader.send(_:to:)`), and until the result is recorded.
        inFlight.begin()
        let decision = state.withLock { state -> Decision in
            if isResetting, !request.isPartOfReset { return .refuse }
            let index = circuitIndex(for: origin, in: &state)
            // In place: reading a circuit out of the dictionary would copy it.
            let (decision, change) = Self.admit(origin, to: &state.circuits.values[index], now: elapsed)
            if let change { Self.report(change, of: origin, to: state.observers) }
            return decision
        }
        if case .send = decision {} else { inFlight.end() }
        return decision
    }

    /// Asks `circuit` what to do with a request arriving now.
    private static func admit(
        _ origin: Origin, to circuit: inout Circuit, now: () -> Duration
    ) -> (Decision, CircuitBreakerStateMachine.Change?) {
        let (arrival, change) = circuit.machine.arrive(at: now())
        switch arrival {
        case .send(let machineTicket):
            return (.send(Ticket(origin: origin, circuit: circuit.id, machineTicket: machineTicket)), change)
        case .failFast(let refusal):
            return (.failFast(refusal, message: circuit.refusalMessage), change)
        }
    }

    /// The index of `origin`'s circuit, made if there is none (and idle ones forgotten when there are many).
    private func circuitIndex(for origin: Origin, in state: inout State) -> Dictionary<Origin, Circuit>.Index {
        if let index = state.circuits.index(forKey: origin) { return index }
        if state.circuits.count >= state.pruningThreshold {
            let now = elapsed()
            state.circuits = state.circuits.filter { !$0.value.machine.isIdle(at: now) }
            state.pruningThreshold = max(256, state.circuits.count * 2)
        }
        state.lastCircuitID += 1
        state.circuits[origin] = Circuit(id: state.lastCircuitID, machine: CircuitBreakerStateMachine(limits: limits))
        return state.circuits.index(forKey: origin)!
    }

    /// Counts the outcome of a request that was sent.
    private func complete(_ ticket: Ticket, with result: HTTPResult) {
        let outcome = settings.outcome(of: result)
        let now = elapsed()
        state.withLock { state in
            guard let index = state.circuits.index(forKey: ticket.origin) else { return }
            let change = Self.complete(ticket, with: outcome, at: now, in: &state.circuits.values[index])
            if let change { Self.report(change, of: ticket.origin, to: state.observers) }
        }
    }

    /// Counts an outcome in `circuit`, unless it is a newer circuit of the same origin (the one the request went
    /// through was forgotten, or reset, since).
    private static func complete(
        _ ticket: Ticket, with outcome: CircuitBreakerStateMachine.Outcome, at now: Duration,
        in circuit: inout Circuit
    ) -> CircuitBreakerStateMachine.Change? {
        guard circuit.id == ticket.circuit,
            let change = circuit.machine.complete(ticket.machineTicket, with: outcome, at: now)
        else { return nil }
        if change.to == .open { circuit.refusalMessage = refusalMessage(for: circuit.machine, origin: ticket.origin) }
        return change
    }

    /// Hands a change to every observer. Under the lock, so that observers see changes in the order they happened:
    /// `yield` only buffers the value and wakes the stream's reader, it never calls out.
    private static func report(
        _ change: CircuitBreakerStateMachine.Change, of origin: Origin,
        to observers: [UInt64: AsyncStream<CircuitTransition>.Continuation]
    ) {
        guard !observers.isEmpty else { return }
        let transition = CircuitTransition(origin: origin, from: change.from, to: change.to)
        for observer in observers.values { observer.yield(transition) }
    }

    /// Why `machine`'s circuit, just opened, refuses requests: the message of its ``HTTPError/Code/circuitOpen``
    /// errors.
    private static func refusalMessage(for machine: CircuitBreakerStateMachine, origin: Origin) -> String {
        guard case .open(let opening, _) = machine.phase else { return "the circuit for \(origin) is open" }
        let cause =
            if let failures = opening.failures {
                "\(failures.count) of the last \(failures.requests) requests failed"
            } else {
                "the trial request failed (\(opening.count - 1) in a row)"
            }
        return "refused by CircuitBreaker without sending: the circuit for \(origin) is open, \(cause)"
    }

    /// The error of a request failed at once.
    private static func failure(
        of request: HTTPRequest, origin: Origin, refusal: CircuitBreakerStateMachine.Refusal, message: String
    ) -> HTTPError {
        let lastFailure = refusal.opening.lastFailure
        return HTTPError(
            .circuitOpen,
            request: request,
            message: message,
            response: lastFailure.response,
            underlyingError: OpenCircuit(
                origin: origin, state: refusal.state, lastFailure: lastFailure, retryAfter: refusal.retryAfter)
        )
    }

    /// Closes every circuit and forgets what was counted.
    public override func forgetState() async {
        state.withLock { state in
            for (origin, circuit) in state.circuits where circuit.machine.state != .closed {
                Self.report((from: circuit.machine.state, to: .closed), of: origin, to: state.observers)
            }
            state.circuits = [:]
        }
    }
}

import Foundation
import Testing

@testable import HTTP

/// The state machine alone, state by state and event by event: no loader, no clock, no concurrency.
@Suite(.noHang) struct CircuitBreakerStateMachineTests {
    typealias Machine = CircuitBreakerStateMachine

    /// Opens at half of at least four requests failing in 10 s; open for 5 s, then 10, then 20 at most.
    static let configuration = CircuitBreaker.Configuration(
        failureRateThreshold: 0.5, minimumNumberOfRequests: 4, window: .seconds(10), openDuration: .seconds(5),
        maximumOpenDuration: .seconds(20))

    static let failure = HTTPResult.success(
        HTTPResponse(request: HTTPRequest(host: "api.example.com"), status: .serviceUnavailable))

    enum Fixture: String, CaseIterable, CustomTestStringConvertible {
        case closedEmpty, closedAtTheBrink, openNotDue, openDue, halfOpenTrialInFlight, halfOpenIdle
        var testDescription: String { rawValue }
    }

    enum Event: String, CaseIterable, CustomTestStringConvertible {
        case arrive, success, failure, ignored, staleFailure, reset
        var testDescription: String { rawValue }
    }

    /// A machine in `fixture`'s state, the time it is in, and a ticket of its current generation.
    static func make(_ fixture: Fixture) -> (machine: Machine, now: Duration, ticket: Machine.Ticket) {
        var machine = Machine(configuration: configuration)
        let start = Duration.seconds(100)
        func send(at now: Duration) -> Machine.Ticket {
            guard case .send(let ticket) = machine.arrive(at: now).0 else {
                Issue.record("expected the request to be sent")
                return Machine.Ticket(generation: .max)
            }
            return ticket
        }
        guard fixture != .closedEmpty else { return (machine, start, Machine.Ticket(generation: machine.generation)) }
        // Two successes and a failure: one failure more makes two of four.
        for outcome in [Machine.Outcome.success, .success, .failure(failure)] {
            _ = machine.complete(send(at: start), with: outcome, at: start)
        }
        if fixture == .closedAtTheBrink { return (machine, start, Machine.Ticket(generation: machine.generation)) }
        _ = machine.complete(send(at: start), with: .failure(failure), at: start)
        if fixture == .openNotDue {
            return (machine, start + .seconds(1), Machine.Ticket(generation: machine.generation))
        }
        let due = start + .seconds(5)
        if fixture == .openDue { return (machine, due, Machine.Ticket(generation: machine.generation)) }
        let trial = send(at: due)
        if fixture == .halfOpenTrialInFlight { return (machine, due, trial) }
        _ = machine.complete(trial, with: .ignored, at: due)
        return (machine, due, Machine.Ticket(generation: machine.generation))
    }

    /// What an event should lead to.
    struct Expectation {
        var state: CircuitState
        var change: (from: CircuitState, to: CircuitState)? = nil
        /// For `arrive`: sent, or failed at once with this state and wait.
        var arrival: Arrival? = nil

        enum Arrival: Equatable {
            case send
            case failFast(CircuitState, retryAfter: Duration)
        }
    }

    static let table: [Fixture: [Event: Expectation]] = [
        .closedEmpty: [
            .arrive: Expectation(state: .closed, arrival: .send),
            .success: Expectation(state: .closed),
            .failure: Expectation(state: .closed),  // one of one, under the minimum
            .ignored: Expectation(state: .closed),
            .staleFailure: Expectation(state: .closed),
            .reset: Expectation(state: .closed),
        ],
        .closedAtTheBrink: [
            .arrive: Expectation(state: .closed, arrival: .send),
            .success: Expectation(state: .closed),
            .failure: Expectation(state: .open, change: (.closed, .open)),
            .ignored: Expectation(state: .closed),
            .staleFailure: Expectation(state: .closed),
            .reset: Expectation(state: .closed),
        ],
        .openNotDue: [
            .arrive: Expectation(state: .open, arrival: .failFast(.open, retryAfter: .seconds(4))),
            .success: Expectation(state: .open),
            .failure: Expectation(state: .open),
            .ignored: Expectation(state: .open),
            .staleFailure: Expectation(state: .open),
            .reset: Expectation(state: .closed, change: (.open, .closed)),
        ],
        .openDue: [
            .arrive: Expectation(state: .halfOpen, change: (.open, .halfOpen), arrival: .send),
            .success: Expectation(state: .open),
            .failure: Expectation(state: .open),
            .ignored: Expectation(state: .open),
            .staleFailure: Expectation(state: .open),
            .reset: Expectation(state: .closed, change: (.open, .closed)),
        ],
        .halfOpenTrialInFlight: [
            .arrive: Expectation(state: .halfOpen, arrival: .failFast(.halfOpen, retryAfter: .zero)),
            .success: Expectation(state: .closed, change: (.halfOpen, .closed)),
            .failure: Expectation(state: .open, change: (.halfOpen, .open)),
            .ignored: Expectation(state: .halfOpen),
            .staleFailure: Expectation(state: .halfOpen),
            .reset: Expectation(state: .closed, change: (.halfOpen, .closed)),
        ],
        .halfOpenIdle: [
            .arrive: Expectation(state: .halfOpen, arrival: .send),  // the next trial
            .success: Expectation(state: .closed, change: (.halfOpen, .closed)),
            .failure: Expectation(state: .open, change: (.halfOpen, .open)),
            .ignored: Expectation(state: .halfOpen),
            .staleFailure: Expectation(state: .halfOpen),
            .reset: Expectation(state: .closed, change: (.halfOpen, .closed)),
        ],
    ]

    @Test func theTableCoversEveryStateAndEvent() {
        for fixture in Fixture.allCases {
            #expect(Set(Self.table[fixture]?.keys.map(\.self) ?? []) == Set(Event.allCases), "\(fixture)")
        }
    }

    @Test(arguments: Fixture.allCases, Event.allCases)
    func everyEventInEveryState(fixture: Fixture, event: Event) throws {
        let expected = try #require(Self.table[fixture]?[event])
        var (machine, now, ticket) = Self.make(fixture)
        let generation = machine.generation
        var change: Machine.Change?
        var arrival: Expectation.Arrival?
        switch event {
        case .arrive:
            let (decision, arrivalChange) = machine.arrive(at: now)
            change = arrivalChange
            switch decision {
            case .send(let sent):
                arrival = .send
                #expect(sent.generation == machine.generation)
            case .failFast(let refusal):
                arrival = .failFast(refusal.state, retryAfter: refusal.retryAfter)
                #expect(refusal.opening.lastFailure.response?.status == .serviceUnavailable)
            }
        case .success: change = machine.complete(ticket, with: .success, at: now)
        case .failure: change = machine.complete(ticket, with: .failure(Self.failure), at: now)
        case .ignored: change = machine.complete(ticket, with: .ignored, at: now)
        case .staleFailure:
            change = machine.complete(
                Machine.Ticket(generation: generation &- 1), with: .failure(Self.failure), at: now)
        case .reset: change = machine.reset()
        }
        #expect(machine.state == expected.state)
        #expect(change?.from == expected.change?.from && change?.to == expected.change?.to)
        #expect(arrival == expected.arrival)
        // A change of state starts a new generation: tickets of the old one are stale from now on.
        if change != nil { #expect(machine.generation != generation) }
    }

    @Test func anOpenedCircuitFailsFastForTheOpenDurationThenLetsOneTrialThrough() {
        var (machine, now, _) = Self.make(.closedAtTheBrink)
        guard case .send(let ticket) = machine.arrive(at: now).0 else {
            Issue.record("not sent")
            return
        }
        _ = machine.complete(ticket, with: .failure(Self.failure), at: now)
        guard case .failFast(let refusal) = machine.arrive(at: now).0 else {
            Issue.record("not refused")
            return
        }
        #expect(refusal.retryAfter == .seconds(5))
        #expect(refusal.opening.count == 1)
        #expect(refusal.opening.failures?.count == 2 && refusal.opening.failures?.requests == 4)
        now += .milliseconds(4_999)
        guard case .failFast = machine.arrive(at: now).0 else {
            Issue.record("sent before the open time")
            return
        }
        now += .milliseconds(1)
        guard case .send = machine.arrive(at: now).0 else {
            Issue.record("no trial once due")
            return
        }
        guard case .failFast = machine.arrive(at: now).0 else {
            Issue.record("a second trial")
            return
        }
    }

    @Test func failedTrialsDoubleTheOpenTimeUpToTheMaximum() {
        var (machine, now, trial) = Self.make(.halfOpenTrialInFlight)
        var waits: [Duration] = []
        for _ in 0..<4 {
            _ = machine.complete(trial, with: .failure(Self.failure), at: now)
            guard case .failFast(let refusal) = machine.arrive(at: now).0 else {
                Issue.record("not open")
                return
            }
            waits.append(refusal.retryAfter)
            now += refusal.retryAfter
            guard case .send(let next) = machine.arrive(at: now).0 else {
                Issue.record("no trial")
                return
            }
            trial = next
        }
        #expect(waits == [.seconds(10), .seconds(20), .seconds(20), .seconds(20)])
        // A successful trial closes the circuit and starts the count afresh.
        #expect(machine.complete(trial, with: .success, at: now)?.to == .closed)
        #expect(machine.openDuration(afterOpening: 1) == .seconds(5))
    }

    @Test func outcomesOlderThanTheWindowAreForgotten() {
        var machine = Machine(configuration: Self.configuration)
        func record(_ outcome: Machine.Outcome, at now: Duration) -> Machine.Change? {
            guard case .send(let ticket) = machine.arrive(at: now).0 else { return nil }
            return machine.complete(ticket, with: outcome, at: now)
        }
        // Three failures, then three successes 11 s later: the failures have left the window.
        for _ in 0..<3 { #expect(record(.failure(Self.failure), at: .seconds(1)) == nil) }
        for _ in 0..<3 { #expect(record(.success, at: .seconds(12)) == nil) }
        #expect(record(.failure(Self.failure), at: .seconds(12)) == nil)  // 1 of 4
        #expect(machine.state == .closed)
        #expect(!machine.isIdle(at: .seconds(12)))
        #expect(machine.isIdle(at: .seconds(23)))
        // Half of the requests within the window opens it: 2 of 5, then 3 of 6.
        #expect(record(.failure(Self.failure), at: .seconds(13)) == nil)
        #expect(record(.failure(Self.failure), at: .seconds(13))?.to == .open)
    }

    @Test func timeGoingBackwardsOrFarForwardNeverTraps() {
        var window = Machine.Window(length: .seconds(10))
        window.record(isFailure: true, at: .seconds(1_000))
        window.record(isFailure: false, at: .seconds(5))  // earlier: counted as now
        #expect(window.totals == (2, 1))
        window.record(isFailure: false, at: .seconds(Int64.max))
        #expect(window.totals == (1, 0))
        window.record(isFailure: true, at: .seconds(-Int64.max))
        #expect(window.totals == (2, 1))
    }

    @Test func configurationsOutOfRangeAreBroughtIntoIt() {
        let wild = CircuitBreaker.Configuration(
            failureRateThreshold: .nan, minimumNumberOfRequests: -3, window: .zero, openDuration: .seconds(-1),
            maximumOpenDuration: .seconds(Int64.max), failureCodes: [.cancelled, .cannotConnect, .circuitOpen]
        ).sanitized
        #expect(wild.failureRateThreshold == 0.5)
        #expect(wild.minimumNumberOfRequests == 1)
        #expect(wild.window == .milliseconds(1))
        #expect(wild.openDuration == .zero)
        #expect(wild.maximumOpenDuration == .century)
        #expect(wild.failureCodes == [.cannotConnect])
        #expect(CircuitBreaker.Configuration(failureRateThreshold: 7).sanitized.failureRateThreshold == 1)

        var machine = Machine(configuration: wild)
        // Open for zero seconds: the next request is the trial at once, and the open time can double for ever.
        for _ in 0..<200 {
            guard case .send(let ticket) = machine.arrive(at: .seconds(1)).0 else {
                Issue.record("not sent")
                return
            }
            _ = machine.complete(ticket, with: .failure(Self.failure), at: .seconds(1))
        }
        #expect(machine.openDuration(afterOpening: Int.max) == .zero)
        #expect(
            Machine(configuration: .init(openDuration: .seconds(1))).openDuration(afterOpening: .max) == .seconds(60))
    }

    @Test func whatCountsAsAFailure() {
        let configuration = CircuitBreaker.Configuration(failureCodes: [.cannotConnect, .timedOut, .circuitOpen])
        let request = HTTPRequest(host: "api.example.com")
        func outcome(_ result: HTTPResult) -> String {
            switch configuration.outcome(of: result) {
            case .success: "success"
            case .failure: "failure"
            case .ignored: "ignored"
            }
        }
        #expect(outcome(.success(HTTPResponse(request: request, status: .ok))) == "success")
        #expect(outcome(.success(HTTPResponse(request: request, status: .notFound))) == "success")
        #expect(outcome(.success(HTTPResponse(request: request, status: .tooManyRequests))) == "success")
        #expect(outcome(.success(HTTPResponse(request: request, status: .notImplemented))) == "success")
        #expect(outcome(.success(HTTPResponse(request: request, status: .badGateway))) == "failure")
        #expect(outcome(.failure(HTTPError(.cannotConnect, request: request))) == "failure")
        #expect(outcome(.failure(HTTPError(.timedOut, request: request))) == "failure")
        for code: HTTPError.Code in [.cancelled, .resetInProgress, .invalidRequest, .circuitOpen, .cannotAuthenticate] {
            #expect(outcome(.failure(HTTPError(code, request: request))) == "ignored", "\(code)")
        }
    }
}

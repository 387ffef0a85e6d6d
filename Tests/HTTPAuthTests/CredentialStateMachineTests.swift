import Foundation
import HTTP
import Testing

@testable import HTTPAuth

/// `CredentialStateMachine` as a table: each state the machine can be in, each event, and what comes out — state by
/// state, with no loader, lock or task around it.
@Suite(.noHang) struct CredentialStateMachineTests {
    typealias Machine = CredentialStateMachine<String>

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// The states, each reached from a fresh machine by events only. A credential whose text starts with "due" is due.
    enum Start: String, CaseIterable, Sendable {
        case noCredential, usable, due, refreshRequested, flowRunning, refusedOnce

        func machine(limit: RefreshLimit? = .standard) -> Machine {
            var machine = Machine(
                credentialName: "the key", credential: nil, refusalLimit: limit,
                isDue: { credential, _ in credential.hasPrefix("due") })
            switch self {
            case .noCredential: break
            case .usable: machine.finishFlow(with: "k1")
            case .due: machine.finishFlow(with: "due-1")
            case .refreshRequested:
                machine.finishFlow(with: "k1")
                machine.setNeedsRefresh()
            case .flowRunning: _ = machine.requestArrived(at: CredentialStateMachineTests.now)
            case .refusedOnce:
                machine.finishFlow(with: "k1")
                _ = machine.requestArrived(refusing: machine.version, at: CredentialStateMachineTests.now)
            }
            return machine
        }
    }

    enum Event: String, CaseIterable, Sendable {
        case request, refusalOfCurrent, refusalOfOlder, flowSucceeds, flowFails, flowFailsForgetting, staleFlowEnds
        case dropFlow, forget
    }

    /// What happens, as text: the arrival or answer, then the situation and whether a credential is kept. A refused
    /// credential is kept as the refresh's input, and due.
    static let table: [Start: [Event: String]] = [
        .noCredential: [
            .request: "start obtain → authorizing, none",
            .refusalOfCurrent: "start obtain → authorizing, none",
            .refusalOfOlder: "start obtain → authorizing, none",
            .flowSucceeds: "nothing → idle, none",
            .flowFails: "nothing → idle, none",
            .flowFailsForgetting: "nothing → idle, none",
            .staleFlowEnds: "nothing → idle, none",
            .dropFlow: "dropped none → idle, none",
            .forget: "forgot none → idle, none",
        ],
        .usable: [
            .request: "send k1 → authorized, k1",
            .refusalOfCurrent: "start refresh k1 refused → authorizing, k1",
            .refusalOfOlder: "send k1 → authorized, k1",
            .flowSucceeds: "nothing → authorized, k1",
            .flowFails: "nothing → authorized, k1",
            .flowFailsForgetting: "nothing → authorized, k1",
            .staleFlowEnds: "nothing → authorized, k1",
            .dropFlow: "dropped none → authorized, k1",
            .forget: "forgot k1 → idle, none",
        ],
        .due: [
            .request: "start refresh due-1 due → authorizing, due-1",
            .refusalOfCurrent: "start refresh due-1 refused → authorizing, due-1",
            .refusalOfOlder: "start refresh due-1 due → authorizing, due-1",
            .flowSucceeds: "nothing → needsRefresh, due-1",
            .flowFails: "nothing → needsRefresh, due-1",
            .flowFailsForgetting: "nothing → needsRefresh, due-1",
            .staleFlowEnds: "nothing → needsRefresh, due-1",
            .dropFlow: "dropped none → needsRefresh, due-1",
            .forget: "forgot due-1 → idle, none",
        ],
        .refreshRequested: [
            .request: "start refresh k1 due → authorizing, k1",
            .refusalOfCurrent: "start refresh k1 refused → authorizing, k1",
            .refusalOfOlder: "start refresh k1 due → authorizing, k1",
            .flowSucceeds: "nothing → needsRefresh, k1",
            .flowFails: "nothing → needsRefresh, k1",
            .flowFailsForgetting: "nothing → needsRefresh, k1",
            .staleFlowEnds: "nothing → needsRefresh, k1",
            .dropFlow: "dropped none → needsRefresh, k1",
            .forget: "forgot k1 → idle, none",
        ],
        .flowRunning: [
            .request: "wait → authorizing, none",
            .refusalOfCurrent: "wait → authorizing, none",
            .refusalOfOlder: "wait → authorizing, none",
            .flowSucceeds: "send new → authorized, new",
            .flowFails: "refuse cannotAuthenticate → idle, none",
            .flowFailsForgetting: "refuse cannotAuthenticate → idle, none",
            .staleFlowEnds: "nothing → authorizing, none",
            .dropFlow: "dropped flow 1 → idle, none",
            .forget: "forgot none → authorizing, none",
        ],
        .refusedOnce: [
            .request: "wait → authorizing, k1",
            .refusalOfCurrent: "wait → authorizing, k1",
            .refusalOfOlder: "wait → authorizing, k1",
            .flowSucceeds: "send new → authorized, new",
            .flowFails: "refuse cannotAuthenticate → needsRefresh, k1",
            .flowFailsForgetting: "refuse cannotAuthenticate → idle, none",
            .staleFlowEnds: "nothing → authorizing, k1",
            .dropFlow: "dropped flow 2 → needsRefresh, k1",
            .forget: "forgot k1 → authorizing, none",
        ],
    ]

    static func describe(_ arrival: Machine.Arrival) -> String {
        switch arrival {
        case .send(let grant): "send \(grant.credential)"
        case .wait: "wait"
        case .start(_, .obtain): "start obtain"
        case .start(_, .refresh(let old, .refused)): "start refresh \(old) refused"
        case .start(_, .refresh(let old, _)): "start refresh \(old) due"
        case .refuse(let refusal): "refuse \(refusal.code)"
        }
    }

    static func describe(_ answer: Machine.Answer?) -> String {
        switch answer {
        case nil: "nothing"
        case .send(let grant): "send \(grant.credential)"
        case .refuse(let refusal): "refuse \(refusal.code)"
        }
    }

    @Test(arguments: Start.allCases, Event.allCases)
    func transition(from start: Start, on event: Event) throws {
        var machine = start.machine()
        let response = HTTPResponse(request: HTTPRequest(host: "h"), status: .unauthorized)
        let outcome: String
        switch event {
        case .request:
            outcome = Self.describe(machine.requestArrived(at: Self.now))
        case .refusalOfCurrent:
            outcome = Self.describe(machine.requestArrived(refusing: machine.version, response: response, at: Self.now))
        case .refusalOfOlder:
            outcome = Self.describe(
                machine.requestArrived(refusing: machine.version &- 1, response: response, at: Self.now))
        case .flowSucceeds, .flowFails, .flowFailsForgetting, .staleFlowEnds:
            let id = machine.flow?.id ?? Machine.FlowID(rawValue: 99)
            let flow = event == .staleFlowEnds ? Machine.FlowID(rawValue: 99) : id
            let result: Result<String, any Error> =
                switch event {
                case .flowFails: .failure(CancellationError())
                case .flowFailsForgetting: .failure(CredentialFailure("rejected for good", forgetsCredential: true))
                default: .success("new")
                }
            outcome = Self.describe(machine.flowEnded(flow, with: result, at: Self.now))
        case .dropFlow:
            outcome = "dropped \(machine.dropFlow().map(\.description) ?? "none")"
        case .forget:
            outcome = "forgot \(machine.forget() ?? "none")"
        }
        let found = "\(outcome) → \(machine.situation(at: Self.now)), \(machine.credential ?? "none")"
        #expect(found == Self.table[start]?[event], "\(start) on \(event)")
    }

    @Test func everyChangeOfTheCredentialMakesANewVersion() {
        var machine = Start.usable.machine()
        let first = machine.version
        _ = machine.requestArrived(refusing: first, at: Self.now)
        #expect(machine.version > first)
        let refused = machine.version
        machine.finishFlow(with: "k2")
        #expect(machine.version > refused)
        let replaced = machine.version
        _ = machine.forget()
        #expect(machine.version > replaced)
    }

    /// Refusals of fresh credentials are limited; those older than the window no longer count.
    @Test func theRefusalLimitCountsRefusalsWithinItsWindow() {
        var machine = Start.usable.machine(limit: RefreshLimit(maximumRefreshes: 2, window: .seconds(60)))
        for second in [0.0, 10] {
            let arrival = machine.requestArrived(refusing: machine.version, at: Self.now + second)
            guard case .start = arrival else {
                Issue.record("refusal at \(second) s: \(Self.describe(arrival))")
                return
            }
            machine.finishFlow(with: "k")
        }
        let third = machine.requestArrived(refusing: machine.version, at: Self.now + 20)
        #expect(Self.describe(third) == "refuse cannotAuthenticate")
        #expect(machine.credential == "k", "a refusal past the limit keeps the credential: nothing replaces it")
        let response = HTTPResponse(request: HTTPRequest(host: "h"), status: .unauthorized)
        let later = machine.requestArrived(refusing: machine.version, response: response, at: Self.now + 61)
        #expect(Self.describe(later) == "start refresh k refused")
    }

    /// Without a limit (BasicAuth: each refusal is answered by a user), refusals never stop the loader.
    @Test func withoutALimitRefusalsAlwaysStartAFlow() {
        var machine = Start.usable.machine(limit: nil)
        for _ in 0..<50 {
            guard case .start = machine.requestArrived(refusing: machine.version, at: Self.now) else {
                Issue.record("a refusal did not start a flow")
                return
            }
            machine.finishFlow(with: "k")
        }
    }
}

extension CredentialStateMachine where Credential == String {
    /// Runs a flow to its end with `credential`: the running one, or one started for it (the current credential marked
    /// due, or none).
    fileprivate mutating func finishFlow(with credential: String) {
        var id = flow?.id
        if id == nil {
            setNeedsRefresh()
            if case .start(let started, _) = requestArrived(at: CredentialStateMachineTests.now) { id = started }
        }
        guard let id else {
            Issue.record("no flow to finish")
            return
        }
        _ = flowEnded(id, with: .success(credential), at: CredentialStateMachineTests.now)
    }
}

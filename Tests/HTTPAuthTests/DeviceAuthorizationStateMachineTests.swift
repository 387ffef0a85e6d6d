import HTTP
import HTTPTestSupport
import Testing

@testable import HTTPAuth

/// `DeviceAuthorizationStateMachine` as a table: every state the machine can be in, every event, and what comes out —
/// with no grant, server, clock or task around it. Times are seconds since the flow started.
@Suite(.noHang) struct DeviceAuthorizationStateMachineTests {
    typealias Machine = DeviceAuthorizationStateMachine

    /// The states, each reached from a fresh machine by events only: a code issued at 0 s, valid for 30 s, to be
    /// polled every 5 s; shown at 1 s; the first poll at 5 s.
    enum Start: String, CaseIterable, Sendable {
        case idle, requestingCode, showingCode, waiting, polling, finished

        var machine: Machine {
            var machine = Machine()
            let steps: [Machine.Event] =
                switch self {
                case .idle: []
                case .requestingCode: [.start]
                case .showingCode: [.start, .codeIssued(expiresIn: .seconds(30), interval: .seconds(5), at: .zero)]
                case .waiting:
                    [
                        .start, .codeIssued(expiresIn: .seconds(30), interval: .seconds(5), at: .zero),
                        .codeShown(at: .seconds(1)),
                    ]
                case .polling:
                    [
                        .start, .codeIssued(expiresIn: .seconds(30), interval: .seconds(5), at: .zero),
                        .codeShown(at: .seconds(1)), .timerFired(at: .seconds(5)),
                    ]
                case .finished: [.cancelled]
                }
            for step in steps { _ = machine.handle(step) }
            return machine
        }
    }

    enum Event: String, CaseIterable, Sendable {
        case start, codeIssued, codeIssuedWithoutInterval, codeIssuedWithZeroInterval, codeRequestFailed, codeShown
        case timerFiredEarly, timerFiredOnTime, timerFiredAtDeadline
        case authorizationPending, authorizationPendingNearDeadline, slowDown, unreachable
        case accessDenied, expiredToken, tokensIssued, tokenRequestFailed, cancelled

        var event: Machine.Event {
            switch self {
            case .start: .start
            case .codeIssued: .codeIssued(expiresIn: .seconds(600), interval: .seconds(2), at: .seconds(1))
            case .codeIssuedWithoutInterval: .codeIssued(expiresIn: .seconds(600), interval: nil, at: .seconds(1))
            case .codeIssuedWithZeroInterval: .codeIssued(expiresIn: .seconds(600), interval: .zero, at: .seconds(1))
            case .codeRequestFailed: .codeRequestFailed
            case .codeShown: .codeShown(at: .seconds(2))
            case .timerFiredEarly: .timerFired(at: .seconds(4))
            case .timerFiredOnTime: .timerFired(at: .seconds(5))
            case .timerFiredAtDeadline: .timerFired(at: .seconds(30))
            case .authorizationPending: .authorizationPending(at: .seconds(6))
            case .authorizationPendingNearDeadline: .authorizationPending(at: .seconds(26))
            case .slowDown: .slowDown(at: .seconds(6))
            case .unreachable: .unreachable(at: .seconds(6))
            case .accessDenied: .accessDenied
            case .expiredToken: .expiredToken
            case .tokensIssued: .tokensIssued
            case .tokenRequestFailed: .tokenRequestFailed
            case .cancelled: .cancelled
            }
        }
    }

    /// What happens, as text: the action, then the state the machine is in afterwards (a schedule as interval,
    /// deadline and next poll, in seconds).
    static let table: [Start: [Event: String]] = [
        .idle: [
            .start: "request code → requestingCode",
            .codeIssued: "none → idle",
            .codeIssuedWithoutInterval: "none → idle",
            .codeIssuedWithZeroInterval: "none → idle",
            .codeRequestFailed: "none → idle",
            .codeShown: "none → idle",
            .timerFiredEarly: "none → idle",
            .timerFiredOnTime: "none → idle",
            .timerFiredAtDeadline: "none → idle",
            .authorizationPending: "none → idle",
            .authorizationPendingNearDeadline: "none → idle",
            .slowDown: "none → idle",
            .unreachable: "none → idle",
            .accessDenied: "none → idle",
            .expiredToken: "none → idle",
            .tokensIssued: "none → idle",
            .tokenRequestFailed: "none → idle",
            .cancelled: "fail cancelled → finished",
        ],
        .requestingCode: [
            .start: "none → requestingCode",
            .codeIssued: "show code → showingCode(2/601/3)",
            .codeIssuedWithoutInterval: "show code → showingCode(5/601/6)",
            .codeIssuedWithZeroInterval: "show code → showingCode(5/601/6)",
            .codeRequestFailed: "fail requestFailed → finished",
            .codeShown: "none → requestingCode",
            .timerFiredEarly: "none → requestingCode",
            .timerFiredOnTime: "none → requestingCode",
            .timerFiredAtDeadline: "none → requestingCode",
            .authorizationPending: "none → requestingCode",
            .authorizationPendingNearDeadline: "none → requestingCode",
            .slowDown: "none → requestingCode",
            .unreachable: "none → requestingCode",
            .accessDenied: "none → requestingCode",
            .expiredToken: "none → requestingCode",
            .tokensIssued: "none → requestingCode",
            .tokenRequestFailed: "none → requestingCode",
            .cancelled: "fail cancelled → finished",
        ],
        .showingCode: [
            .start: "none → showingCode(5/30/5)",
            .codeIssued: "none → showingCode(5/30/5)",
            .codeIssuedWithoutInterval: "none → showingCode(5/30/5)",
            .codeIssuedWithZeroInterval: "none → showingCode(5/30/5)",
            .codeRequestFailed: "none → showingCode(5/30/5)",
            .codeShown: "sleep until 5 → waiting(5/30/5)",
            .timerFiredEarly: "none → showingCode(5/30/5)",
            .timerFiredOnTime: "none → showingCode(5/30/5)",
            .timerFiredAtDeadline: "none → showingCode(5/30/5)",
            .authorizationPending: "none → showingCode(5/30/5)",
            .authorizationPendingNearDeadline: "none → showingCode(5/30/5)",
            .slowDown: "none → showingCode(5/30/5)",
            .unreachable: "none → showingCode(5/30/5)",
            .accessDenied: "none → showingCode(5/30/5)",
            .expiredToken: "none → showingCode(5/30/5)",
            .tokensIssued: "none → showingCode(5/30/5)",
            .tokenRequestFailed: "none → showingCode(5/30/5)",
            .cancelled: "fail cancelled → finished",
        ],
        .waiting: [
            .start: "none → waiting(5/30/5)",
            .codeIssued: "none → waiting(5/30/5)",
            .codeIssuedWithoutInterval: "none → waiting(5/30/5)",
            .codeIssuedWithZeroInterval: "none → waiting(5/30/5)",
            .codeRequestFailed: "none → waiting(5/30/5)",
            .codeShown: "none → waiting(5/30/5)",
            .timerFiredEarly: "sleep until 5 → waiting(5/30/5)",
            .timerFiredOnTime: "poll → polling(5/30/5)",
            .timerFiredAtDeadline: "fail expired → finished",
            .authorizationPending: "none → waiting(5/30/5)",
            .authorizationPendingNearDeadline: "none → waiting(5/30/5)",
            .slowDown: "none → waiting(5/30/5)",
            .unreachable: "none → waiting(5/30/5)",
            .accessDenied: "none → waiting(5/30/5)",
            .expiredToken: "none → waiting(5/30/5)",
            .tokensIssued: "none → waiting(5/30/5)",
            .tokenRequestFailed: "none → waiting(5/30/5)",
            .cancelled: "fail cancelled → finished",
        ],
        .polling: [
            .start: "none → polling(5/30/5)",
            .codeIssued: "none → polling(5/30/5)",
            .codeIssuedWithoutInterval: "none → polling(5/30/5)",
            .codeIssuedWithZeroInterval: "none → polling(5/30/5)",
            .codeRequestFailed: "none → polling(5/30/5)",
            .codeShown: "none → polling(5/30/5)",
            .timerFiredEarly: "none → polling(5/30/5)",
            .timerFiredOnTime: "none → polling(5/30/5)",
            .timerFiredAtDeadline: "none → polling(5/30/5)",
            .authorizationPending: "sleep until 11 → waiting(5/30/11)",
            .authorizationPendingNearDeadline: "fail expired → finished",
            .slowDown: "sleep until 16 → waiting(10/30/16)",
            .unreachable: "sleep until 16 → waiting(10/30/16)",
            .accessDenied: "fail denied → finished",
            .expiredToken: "fail expired → finished",
            .tokensIssued: "finish → finished",
            .tokenRequestFailed: "fail requestFailed → finished",
            .cancelled: "fail cancelled → finished",
        ],
        .finished: Dictionary(uniqueKeysWithValues: Event.allCases.map { ($0, "none → finished") }),
    ]

    static func seconds(_ duration: Duration) -> String {
        let value = duration.seconds
        return value == value.rounded() ? String(Int(value)) : String(value)
    }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .requestCode: "request code"
        case .showCode: "show code"
        case .sleep(let until): "sleep until \(seconds(until))"
        case .poll: "poll"
        case .finish: "finish"
        case .fail(let failure): "fail \(failure)"
        case .none: "none"
        }
    }

    static func describe(_ state: Machine.State) -> String {
        func schedule(_ s: Machine.Schedule) -> String {
            "\(seconds(s.interval))/\(seconds(s.deadline))/\(seconds(s.nextPoll))"
        }
        return switch state {
        case .idle: "idle"
        case .requestingCode: "requestingCode"
        case .showingCode(let s): "showingCode(\(schedule(s)))"
        case .waiting(let s): "waiting(\(schedule(s)))"
        case .polling(let s): "polling(\(schedule(s)))"
        case .finished: "finished"
        }
    }

    @Test func theTableCoversEveryStateAndEvent() {
        for start in Start.allCases {
            #expect(Set(Self.table[start]?.keys.map(\.self) ?? []) == Set(Event.allCases), "\(start)")
        }
    }

    @Test(arguments: Start.allCases, Event.allCases)
    func transition(from start: Start, on event: Event) {
        var machine = start.machine
        let action = machine.handle(event.event)
        #expect("\(Self.describe(action)) → \(Self.describe(machine.state))" == Self.table[start]?[event])
    }

    @Test func slowDownRaisesTheIntervalForEveryLaterPoll() {
        var machine = Start.polling.machine
        #expect(machine.handle(.slowDown(at: .seconds(5))) == .sleep(until: .seconds(15)))
        #expect(machine.handle(.timerFired(at: .seconds(15))) == .poll)
        #expect(machine.handle(.authorizationPending(at: .seconds(15))) == .sleep(until: .seconds(25)))
        #expect(machine.handle(.timerFired(at: .seconds(25))) == .poll)
        #expect(machine.handle(.slowDown(at: .seconds(25))) == .fail(.expired), "25 + 15 is past the deadline, 30")
    }

    /// Random runs of pending, slow_down and unreachable answers at random times: the machine never sleeps past the
    /// code's deadline, never polls at or after it, and always ends — expired at the latest.
    @Test func randomRunsNeverPollAfterTheDeadline() {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        for _ in 0..<500 {
            var machine = Machine()
            _ = machine.handle(.start)
            let expiresIn = Duration.seconds(Int.random(in: 1...120, using: &random))
            let interval = Duration.seconds(Int.random(in: 0...10, using: &random))
            _ = machine.handle(.codeIssued(expiresIn: expiresIn, interval: interval, at: .zero))
            var now = Duration.zero
            var action = machine.handle(.codeShown(at: now))
            var steps = 0
            while case .sleep(let until) = action {
                #expect(until < expiresIn, "seed \(seed)")
                now = max(now, until) + .milliseconds(Int.random(in: 0...300, using: &random))
                action = machine.handle(.timerFired(at: now))
                if action == .poll {
                    #expect(now < expiresIn, "seed \(seed)")
                    let answers: [Machine.Event] = [
                        .authorizationPending(at: now), .slowDown(at: now), .unreachable(at: now),
                    ]
                    action = machine.handle(answers[Int.random(in: 0..<answers.count, using: &random)])
                }
                steps += 1
                #expect(steps < 1_000, "seed \(seed)")
                if steps >= 1_000 { return }
            }
            #expect(action == .fail(.expired), "seed \(seed)")
            #expect(machine.state == .finished)
        }
    }
}

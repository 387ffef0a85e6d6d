import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// `BodyStreamStateMachine` as a table: the states a body stream can be in, every event, and what comes out — with no
/// lock, transport, file or task around it. The limit is 100 bytes; threads are A (the transport's), B (another
/// transport thread) and C (the consumer's).
@Suite(.noHang) struct BodyStreamStateMachineTests {
    typealias Machine = BodyStreamStateMachine

    final class A {}
    final class B {}
    final class C {}
    static let a = ObjectIdentifier(A.self)
    static let b = ObjectIdentifier(B.self)
    static let c = ObjectIdentifier(C.self)

    static func chunk(_ count: Int) -> Data { Data(repeating: 0x61, count: count) }

    /// The states, each reached from a fresh machine by events only.
    enum Start: String, CaseIterable, Sendable {
        /// Nothing connected, nothing received.
        case fresh
        /// A transport that can pause, nothing received.
        case connected
        /// A transport that cannot pause (the body spills to a file beyond the limit).
        case unpausable
        /// 60 bytes held, under the limit.
        case buffering
        /// 160 bytes held: A decided to pause and claimed the pause calls, but has not called yet.
        case pausing
        /// 120 bytes held: the transfer paused, and A told the transport.
        case paused
        /// C took 80 of them and decided to resume, then went on (maybe on another thread).
        case resumeDecided
        /// C, on the thread it went on, claimed the pause calls, but has not called yet.
        case resuming
        /// The consumer waits, nothing held.
        case waiting
        /// A transport that cannot pause: 120 bytes in memory, 10 more in the spill file.
        case spilling
        /// Complete, 60 bytes not taken.
        case completeUnread
        /// Complete and taken to the end.
        case complete
        /// Failed, 60 bytes not taken.
        case failedUnread
        /// Cancelled by the consumer.
        case cancelled

        var machine: Machine {
            var machine = Machine(bufferLimit: 100)
            let steps: [Machine.Event] =
                switch self {
                case .fresh: []
                case .connected: [.connect(pausable: true)]
                case .unpausable: [.connect(pausable: false)]
                case .buffering: [.connect(pausable: true), .deliver(chunk(60), caller: a)]
                case .pausing:
                    [.connect(pausable: true), .deliver(chunk(60), caller: a), .deliver(chunk(100), caller: a)]
                case .paused:
                    [
                        .connect(pausable: true), .deliver(chunk(40), caller: a), .deliver(chunk(40), caller: a),
                        .deliver(chunk(40), caller: a), .pauseCallDue(a), .pauseCallDue(a),
                    ]
                case .resumeDecided:
                    [
                        .connect(pausable: true), .deliver(chunk(40), caller: a), .deliver(chunk(40), caller: a),
                        .deliver(chunk(40), caller: a), .pauseCallDue(a), .pauseCallDue(a), .read, .read,
                    ]
                case .resuming:
                    [
                        .connect(pausable: true), .deliver(chunk(40), caller: a), .deliver(chunk(40), caller: a),
                        .deliver(chunk(40), caller: a), .pauseCallDue(a), .pauseCallDue(a), .read, .read,
                        .resumeDue(c),
                    ]
                case .waiting: [.connect(pausable: true), .read]
                case .spilling:
                    [
                        .connect(pausable: false), .deliver(chunk(60), caller: a), .deliver(chunk(60), caller: a),
                        .spillWritten(10, caller: a),
                    ]
                case .completeUnread: [.connect(pausable: true), .deliver(chunk(60), caller: a), .finish(nil)]
                case .complete:
                    [.connect(pausable: true), .deliver(chunk(60), caller: a), .finish(nil), .read, .read]
                case .failedUnread:
                    [
                        .connect(pausable: true), .deliver(chunk(60), caller: a),
                        .finish(BodyStreamStateMachineTests.failure),
                    ]
                case .cancelled:
                    [
                        .connect(pausable: true), .deliver(chunk(60), caller: a),
                        .cancel(BodyStreamStateMachineTests.cancellation),
                    ]
                }
            for step in steps { _ = machine.handle(step) }
            return machine
        }
    }

    static let request = HTTPRequest(host: "example.com")
    static let failure = HTTPError(.cannotConnect, request: request)
    static let cancellation = HTTPError(.cancelled, request: request)

    enum Event: String, CaseIterable, Sendable {
        case connectPausable, connectUnpausable
        case deliverSmall, deliverLarge, deliverLargeFromB, deliverLargeFromC, spillWritten
        case read, resumeDue, spillRead
        case finishComplete, finishFailed, finishCancelled, cancel
        case pauseCallDueForA, pauseCallDueForC

        var event: Machine.Event {
            switch self {
            case .connectPausable: .connect(pausable: true)
            case .connectUnpausable: .connect(pausable: false)
            case .deliverSmall: .deliver(chunk(10), caller: a)
            case .deliverLarge: .deliver(chunk(100), caller: a)
            case .deliverLargeFromB: .deliver(chunk(100), caller: b)
            case .deliverLargeFromC: .deliver(chunk(100), caller: c)
            case .spillWritten: .spillWritten(10, caller: a)
            case .read: .read
            case .resumeDue: .resumeDue(c)
            case .spillRead: .spillRead(10)
            case .finishComplete: .finish(nil)
            case .finishFailed: .finish(BodyStreamStateMachineTests.failure)
            case .finishCancelled: .finish(BodyStreamStateMachineTests.cancellation)
            case .cancel: .cancel(BodyStreamStateMachineTests.cancellation)
            case .pauseCallDueForA: .pauseCallDue(a)
            case .pauseCallDueForC: .pauseCallDue(c)
            }
        }
    }

    static func describe(_ caller: Machine.Caller?) -> String {
        switch caller {
        case a: "A"
        case b: "B"
        case c: "C"
        default: "-"
        }
    }

    static func describe(_ pause: Machine.PauseCall) -> String {
        switch pause {
        case .none: "none"
        case .call: "call"
        case .awaitCaller: "await"
        }
    }

    static func describe(_ end: HTTPError?) -> String { end.map { "\($0.code)" } ?? "complete" }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: "none"
        case .drop: "drop"
        case .writeSpill(let data): "write spill \(data.count)"
        case .stored(let wake, let pause): "stored\(wake ? " wake" : "") pause \(describe(pause))"
        case .chunk(let data, let resumes): "chunk \(data.count)\(resumes ? " resumes" : "")"
        case .pause(let pause): "pause \(describe(pause))"
        case .readSpill(let count): "read spill \(count)"
        case .end(let error): "end \(describe(error))"
        case .wait: "wait"
        case .removeSpill: "remove spill"
        case .cancelTransfer: "cancel transfer"
        case .finished(let wake, let removeSpill, let cancelTransfer):
            "finished" + (wake ? " wake" : "") + (removeSpill ? " remove-spill" : "")
                + (cancelTransfer ? " cancel-transfer" : "")
        case .callPause(let paused): "call pause(\(paused))"
        case .pauseCallsDone: "pause calls done"
        }
    }

    /// The state as text: how it ended (or open), bytes in memory and in the spill file, the pause decided and
    /// applied, the thread calling the pause closure, and the consumers waiting.
    static func describe(_ machine: Machine) -> String {
        let end = machine.end.map { describe($0) } ?? "open"
        return
            "\(end) mem \(machine.bufferedBytes) spill \(machine.spilledBytes) pause \(machine.isPauseDecided ? 1 : 0)/\(machine.isPauseApplied ? 1 : 0) by \(describe(machine.pauseCaller)) waiting \(machine.waitingConsumers)"
    }

    /// What happens, as text: the action, then the state the machine is in afterwards.
    static let table: [Start: [Event: String]] = [
        .fresh: [
            .connectPausable: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .connectUnpausable: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverSmall: "stored pause none → open mem 10 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .spillWritten: "stored pause none → open mem 0 spill 10 pause 0/0 by - waiting 0",
            .read: "wait → open mem 0 spill 0 pause 0/0 by - waiting 1",
            .resumeDue: "pause none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .spillRead: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "finished → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "finished → cannotConnect mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → open mem 0 spill 0 pause 0/0 by - waiting 0",
        ],
        .connected: [
            .connectPausable: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .connectUnpausable: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverSmall: "stored pause none → open mem 10 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .spillWritten: "stored pause none → open mem 0 spill 10 pause 0/0 by - waiting 0",
            .read: "wait → open mem 0 spill 0 pause 0/0 by - waiting 1",
            .resumeDue: "pause none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .spillRead: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "finished → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "finished → cannotConnect mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → open mem 0 spill 0 pause 0/0 by - waiting 0",
        ],
        .unpausable: [
            .connectPausable: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .connectUnpausable: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverSmall: "stored pause none → open mem 10 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "stored pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .spillWritten: "stored pause none → open mem 0 spill 10 pause 0/0 by - waiting 0",
            .read: "wait → open mem 0 spill 0 pause 0/0 by - waiting 1",
            .resumeDue: "pause none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .spillRead: "none → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "finished → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "finished → cannotConnect mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → open mem 0 spill 0 pause 0/0 by - waiting 0",
        ],
        .buffering: [
            .connectPausable: "none → open mem 60 spill 0 pause 0/0 by - waiting 0",
            .connectUnpausable: "none → open mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverSmall: "stored pause none → open mem 70 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "stored pause call → open mem 160 spill 0 pause 1/0 by A waiting 0",
            .deliverLargeFromB: "stored pause call → open mem 160 spill 0 pause 1/0 by B waiting 0",
            .deliverLargeFromC: "stored pause call → open mem 160 spill 0 pause 1/0 by C waiting 0",
            .spillWritten: "stored pause none → open mem 60 spill 10 pause 0/0 by - waiting 0",
            .read: "chunk 60 → open mem 0 spill 0 pause 0/0 by - waiting 0",
            .resumeDue: "pause none → open mem 60 spill 0 pause 0/0 by - waiting 0",
            .spillRead: "none → open mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "finished → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "finished → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 60 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → open mem 60 spill 0 pause 0/0 by - waiting 0",
        ],
        .pausing: [
            .connectPausable: "none → open mem 160 spill 0 pause 1/0 by A waiting 0",
            .connectUnpausable: "none → open mem 160 spill 0 pause 1/0 by A waiting 0",
            .deliverSmall: "stored pause none → open mem 170 spill 0 pause 1/0 by A waiting 0",
            .deliverLarge: "stored pause none → open mem 260 spill 0 pause 1/0 by A waiting 0",
            .deliverLargeFromB: "stored pause none → open mem 260 spill 0 pause 1/0 by A waiting 0",
            .deliverLargeFromC: "stored pause none → open mem 260 spill 0 pause 1/0 by A waiting 0",
            .spillWritten: "stored pause none → open mem 160 spill 10 pause 1/0 by A waiting 0",
            .read: "chunk 60 → open mem 100 spill 0 pause 1/0 by A waiting 0",
            .resumeDue: "pause none → open mem 160 spill 0 pause 1/0 by A waiting 0",
            .spillRead: "none → open mem 160 spill 0 pause 1/0 by A waiting 0",
            .finishComplete: "finished → complete mem 160 spill 0 pause 0/0 by A waiting 0",
            .finishFailed: "finished → cannotConnect mem 160 spill 0 pause 0/0 by A waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/0 by A waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/0 by A waiting 0",
            .pauseCallDueForA: "call pause(true) → open mem 160 spill 0 pause 1/1 by A waiting 0",
            .pauseCallDueForC: "pause calls done → open mem 160 spill 0 pause 1/0 by A waiting 0",
        ],
        .paused: [
            .connectPausable: "none → open mem 120 spill 0 pause 1/1 by - waiting 0",
            .connectUnpausable: "none → open mem 120 spill 0 pause 1/1 by - waiting 0",
            .deliverSmall: "stored pause none → open mem 130 spill 0 pause 1/1 by - waiting 0",
            .deliverLarge: "stored pause none → open mem 220 spill 0 pause 1/1 by - waiting 0",
            .deliverLargeFromB: "stored pause none → open mem 220 spill 0 pause 1/1 by - waiting 0",
            .deliverLargeFromC: "stored pause none → open mem 220 spill 0 pause 1/1 by - waiting 0",
            .spillWritten: "stored pause none → open mem 120 spill 10 pause 1/1 by - waiting 0",
            .read: "chunk 40 → open mem 80 spill 0 pause 1/1 by - waiting 0",
            .resumeDue: "pause none → open mem 120 spill 0 pause 1/1 by - waiting 0",
            .spillRead: "none → open mem 120 spill 0 pause 1/1 by - waiting 0",
            .finishComplete: "finished → complete mem 120 spill 0 pause 0/1 by - waiting 0",
            .finishFailed: "finished → cannotConnect mem 120 spill 0 pause 0/1 by - waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/1 by - waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/1 by - waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 120 spill 0 pause 1/1 by - waiting 0",
            .pauseCallDueForC: "pause calls done → open mem 120 spill 0 pause 1/1 by - waiting 0",
        ],
        .resumeDecided: [
            .connectPausable: "none → open mem 40 spill 0 pause 0/1 by - waiting 0",
            .connectUnpausable: "none → open mem 40 spill 0 pause 0/1 by - waiting 0",
            .deliverSmall: "stored pause none → open mem 50 spill 0 pause 0/1 by - waiting 0",
            .deliverLarge: "stored pause call → open mem 140 spill 0 pause 1/1 by A waiting 0",
            .deliverLargeFromB: "stored pause call → open mem 140 spill 0 pause 1/1 by B waiting 0",
            .deliverLargeFromC: "stored pause call → open mem 140 spill 0 pause 1/1 by C waiting 0",
            .spillWritten: "stored pause none → open mem 40 spill 10 pause 0/1 by - waiting 0",
            .read: "chunk 40 → open mem 0 spill 0 pause 0/1 by - waiting 0",
            .resumeDue: "pause call → open mem 40 spill 0 pause 0/1 by C waiting 0",
            .spillRead: "none → open mem 40 spill 0 pause 0/1 by - waiting 0",
            .finishComplete: "finished → complete mem 40 spill 0 pause 0/1 by - waiting 0",
            .finishFailed: "finished → cannotConnect mem 40 spill 0 pause 0/1 by - waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/1 by - waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/1 by - waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 40 spill 0 pause 0/1 by - waiting 0",
            .pauseCallDueForC: "pause calls done → open mem 40 spill 0 pause 0/1 by - waiting 0",
        ],
        .resuming: [
            .connectPausable: "none → open mem 40 spill 0 pause 0/1 by C waiting 0",
            .connectUnpausable: "none → open mem 40 spill 0 pause 0/1 by C waiting 0",
            .deliverSmall: "stored pause none → open mem 50 spill 0 pause 0/1 by C waiting 0",
            .deliverLarge: "stored pause await → open mem 140 spill 0 pause 1/1 by C waiting 0",
            .deliverLargeFromB: "stored pause await → open mem 140 spill 0 pause 1/1 by C waiting 0",
            .deliverLargeFromC: "stored pause call → open mem 140 spill 0 pause 1/1 by C waiting 0",
            .spillWritten: "stored pause none → open mem 40 spill 10 pause 0/1 by C waiting 0",
            .read: "chunk 40 → open mem 0 spill 0 pause 0/1 by C waiting 0",
            .resumeDue: "pause call → open mem 40 spill 0 pause 0/1 by C waiting 0",
            .spillRead: "none → open mem 40 spill 0 pause 0/1 by C waiting 0",
            .finishComplete: "finished → complete mem 40 spill 0 pause 0/1 by C waiting 0",
            .finishFailed: "finished → cannotConnect mem 40 spill 0 pause 0/1 by C waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/1 by C waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/1 by C waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 40 spill 0 pause 0/1 by C waiting 0",
            .pauseCallDueForC: "call pause(false) → open mem 40 spill 0 pause 0/0 by C waiting 0",
        ],
        .waiting: [
            .connectPausable: "none → open mem 0 spill 0 pause 0/0 by - waiting 1",
            .connectUnpausable: "none → open mem 0 spill 0 pause 0/0 by - waiting 1",
            .deliverSmall: "stored wake pause none → open mem 10 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "stored wake pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "stored wake pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "stored wake pause none → open mem 100 spill 0 pause 0/0 by - waiting 0",
            .spillWritten: "stored wake pause none → open mem 0 spill 10 pause 0/0 by - waiting 0",
            .read: "wait → open mem 0 spill 0 pause 0/0 by - waiting 2",
            .resumeDue: "pause none → open mem 0 spill 0 pause 0/0 by - waiting 1",
            .spillRead: "none → open mem 0 spill 0 pause 0/0 by - waiting 1",
            .finishComplete: "finished wake → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "finished wake → cannotConnect mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "finished wake remove-spill → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .cancel: "finished wake remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 0 spill 0 pause 0/0 by - waiting 1",
            .pauseCallDueForC: "pause calls done → open mem 0 spill 0 pause 0/0 by - waiting 1",
        ],
        .spilling: [
            .connectPausable: "none → open mem 120 spill 10 pause 0/0 by - waiting 0",
            .connectUnpausable: "none → open mem 120 spill 10 pause 0/0 by - waiting 0",
            .deliverSmall: "write spill 10 → open mem 120 spill 10 pause 0/0 by - waiting 0",
            .deliverLarge: "write spill 100 → open mem 120 spill 10 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "write spill 100 → open mem 120 spill 10 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "write spill 100 → open mem 120 spill 10 pause 0/0 by - waiting 0",
            .spillWritten: "stored pause none → open mem 120 spill 20 pause 0/0 by - waiting 0",
            .read: "chunk 60 → open mem 60 spill 10 pause 0/0 by - waiting 0",
            .resumeDue: "pause none → open mem 120 spill 10 pause 0/0 by - waiting 0",
            .spillRead: "remove spill → open mem 120 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "finished → complete mem 120 spill 10 pause 0/0 by - waiting 0",
            .finishFailed: "finished → cannotConnect mem 120 spill 10 pause 0/0 by - waiting 0",
            .finishCancelled: "finished remove-spill → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → open mem 120 spill 10 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → open mem 120 spill 10 pause 0/0 by - waiting 0",
        ],
        .completeUnread: [
            .connectPausable: "none → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .connectUnpausable: "none → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverSmall: "drop → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "drop → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "drop → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "drop → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .spillWritten: "none → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .read: "chunk 60 → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .resumeDue: "pause none → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .spillRead: "none → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "none → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "none → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "none → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .cancel: "finished remove-spill cancel-transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → complete mem 60 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → complete mem 60 spill 0 pause 0/0 by - waiting 0",
        ],
        .complete: [
            .connectPausable: "none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .connectUnpausable: "none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverSmall: "drop → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "drop → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "drop → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "drop → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .spillWritten: "none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .read: "end complete → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .resumeDue: "pause none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .spillRead: "none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .cancel: "none → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → complete mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → complete mem 0 spill 0 pause 0/0 by - waiting 0",
        ],
        .failedUnread: [
            .connectPausable: "none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .connectUnpausable: "none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverSmall: "drop → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "drop → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "drop → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "drop → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .spillWritten: "none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .read: "chunk 60 → cannotConnect mem 0 spill 0 pause 0/0 by - waiting 0",
            .resumeDue: "pause none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .spillRead: "none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .cancel: "none → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → cannotConnect mem 60 spill 0 pause 0/0 by - waiting 0",
        ],
        .cancelled: [
            .connectPausable: "cancel transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .connectUnpausable: "cancel transfer → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverSmall: "drop → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverLarge: "drop → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromB: "drop → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .deliverLargeFromC: "drop → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .spillWritten: "none → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .read: "end cancelled → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .resumeDue: "pause none → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .spillRead: "none → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishComplete: "none → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishFailed: "none → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .finishCancelled: "none → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .cancel: "none → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForA: "pause calls done → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
            .pauseCallDueForC: "pause calls done → cancelled mem 0 spill 0 pause 0/0 by - waiting 0",
        ],
    ]

    @Test func theTableCoversEveryStateAndEvent() {
        for start in Start.allCases {
            #expect(Set(Self.table[start]?.keys.map(\.self) ?? []) == Set(Event.allCases), "\(start)")
        }
    }

    @Test(arguments: Start.allCases, Event.allCases)
    func eachEventInEachState(start: Start, event: Event) {
        var machine = start.machine
        let action = machine.handle(event.event)
        #expect("\(Self.describe(action)) → \(Self.describe(machine))" == Self.table[start]?[event])
    }
}

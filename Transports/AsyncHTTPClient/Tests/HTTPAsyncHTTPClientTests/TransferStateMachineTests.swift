import Foundation
import HTTP
import NIOCore
import NIOHTTP1
import Testing

@testable import HTTPAsyncHTTPClient

/// `TransferStateMachine` as a table: the states a transfer through AsyncHTTPClient can be in, every event, and what
/// comes out — with no lock, client, event loop or continuation around it. Handles are names: the load's continuation
/// is "c", AsyncHTTPClient's task "t", the body writer "w", `onEnd` "e", the file "f", the promise "p", the stream "s"
/// (kept alive by the test) or "gone" (dropped by its consumer). Times are seconds after the start: a cancellation
/// at 1, the head at 2, the end at 3, the request sent at 4.
@Suite struct TransferStateMachineTests {
    final class TestStream: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    enum Handles: TransferHandles {
        typealias Continuation = String
        typealias Task = String
        typealias Stream = TestStream
        typealias File = String
        typealias Promise = String
        typealias Writer = String
        typealias OnEnd = String
    }

    typealias Machine = TransferStateMachine<Handles>

    /// The stream every state that delivered one keeps: its consumer holds it.
    static let stream = TestStream("s")
    static let start = ContinuousClock.now
    static func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }
    static let metrics = HTTPMetrics(startDate: Date(timeIntervalSince1970: 0), start: start)

    static func head(_ status: HTTPResponseStatus) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: status)
    }

    static func part(_ count: Int) -> ByteBuffer { ByteBuffer(repeating: 0x61, count: count) }

    /// The states, each reached from a fresh machine by events only.
    enum Start: String, CaseIterable, Sendable {
        /// Made; the load has not begun.
        case fresh
        /// Cancelled before the load began.
        case cancelledBeforeBegin
        /// The load waits; AsyncHTTPClient's task is not known yet.
        case begun
        /// The load waits; the task runs.
        case running
        /// The task runs, and a writer sends a streamed request body.
        case writing
        /// Buffered: the head (200) and 10 bytes have arrived.
        case receiving
        /// The load was cancelled; the task has not reported its end yet.
        case cancelledRunning
        /// Cancelled before the task was known: ended at once.
        case cancelledIdle
        /// Buffered, finished.
        case finished
        /// A stream's head went to the load; its consumer keeps the stream.
        case streaming
        /// A stream whose consumer dropped it.
        case streamDropped
        /// The stream's consumer is behind; a part was delivered and the driver makes a promise for the next one.
        case parking
        /// The next part waits on promise "p".
        case parked
        /// A download's head (200) arrived: the file is being opened.
        case fileOpening
        /// The download's file is open.
        case fileOpen

        var mode: Machine.Mode {
            switch self {
            case .streaming, .streamDropped, .parking, .parked: .stream
            case .fileOpening, .fileOpen: .file
            default: .buffered
            }
        }

        var machine: Machine {
            var machine = Machine(mode: mode)
            let begin = Machine.Event.begin("c", onEnd: "e", metrics: metrics, bridgeFailuresBefore: 0)
            let run: [Machine.Event] = [begin, .executing("t")]
            let streamHead = Machine.Event.head(head(.ok), stream: TransferStateMachineTests.stream, now: at(2))
            let steps: [Machine.Event] =
                switch self {
                case .fresh: []
                case .cancelledBeforeBegin: [.cancel(now: at(1))]
                case .begun: [begin]
                case .running: run
                case .writing: run + [.bodyWriter("w")]
                case .receiving: run + [.head(head(.ok), stream: nil, now: at(2)), .bodyPart(part(10))]
                case .cancelledRunning: run + [.cancel(now: at(1))]
                case .cancelledIdle: [begin, .cancel(now: at(1))]
                case .finished:
                    run + [
                        .head(head(.ok), stream: nil, now: at(2)), .bodyPart(part(10)),
                        .finish(failed: false, totalBytesToSend: nil, now: at(3)),
                    ]
                case .streaming: run + [streamHead]
                case .streamDropped: run + [.head(head(.ok), stream: TestStream("gone"), now: at(2))]
                case .parking: run + [streamHead, .pause(true), .bodyPart(part(10)), .delivered]
                case .parked: run + [streamHead, .pause(true), .bodyPart(part(10)), .delivered, .parked("p")]
                case .fileOpening: run + [.head(head(.ok), stream: nil, now: at(2))]
                case .fileOpen: run + [.head(head(.ok), stream: nil, now: at(2)), .fileOpened("f")]
                }
            for step in steps { _ = machine.handle(step) }
            return machine
        }
    }

    enum Event: String, CaseIterable, Sendable {
        case begin, executing, bodyWriter, cancel, requestPartSent, requestSent
        case head200, head206, head404, fileOpened, bodyPart, delivered, parked, pause, resume
        case finish, fail

        var event: Machine.Event {
            switch self {
            case .begin: .begin("c2", onEnd: "e2", metrics: metrics, bridgeFailuresBefore: 1)
            case .executing: .executing("t2")
            case .bodyWriter: .bodyWriter("w2")
            case .cancel: .cancel(now: at(1))
            case .requestPartSent: .requestPartSent(5)
            case .requestSent: .requestSent(now: at(4))
            case .head200: .head(head(.ok), stream: TransferStateMachineTests.stream, now: at(2))
            case .head206: .head(head(.partialContent), stream: TransferStateMachineTests.stream, now: at(2))
            case .head404: .head(head(.notFound), stream: TransferStateMachineTests.stream, now: at(2))
            case .fileOpened: .fileOpened("f2")
            case .bodyPart: .bodyPart(part(7))
            case .delivered: .delivered
            case .parked: .parked("p2")
            case .pause: .pause(true)
            case .resume: .pause(false)
            case .finish: .finish(failed: false, totalBytesToSend: 20, now: at(3))
            case .fail: .finish(failed: true, totalBytesToSend: 20, now: at(3))
            }
        }
    }

    static func describe(_ metrics: HTTPMetrics?) -> String {
        guard let metrics else { return "-" }
        let end = metrics.end - metrics.start
        let head = metrics.timeToResponseHead.map { "\($0.components.seconds)" } ?? "-"
        return
            "end \(end.components.seconds) head \(head) sent \(metrics.requestBodyBytesSent) received \(metrics.responseBodyBytesReceived)"
    }

    static func describe(_ head: HTTPResponseHead?) -> String { head.map { "\($0.status.code)" } ?? "-" }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: "none"
        case .execute: "execute"
        case .refuse(let continuation, let onEnd): "refuse \(continuation) \(onEnd)"
        case .cancelTask(let task): "cancel task \(task)"
        case .cancelWriter(let writer): "cancel writer \(writer)"
        case .closeFile(let file): "close file \(file)"
        case .cancel(let c):
            "cancel [c \(c.continuation ?? "-") metrics \(describe(c.metrics)) stream \(c.stream?.name ?? "-") "
                + "task \(c.task ?? "-") promise \(c.promise ?? "-") writer \(c.writer ?? "-") onEnd \(c.onEnd ?? "-")]"
        case .progress(let sent): "progress \(sent)"
        case .deliverHead(let continuation, let stream, let metrics):
            "deliver head \(continuation) stream \(stream.name) metrics \(describe(metrics))"
        case .openFile: "open file"
        case .proceed: "proceed"
        case .deliver(let stream): "deliver to \(stream.name)"
        case .write(let file): "write to \(file)"
        case .cancelTransfer: "cancel transfer"
        case .park: "park"
        case .wait: "wait"
        case .succeed(let promise): "succeed \(promise)"
        case .end(let e):
            "end [c \(e.continuation ?? "-") head \(describe(e.head)) body \(e.body?.readableBytes ?? 0) "
                + "stream \(e.stream?.name ?? "-") file \(e.file ?? "-") promise \(e.promise ?? "-") "
                + "metrics \(describe(e.metrics)) bridge \(e.bridgeFailuresBefore) writer \(e.writer ?? "-") "
                + "onEnd \(e.onEnd ?? "-")]"
        }
    }

    /// The state as text: the load, the execution, the parking, the pause, what arrived and what is held.
    static func describe(_ machine: Machine) -> String {
        let load =
            switch machine.load {
            case .notBegun: "not begun"
            case .waiting(let continuation): "waiting \(continuation)"
            case .completed: "completed"
            }
        let execution =
            switch machine.execution {
            case .idle: "idle"
            case .running(let task): "running \(task)"
            case .ended: "ended"
            }
        let parking =
            switch machine.parking {
            case .none: "-"
            case .making: "making"
            case .waiting(let promise): promise
            }
        return
            "\(load), \(execution), park \(parking)\(machine.isPaused ? " paused" : ""), head \(describe(machine.head)) "
            + "body \(machine.body?.readableBytes ?? 0) stream \(machine.stream?.name ?? "-") file \(machine.file ?? "-") "
            + "writer \(machine.writer ?? "-") onEnd \(machine.onEnd ?? "-") metrics \(describe(machine.metrics))"
    }

    /// What happens, as text: the action, then the state the machine is in afterwards.
    static let table: [Start: [Event: String]] = [
        .fresh: [
            .begin:
                "execute → waiting c2, idle, park -, head - body 0 stream - file - writer - onEnd e2 metrics end 0 head - sent 0 received 0",
            .executing:
                "none → not begun, running t2, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .bodyWriter: "none → not begun, idle, park -, head - body 0 stream - file - writer w2 onEnd - metrics -",
            .cancel:
                "cancel [c - metrics - stream - task - promise - writer - onEnd -] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .requestPartSent:
                "progress 0 → not begun, idle, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .requestSent: "none → not begun, idle, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .head200: "none → not begun, idle, park -, head 200 body 0 stream - file - writer - onEnd - metrics -",
            .head206: "none → not begun, idle, park -, head 206 body 0 stream - file - writer - onEnd - metrics -",
            .head404: "none → not begun, idle, park -, head 404 body 0 stream - file - writer - onEnd - metrics -",
            .fileOpened: "none → not begun, idle, park -, head - body 0 stream - file f2 writer - onEnd - metrics -",
            .bodyPart: "proceed → not begun, idle, park -, head - body 7 stream - file - writer - onEnd - metrics -",
            .delivered: "proceed → not begun, idle, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .parked: "succeed p2 → not begun, idle, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .pause: "none → not begun, idle, park - paused, head - body 0 stream - file - writer - onEnd - metrics -",
            .resume: "none → not begun, idle, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .finish:
                "end [c - head - body 0 stream - file - promise - metrics - bridge 0 writer - onEnd -] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c - head - body 0 stream - file - promise - metrics - bridge 0 writer - onEnd -] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .cancelledBeforeBegin: [
            .begin: "refuse c2 e2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .executing:
                "cancel task t2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .bodyWriter:
                "cancel writer w2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .cancel: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .requestPartSent:
                "progress 0 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .requestSent: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .head200: "none → completed, ended, park -, head 200 body 0 stream - file - writer - onEnd - metrics -",
            .head206: "none → completed, ended, park -, head 206 body 0 stream - file - writer - onEnd - metrics -",
            .head404: "none → completed, ended, park -, head 404 body 0 stream - file - writer - onEnd - metrics -",
            .fileOpened:
                "close file f2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .bodyPart: "proceed → completed, ended, park -, head - body 7 stream - file - writer - onEnd - metrics -",
            .delivered: "proceed → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .parked: "succeed p2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .pause: "none → completed, ended, park - paused, head - body 0 stream - file - writer - onEnd - metrics -",
            .resume: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .finish: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .begun: [
            .begin:
                "refuse c2 e2 → waiting c, idle, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .executing:
                "none → waiting c, running t2, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .bodyWriter:
                "none → waiting c, idle, park -, head - body 0 stream - file - writer w2 onEnd e metrics end 0 head - sent 0 received 0",
            .cancel:
                "cancel [c c metrics end 1 head - sent 0 received 0 stream - task - promise - writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .requestPartSent:
                "progress 5 → waiting c, idle, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 5 received 0",
            .requestSent:
                "none → waiting c, idle, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .head200:
                "none → waiting c, idle, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head206:
                "none → waiting c, idle, park -, head 206 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head404:
                "none → waiting c, idle, park -, head 404 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .fileOpened:
                "none → waiting c, idle, park -, head - body 0 stream - file f2 writer - onEnd e metrics end 0 head - sent 0 received 0",
            .bodyPart:
                "proceed → waiting c, idle, park -, head - body 7 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 7",
            .delivered:
                "proceed → waiting c, idle, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .parked:
                "succeed p2 → waiting c, idle, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .pause:
                "none → waiting c, idle, park - paused, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .resume:
                "none → waiting c, idle, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .finish:
                "end [c c head - body 0 stream - file - promise - metrics end 3 head - sent 20 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c c head - body 0 stream - file - promise - metrics end 3 head - sent 0 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .running: [
            .begin:
                "refuse c2 e2 → waiting c, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .executing:
                "cancel task t2 → waiting c, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .bodyWriter:
                "none → waiting c, running t, park -, head - body 0 stream - file - writer w2 onEnd e metrics end 0 head - sent 0 received 0",
            .cancel:
                "cancel [c c metrics end 1 head - sent 0 received 0 stream - task t promise - writer - onEnd -] → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .requestPartSent:
                "progress 5 → waiting c, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 5 received 0",
            .requestSent:
                "none → waiting c, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .head200:
                "none → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head206:
                "none → waiting c, running t, park -, head 206 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head404:
                "none → waiting c, running t, park -, head 404 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .fileOpened:
                "none → waiting c, running t, park -, head - body 0 stream - file f2 writer - onEnd e metrics end 0 head - sent 0 received 0",
            .bodyPart:
                "proceed → waiting c, running t, park -, head - body 7 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 7",
            .delivered:
                "proceed → waiting c, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .parked:
                "succeed p2 → waiting c, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .pause:
                "none → waiting c, running t, park - paused, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .resume:
                "none → waiting c, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 0 head - sent 0 received 0",
            .finish:
                "end [c c head - body 0 stream - file - promise - metrics end 3 head - sent 20 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c c head - body 0 stream - file - promise - metrics end 3 head - sent 0 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .writing: [
            .begin:
                "refuse c2 e2 → waiting c, running t, park -, head - body 0 stream - file - writer w onEnd e metrics end 0 head - sent 0 received 0",
            .executing:
                "cancel task t2 → waiting c, running t, park -, head - body 0 stream - file - writer w onEnd e metrics end 0 head - sent 0 received 0",
            .bodyWriter:
                "none → waiting c, running t, park -, head - body 0 stream - file - writer w2 onEnd e metrics end 0 head - sent 0 received 0",
            .cancel:
                "cancel [c c metrics end 1 head - sent 0 received 0 stream - task t promise - writer - onEnd -] → completed, running t, park -, head - body 0 stream - file - writer w onEnd e metrics end 1 head - sent 0 received 0",
            .requestPartSent:
                "progress 5 → waiting c, running t, park -, head - body 0 stream - file - writer w onEnd e metrics end 0 head - sent 5 received 0",
            .requestSent:
                "none → waiting c, running t, park -, head - body 0 stream - file - writer w onEnd e metrics end 0 head - sent 0 received 0",
            .head200:
                "none → waiting c, running t, park -, head 200 body 0 stream - file - writer w onEnd e metrics end 0 head 2 sent 0 received 0",
            .head206:
                "none → waiting c, running t, park -, head 206 body 0 stream - file - writer w onEnd e metrics end 0 head 2 sent 0 received 0",
            .head404:
                "none → waiting c, running t, park -, head 404 body 0 stream - file - writer w onEnd e metrics end 0 head 2 sent 0 received 0",
            .fileOpened:
                "none → waiting c, running t, park -, head - body 0 stream - file f2 writer w onEnd e metrics end 0 head - sent 0 received 0",
            .bodyPart:
                "proceed → waiting c, running t, park -, head - body 7 stream - file - writer w onEnd e metrics end 0 head - sent 0 received 7",
            .delivered:
                "proceed → waiting c, running t, park -, head - body 0 stream - file - writer w onEnd e metrics end 0 head - sent 0 received 0",
            .parked:
                "succeed p2 → waiting c, running t, park -, head - body 0 stream - file - writer w onEnd e metrics end 0 head - sent 0 received 0",
            .pause:
                "none → waiting c, running t, park - paused, head - body 0 stream - file - writer w onEnd e metrics end 0 head - sent 0 received 0",
            .resume:
                "none → waiting c, running t, park -, head - body 0 stream - file - writer w onEnd e metrics end 0 head - sent 0 received 0",
            .finish:
                "end [c c head - body 0 stream - file - promise - metrics end 3 head - sent 20 received 0 bridge 0 writer w onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c c head - body 0 stream - file - promise - metrics end 3 head - sent 0 received 0 bridge 0 writer w onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .receiving: [
            .begin:
                "refuse c2 e2 → waiting c, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .executing:
                "cancel task t2 → waiting c, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .bodyWriter:
                "none → waiting c, running t, park -, head 200 body 10 stream - file - writer w2 onEnd e metrics end 0 head 2 sent 0 received 10",
            .cancel:
                "cancel [c c metrics end 1 head 2 sent 0 received 10 stream - task t promise - writer - onEnd -] → completed, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 1 head 2 sent 0 received 10",
            .requestPartSent:
                "progress 5 → waiting c, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 5 received 10",
            .requestSent:
                "none → waiting c, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .head200:
                "none → waiting c, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .head206:
                "none → waiting c, running t, park -, head 206 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .head404:
                "none → waiting c, running t, park -, head 404 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .fileOpened:
                "none → waiting c, running t, park -, head 200 body 10 stream - file f2 writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .bodyPart:
                "proceed → waiting c, running t, park -, head 200 body 17 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 17",
            .delivered:
                "proceed → waiting c, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .parked:
                "succeed p2 → waiting c, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .pause:
                "none → waiting c, running t, park - paused, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .resume:
                "none → waiting c, running t, park -, head 200 body 10 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 10",
            .finish:
                "end [c c head 200 body 10 stream - file - promise - metrics end 3 head 2 sent 20 received 10 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c c head 200 body 10 stream - file - promise - metrics end 3 head 2 sent 0 received 10 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .cancelledRunning: [
            .begin:
                "refuse c2 e2 → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .executing:
                "cancel task t2 → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .bodyWriter:
                "none → completed, running t, park -, head - body 0 stream - file - writer w2 onEnd e metrics end 1 head - sent 0 received 0",
            .cancel:
                "cancel [c - metrics - stream - task t promise - writer - onEnd -] → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .requestPartSent:
                "progress 5 → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 5 received 0",
            .requestSent:
                "none → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .head200:
                "none → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 1 head 2 sent 0 received 0",
            .head206:
                "none → completed, running t, park -, head 206 body 0 stream - file - writer - onEnd e metrics end 1 head 2 sent 0 received 0",
            .head404:
                "none → completed, running t, park -, head 404 body 0 stream - file - writer - onEnd e metrics end 1 head 2 sent 0 received 0",
            .fileOpened:
                "none → completed, running t, park -, head - body 0 stream - file f2 writer - onEnd e metrics end 1 head - sent 0 received 0",
            .bodyPart:
                "proceed → completed, running t, park -, head - body 7 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 7",
            .delivered:
                "proceed → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .parked:
                "succeed p2 → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .pause:
                "none → completed, running t, park - paused, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .resume:
                "none → completed, running t, park -, head - body 0 stream - file - writer - onEnd e metrics end 1 head - sent 0 received 0",
            .finish:
                "end [c - head - body 0 stream - file - promise - metrics end 1 head - sent 20 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c - head - body 0 stream - file - promise - metrics end 1 head - sent 0 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .cancelledIdle: [
            .begin:
                "refuse c2 e2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .executing:
                "cancel task t2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .bodyWriter:
                "cancel writer w2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .cancel:
                "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .requestPartSent:
                "progress 5 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 5 received 0",
            .requestSent:
                "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .head200:
                "none → completed, ended, park -, head 200 body 0 stream - file - writer - onEnd - metrics end 1 head 2 sent 0 received 0",
            .head206:
                "none → completed, ended, park -, head 206 body 0 stream - file - writer - onEnd - metrics end 1 head 2 sent 0 received 0",
            .head404:
                "none → completed, ended, park -, head 404 body 0 stream - file - writer - onEnd - metrics end 1 head 2 sent 0 received 0",
            .fileOpened:
                "close file f2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .bodyPart:
                "proceed → completed, ended, park -, head - body 7 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 7",
            .delivered:
                "proceed → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .parked:
                "succeed p2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .pause:
                "none → completed, ended, park - paused, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .resume:
                "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .finish:
                "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
            .fail:
                "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics end 1 head - sent 0 received 0",
        ],
        .finished: [
            .begin: "refuse c2 e2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .executing:
                "cancel task t2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .bodyWriter:
                "cancel writer w2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .cancel: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .requestPartSent:
                "progress 0 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .requestSent: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .head200: "none → completed, ended, park -, head 200 body 0 stream - file - writer - onEnd - metrics -",
            .head206: "none → completed, ended, park -, head 206 body 0 stream - file - writer - onEnd - metrics -",
            .head404: "none → completed, ended, park -, head 404 body 0 stream - file - writer - onEnd - metrics -",
            .fileOpened:
                "close file f2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .bodyPart: "proceed → completed, ended, park -, head - body 7 stream - file - writer - onEnd - metrics -",
            .delivered: "proceed → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .parked: "succeed p2 → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .pause: "none → completed, ended, park - paused, head - body 0 stream - file - writer - onEnd - metrics -",
            .resume: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .finish: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail: "none → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .streaming: [
            .begin:
                "refuse c2 e2 → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .executing:
                "cancel task t2 → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .bodyWriter:
                "none → completed, running t, park -, head 200 body 0 stream s file - writer w2 onEnd e metrics end 2 head 2 sent 0 received 0",
            .cancel:
                "cancel [c - metrics - stream s task t promise - writer - onEnd -] → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .requestPartSent:
                "progress 5 → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 5 received 0",
            .requestSent:
                "none → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .head200:
                "none → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .head206:
                "none → completed, running t, park -, head 206 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .head404:
                "none → completed, running t, park -, head 404 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .fileOpened:
                "none → completed, running t, park -, head 200 body 0 stream s file f2 writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .bodyPart:
                "deliver to s → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 7",
            .delivered:
                "proceed → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .parked:
                "succeed p2 → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .pause:
                "none → completed, running t, park - paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .resume:
                "none → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .finish:
                "end [c - head 200 body 0 stream s file - promise - metrics end 2 head 2 sent 20 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream s file - writer - onEnd - metrics -",
            .fail:
                "end [c - head 200 body 0 stream s file - promise - metrics end 2 head 2 sent 0 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream s file - writer - onEnd - metrics -",
        ],
        .streamDropped: [
            .begin:
                "refuse c2 e2 → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .executing:
                "cancel task t2 → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .bodyWriter:
                "none → completed, running t, park -, head 200 body 0 stream - file - writer w2 onEnd e metrics end 2 head 2 sent 0 received 0",
            .cancel:
                "cancel [c - metrics - stream - task t promise - writer - onEnd -] → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .requestPartSent:
                "progress 5 → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 5 received 0",
            .requestSent:
                "none → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .head200:
                "none → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .head206:
                "none → completed, running t, park -, head 206 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .head404:
                "none → completed, running t, park -, head 404 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .fileOpened:
                "none → completed, running t, park -, head 200 body 0 stream - file f2 writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .bodyPart:
                "cancel transfer → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 7",
            .delivered:
                "proceed → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .parked:
                "succeed p2 → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .pause:
                "none → completed, running t, park - paused, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .resume:
                "none → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 2 head 2 sent 0 received 0",
            .finish:
                "end [c - head 200 body 0 stream - file - promise - metrics end 2 head 2 sent 20 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c - head 200 body 0 stream - file - promise - metrics end 2 head 2 sent 0 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .parking: [
            .begin:
                "refuse c2 e2 → completed, running t, park making paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .executing:
                "cancel task t2 → completed, running t, park making paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .bodyWriter:
                "none → completed, running t, park making paused, head 200 body 0 stream s file - writer w2 onEnd e metrics end 2 head 2 sent 0 received 10",
            .cancel:
                "cancel [c - metrics - stream s task t promise - writer - onEnd -] → completed, running t, park - paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .requestPartSent:
                "progress 5 → completed, running t, park making paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 5 received 10",
            .requestSent:
                "none → completed, running t, park making paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .head200:
                "none → completed, running t, park making paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .head206:
                "none → completed, running t, park making paused, head 206 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .head404:
                "none → completed, running t, park making paused, head 404 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .fileOpened:
                "none → completed, running t, park making paused, head 200 body 0 stream s file f2 writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .bodyPart:
                "deliver to s → completed, running t, park making paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 17",
            .delivered:
                "proceed → completed, running t, park making paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .parked:
                "wait → completed, running t, park p2 paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .pause:
                "none → completed, running t, park making paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .resume:
                "none → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .finish:
                "end [c - head 200 body 0 stream s file - promise - metrics end 2 head 2 sent 20 received 10 bridge 0 writer - onEnd e] → completed, ended, park - paused, head - body 0 stream s file - writer - onEnd - metrics -",
            .fail:
                "end [c - head 200 body 0 stream s file - promise - metrics end 2 head 2 sent 0 received 10 bridge 0 writer - onEnd e] → completed, ended, park - paused, head - body 0 stream s file - writer - onEnd - metrics -",
        ],
        .parked: [
            .begin:
                "refuse c2 e2 → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .executing:
                "cancel task t2 → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .bodyWriter:
                "none → completed, running t, park p paused, head 200 body 0 stream s file - writer w2 onEnd e metrics end 2 head 2 sent 0 received 10",
            .cancel:
                "cancel [c - metrics - stream s task t promise p writer - onEnd -] → completed, running t, park - paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .requestPartSent:
                "progress 5 → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 5 received 10",
            .requestSent:
                "none → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .head200:
                "none → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .head206:
                "none → completed, running t, park p paused, head 206 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .head404:
                "none → completed, running t, park p paused, head 404 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .fileOpened:
                "none → completed, running t, park p paused, head 200 body 0 stream s file f2 writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .bodyPart:
                "deliver to s → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 17",
            .delivered:
                "proceed → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .parked:
                "succeed p2 → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .pause:
                "none → completed, running t, park p paused, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .resume:
                "succeed p → completed, running t, park -, head 200 body 0 stream s file - writer - onEnd e metrics end 2 head 2 sent 0 received 10",
            .finish:
                "end [c - head 200 body 0 stream s file - promise p metrics end 2 head 2 sent 20 received 10 bridge 0 writer - onEnd e] → completed, ended, park - paused, head - body 0 stream s file - writer - onEnd - metrics -",
            .fail:
                "end [c - head 200 body 0 stream s file - promise p metrics end 2 head 2 sent 0 received 10 bridge 0 writer - onEnd e] → completed, ended, park - paused, head - body 0 stream s file - writer - onEnd - metrics -",
        ],
        .fileOpening: [
            .begin:
                "refuse c2 e2 → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .executing:
                "cancel task t2 → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .bodyWriter:
                "none → waiting c, running t, park -, head 200 body 0 stream - file - writer w2 onEnd e metrics end 0 head 2 sent 0 received 0",
            .cancel:
                "cancel [c c metrics end 1 head 2 sent 0 received 0 stream - task t promise - writer - onEnd -] → completed, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 1 head 2 sent 0 received 0",
            .requestPartSent:
                "progress 5 → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 5 received 0",
            .requestSent:
                "none → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head200:
                "open file → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head206:
                "open file → waiting c, running t, park -, head 206 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head404:
                "none → waiting c, running t, park -, head 404 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .fileOpened:
                "none → waiting c, running t, park -, head 200 body 0 stream - file f2 writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .bodyPart:
                "proceed → waiting c, running t, park -, head 200 body 7 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 7",
            .delivered:
                "proceed → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .parked:
                "succeed p2 → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .pause:
                "none → waiting c, running t, park - paused, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .resume:
                "none → waiting c, running t, park -, head 200 body 0 stream - file - writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .finish:
                "end [c c head 200 body 0 stream - file - promise - metrics end 3 head 2 sent 20 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c c head 200 body 0 stream - file - promise - metrics end 3 head 2 sent 0 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
        ],
        .fileOpen: [
            .begin:
                "refuse c2 e2 → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .executing:
                "cancel task t2 → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .bodyWriter:
                "none → waiting c, running t, park -, head 200 body 0 stream - file f writer w2 onEnd e metrics end 0 head 2 sent 0 received 0",
            .cancel:
                "cancel [c c metrics end 1 head 2 sent 0 received 0 stream - task t promise - writer - onEnd -] → completed, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 1 head 2 sent 0 received 0",
            .requestPartSent:
                "progress 5 → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 5 received 0",
            .requestSent:
                "none → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head200:
                "open file → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head206:
                "open file → waiting c, running t, park -, head 206 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .head404:
                "none → waiting c, running t, park -, head 404 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .fileOpened:
                "none → waiting c, running t, park -, head 200 body 0 stream - file f2 writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .bodyPart:
                "write to f → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 7",
            .delivered:
                "proceed → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .parked:
                "succeed p2 → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .pause:
                "none → waiting c, running t, park - paused, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .resume:
                "none → waiting c, running t, park -, head 200 body 0 stream - file f writer - onEnd e metrics end 0 head 2 sent 0 received 0",
            .finish:
                "end [c c head 200 body 0 stream - file f promise - metrics end 3 head 2 sent 20 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
            .fail:
                "end [c c head 200 body 0 stream - file f promise - metrics end 3 head 2 sent 0 received 0 bridge 0 writer - onEnd e] → completed, ended, park -, head - body 0 stream - file - writer - onEnd - metrics -",
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

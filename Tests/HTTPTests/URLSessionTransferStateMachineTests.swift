import HTTPTestSupport
import Testing

@_spi(Transport) @testable import HTTP

#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
#else
import Foundation
#endif

/// `URLSessionTransferStateMachine` as a table: the states a URLSession transfer can be in, every event, and what
/// comes out — with no session, task, continuation, timer or file around it. The machine holds names: the load
/// waits as `L`, the task is `T` with its deadline `D`, the stream `S`, the file `F`; events bring `L2`, `T2`, `D2`,
/// `S2` and `F2`. Times are seconds after `t0`: the task starts at 1, a head arrives at 2, bytes are sent at 3, a
/// cancel comes at 4, the deadline at 5 and URLSession's end at 6.
@Suite(.noHang) struct URLSessionTransferStateMachineTests {
    /// A named stand-in for the load's waiter, the task, its deadline or the download's file: the machine only holds
    /// it and hands it back, so nothing here is ever called.
    final class Fake: TransferWaiter, TransferTask, TransferTimer, TransferFile, CustomStringConvertible {
        let description: String
        init(_ name: String) { description = name }
        func complete(with outcome: TransferContext.Outcome) {}
        func cancel() {}
        func suspend() {}
        func resume() {}
        func write(_ data: Data) throws {}
        func close() throws {}
    }

    typealias Machine = URLSessionTransferStateMachine

    /// Whether `value` is the fake named `name`.
    static func isFake(_ value: Any?, named name: String) -> Bool { (value as? Fake)?.description == name }

    struct Failure: Error {}

    static let t0 = ContinuousClock.now
    static func at(_ seconds: Int) -> ContinuousClock.Instant { t0 + .seconds(seconds) }
    static let url = URL(string: "https://example.com/file")!
    static let stream = HTTPBodyStream(request: HTTPRequest(url: url))
    static let otherStream = HTTPBodyStream(request: HTTPRequest(url: url))

    /// The stream's name in the table: `S` for the one a state holds, `S2` for the one an event brings.
    static func name(_ stream: HTTPBodyStream) -> String {
        stream === Self.stream ? "S" : stream === otherStream ? "S2" : "another stream"
    }

    static func head(_ status: Int) -> HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])!
    }

    static func bytes(_ count: Int) -> Data { Data(repeating: 0x61, count: count) }

    /// The events a driver sends to start a task: the load waits, the task's end is watched, the transfer begins (its
    /// deadline set), the task starts.
    static var startSteps: [Machine.Event] {
        [
            .install(Fake("L")), .whenTaskEnds({}),
            .starting(HTTPMetrics(startDate: Date(), start: at(1)), timer: Fake("D")), .started(Fake("T")),
        ]
    }

    /// The states, each reached from a fresh machine by events only.
    enum Start: String, CaseIterable, Sendable {
        /// Buffered, nothing happened.
        case fresh
        /// Cancelled before the load waited.
        case cancelledFirst
        /// The load waits, no task yet.
        case installed
        /// The task runs; the load waits for the end.
        case running
        /// The head arrived and 10 bytes of the body.
        case bodyArriving
        /// A stream's task runs; the load waits for the head.
        case streamRunning
        /// A stream's head arrived before the task was handed over (`started`).
        case streamEarlyHead
        /// A stream's head was handed to the load; the consumer holds the stream.
        case streaming
        /// As `streaming`, but the consumer dropped the stream.
        case streamDropped
        /// A download's task runs.
        case fileRunning
        /// A download's `200` arrived and its file is open.
        case fileWriting
        /// Writing the download's file failed.
        case fileFailed
        /// A download's `404` arrived: its body is collected in memory.
        case fileOtherStatus
        /// Cancelled after the load waited, before the task started.
        case stoppedBeforeStart
        /// Cancelled while the task ran.
        case stopped
        /// Timed out while the task ran.
        case timedOut
        /// A stream cancelled after its head.
        case streamStopped
        /// A download cancelled while writing its file.
        case fileStopped
        /// URLSession reported the end.
        case finished
        /// Cancelled, then URLSession reported the end.
        case finishedAfterCancel
        /// A stream's body ended.
        case streamFinished

        var delivery: Machine.Delivery {
            switch self {
            case .streamRunning, .streamEarlyHead, .streaming, .streamDropped, .streamStopped, .streamFinished: .stream
            case .fileRunning, .fileWriting, .fileFailed, .fileOtherStatus, .fileStopped: .file
            default: .buffered
            }
        }

        var steps: [Machine.Event] {
            let start = URLSessionTransferStateMachineTests.startSteps
            let stream = URLSessionTransferStateMachineTests.stream
            let ok = head(200)
            let ended = Machine.Event.taskEnded(response: ok, error: nil, body: nil, at: at(6))
            return switch self {
            case .fresh: []
            case .cancelledFirst: [.cancel(at: at(4))]
            case .installed: [.install(Fake("L"))]
            case .running, .streamRunning, .fileRunning: start
            case .bodyArriving: start + [.headReceived(ok, stream: nil, at: at(2)), .received(bytes(10))]
            case .streamEarlyHead:
                [
                    .install(Fake("L")), .starting(HTTPMetrics(startDate: Date(), start: at(1)), timer: nil),
                    .headReceived(ok, stream: stream, at: at(2)),
                ]
            case .streaming: start + [.headReceived(ok, stream: stream, at: at(2))]
            case .streamDropped: start  // the head comes with a stream that is dropped, below
            case .fileWriting: start + [.headReceived(ok, stream: nil, at: at(2)), .fileOpened(Fake("F"))]
            case .fileFailed:
                start + [.headReceived(ok, stream: nil, at: at(2)), .fileOpened(Fake("F")), .fileFailed(Failure())]
            case .fileOtherStatus: start + [.headReceived(head(404), stream: nil, at: at(2)), .received(bytes(10))]
            case .stoppedBeforeStart: [.install(Fake("L")), .cancel(at: at(4))]
            case .stopped: start + [.cancel(at: at(4))]
            case .timedOut: start + [.timeOut(at: at(5))]
            case .streamStopped: start + [.headReceived(ok, stream: stream, at: at(2)), .cancel(at: at(4))]
            case .fileStopped:
                start + [.headReceived(ok, stream: nil, at: at(2)), .fileOpened(Fake("F")), .cancel(at: at(4))]
            case .finished: start + [.headReceived(ok, stream: nil, at: at(2)), .received(bytes(10)), ended]
            case .finishedAfterCancel: start + [.cancel(at: at(4)), ended]
            case .streamFinished: start + [.headReceived(ok, stream: stream, at: at(2)), ended]
            }
        }

        var machine: Machine {
            var machine = Machine(delivery: delivery, totalBytesToSend: 10)
            for step in steps { _ = machine.handle(step) }
            if self == .streamDropped {
                let dropped = HTTPBodyStream(request: HTTPRequest(url: url))
                _ = machine.handle(.headReceived(head(200), stream: dropped, at: at(2)))
            }
            return machine
        }
    }

    enum Event: String, CaseIterable, Sendable {
        case install, whenTaskEnds, starting, started
        case head200, head206, head404, headNotHTTP
        case fileOpened, fileFailed, received, sentPart, sentAll
        case tlsRejected, challengeDeclined
        case cancel, timeOut
        case taskEnded, taskEndedWithBody, taskEndedFailed

        /// The event as the driver sends it for `delivery`: a stream comes with an HTTP head only for a stream.
        func event(for delivery: Machine.Delivery) -> Machine.Event {
            let stream = delivery == .stream ? URLSessionTransferStateMachineTests.otherStream : nil
            return switch self {
            case .install: .install(Fake("L2"))
            case .whenTaskEnds: .whenTaskEnds({})
            case .starting: .starting(HTTPMetrics(startDate: Date(), start: at(1)), timer: Fake("D2"))
            case .started: .started(Fake("T2"))
            case .head200: .headReceived(head(200), stream: stream, at: at(2))
            case .head206: .headReceived(head(206), stream: stream, at: at(2))
            case .head404: .headReceived(head(404), stream: stream, at: at(2))
            case .headNotHTTP:
                .headReceived(
                    URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil), stream: nil,
                    at: at(2))
            case .fileOpened: .fileOpened(Fake("F2"))
            case .fileFailed: .fileFailed(Failure())
            case .received: .received(bytes(10))
            case .sentPart: .sent(totalBytes: 4, expected: 10, at: at(3))
            case .sentAll: .sent(totalBytes: 10, expected: 10, at: at(3))
            case .tlsRejected: .tlsRejected(TLSRejection(message: "pin mismatch", underlyingError: nil))
            case .challengeDeclined: .challengeDeclined(head(401))
            case .cancel: .cancel(at: at(4))
            case .timeOut: .timeOut(at: at(5))
            case .taskEnded: .taskEnded(response: head(200), error: nil, body: nil, at: at(6))
            case .taskEndedWithBody: .taskEnded(response: head(200), error: nil, body: bytes(7), at: at(6))
            case .taskEndedFailed:
                .taskEnded(response: nil, error: URLError(.networkConnectionLost), body: nil, at: at(6))
            }
        }
    }

    static func seconds(_ instant: ContinuousClock.Instant) -> String {
        "\((instant - t0).components.seconds)"
    }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: "none"
        case .resumeCancelled(let waiter): "resume \(waiter) cancelled"
        case .runTaskEnd: "run on-end"
        case .cancelStarted(let task): "cancel \(task)"
        case .cancelTimer(let timer): "cancel \(timer)"
        case .resumeStreaming(let waiter, let head, let stream, let task):
            "resume \(waiter) with \(head.statusCode) \(name(stream)) pause \(task.map { "\($0)" } ?? "-")"
        case .openFile(let head): "open file for \(head.statusCode)"
        case .closeFile(let file): "close \(file)"
        case .cancelTask(let task): "cancel \(task)"
        case .deliver(let stream, let data): "deliver \(data.count) to \(name(stream))"
        case .write(let file, let data): "write \(data.count) to \(file)"
        case .stop(let stop):
            "stop \(stop.reason):"
                + [
                    stop.waiter.map { "resume \($0)" }, stop.task.map { "cancel \($0)" },
                    stop.timer.map { "cancel \($0)" }, stop.stream.map { "end \(name($0))" },
                    stop.metrics.map { "at \(seconds($0.end))" },
                ].compactMap { $0 }.map { " " + $0 }.joined(separator: ",")
        case .end(let end):
            "end:"
                + [
                    end.waiter.map { "resume \($0)" }, "body \(end.body.count)",
                    end.error.map { "\(($0 as? URLError)?.code.rawValue ?? 0)" }.map { "error \($0)" },
                    end.declinedChallenge.map { "declined \($0.statusCode)" }, end.stream.map { "end \(name($0))" },
                    end.file.map { "close \($0)" }, end.fileError.map { _ in "file failed" },
                    end.timer.map { "cancel \($0)" }, end.onTaskEnd.map { _ in "run on-end" },
                ].compactMap { $0 }.map { " " + $0 }.joined(separator: ",")
        }
    }

    /// The state as text: the phase, the task and timer, the stream, the file, what it recorded, and the metrics (bytes
    /// in and out, times in seconds after `t0`).
    static func describe(_ machine: Machine) -> String {
        var parts: [String] =
            switch machine.phase {
            case .idle: ["idle"]
            case .waiting(let waiter): ["waiting \(waiter)"]
            case .streaming: ["streaming"]
            case .stopped: ["stopped"]
            case .finished: ["finished"]
            }
        if let task = machine.task { parts.append("\(task)") }
        if let timer = machine.timer { parts.append("\(timer)") }
        if let stream = machine.stream { parts.append(name(stream)) }
        if let file = machine.file { parts.append("\(file)") }
        if machine.fileError != nil { parts.append("file failed") }
        if !machine.body.isEmpty { parts.append("body \(machine.body.count)") }
        if machine.tlsRejection != nil { parts.append("tls rejected") }
        if let declined = machine.declinedChallenge { parts.append("declined \(declined.statusCode)") }
        if machine.onTaskEnd != nil { parts.append("on-end") }
        if let metrics = machine.metrics {
            var text = "in \(metrics.responseBodyBytesReceived) out \(metrics.requestBodyBytesSent)"
            if let sent = metrics.requestSent { text += " sent \(seconds(sent))" }
            if let head = metrics.responseHeadReceived { text += " head \(seconds(head))" }
            text += " end \(seconds(metrics.end))"
            parts.append(text)
        }
        return parts.joined(separator: ", ")
    }

    /// What happens, as text: the action, then the state the machine is in afterwards.
    static let table: [Start: [Event: String]] = [
        .fresh: [
            .install: "none → waiting L2",
            .whenTaskEnds: "none → idle, on-end",
            .starting: "none → idle, D2, in 0 out 0 end 1",
            .started: "none → idle, T2",
            .head200: "none → idle",
            .head206: "none → idle",
            .head404: "none → idle",
            .headNotHTTP: "none → idle",
            .fileOpened: "none → idle, F2",
            .fileFailed: "none → idle, file failed",
            .received: "none → idle, body 10",
            .sentPart: "none → idle",
            .sentAll: "none → idle",
            .tlsRejected: "none → idle, tls rejected",
            .challengeDeclined: "none → idle, declined 401",
            .cancel: "stop cancelled: → stopped",
            .timeOut: "stop timedOut: → stopped",
            .taskEnded: "end: body 0 → finished",
            .taskEndedWithBody: "end: body 7 → finished",
            .taskEndedFailed: "end: body 0, error -1005 → finished",
        ],
        .cancelledFirst: [
            .install: "resume L2 cancelled → stopped",
            .whenTaskEnds: "none → stopped, on-end",
            .starting: "cancel D2 → stopped",
            .started: "cancel T2 → stopped",
            .head200: "none → stopped",
            .head206: "none → stopped",
            .head404: "none → stopped",
            .headNotHTTP: "none → stopped",
            .fileOpened: "none → stopped, F2",
            .fileFailed: "none → stopped, file failed",
            .received: "none → stopped",
            .sentPart: "none → stopped",
            .sentAll: "none → stopped",
            .tlsRejected: "none → stopped, tls rejected",
            .challengeDeclined: "none → stopped, declined 401",
            .cancel: "none → stopped",
            .timeOut: "none → stopped",
            .taskEnded: "end: body 0 → finished",
            .taskEndedWithBody: "end: body 7 → finished",
            .taskEndedFailed: "end: body 0, error -1005 → finished",
        ],
        .installed: [
            .install: "resume L2 cancelled → waiting L",
            .whenTaskEnds: "none → waiting L, on-end",
            .starting: "none → waiting L, D2, in 0 out 0 end 1",
            .started: "none → waiting L, T2",
            .head200: "none → waiting L",
            .head206: "none → waiting L",
            .head404: "none → waiting L",
            .headNotHTTP: "none → waiting L",
            .fileOpened: "none → waiting L, F2",
            .fileFailed: "none → waiting L, file failed",
            .received: "none → waiting L, body 10",
            .sentPart: "none → waiting L",
            .sentAll: "none → waiting L",
            .tlsRejected: "none → waiting L, tls rejected",
            .challengeDeclined: "none → waiting L, declined 401",
            .cancel: "stop cancelled: resume L → stopped",
            .timeOut: "stop timedOut: resume L → stopped",
            .taskEnded: "end: resume L, body 0 → finished",
            .taskEndedWithBody: "end: resume L, body 7 → finished",
            .taskEndedFailed: "end: resume L, body 0, error -1005 → finished",
        ],
        .running: [
            .install: "resume L2 cancelled → waiting L, T, D, on-end, in 0 out 0 end 1",
            .whenTaskEnds: "none → waiting L, T, D, on-end, in 0 out 0 end 1",
            .starting: "cancel D2 → waiting L, T, D, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → waiting L, T, D, on-end, in 0 out 0 end 1",
            .head200: "none → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .head206: "none → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .head404: "none → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .headNotHTTP: "none → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .fileOpened: "none → waiting L, T, D, F2, on-end, in 0 out 0 end 1",
            .fileFailed: "cancel T → waiting L, T, D, file failed, on-end, in 0 out 0 end 1",
            .received: "none → waiting L, T, D, body 10, on-end, in 10 out 0 end 1",
            .sentPart: "none → waiting L, T, D, on-end, in 0 out 4 end 1",
            .sentAll: "none → waiting L, T, D, on-end, in 0 out 10 sent 3 end 1",
            .tlsRejected: "none → waiting L, T, D, tls rejected, on-end, in 0 out 0 end 1",
            .challengeDeclined: "none → waiting L, T, D, declined 401, on-end, in 0 out 0 end 1",
            .cancel: "stop cancelled: resume L, cancel T, cancel D, at 4 → stopped, on-end, in 0 out 0 end 4",
            .timeOut: "stop timedOut: resume L, cancel T, cancel D, at 5 → stopped, on-end, in 0 out 0 end 5",
            .taskEnded: "end: resume L, body 0, cancel D, run on-end → finished, in 0 out 10 end 6",
            .taskEndedWithBody: "end: resume L, body 7, cancel D, run on-end → finished, in 7 out 10 end 6",
            .taskEndedFailed: "end: resume L, body 0, error -1005, cancel D, run on-end → finished, in 0 out 0 end 6",
        ],
        .bodyArriving: [
            .install: "resume L2 cancelled → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .whenTaskEnds: "none → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .starting: "cancel D2 → waiting L, T, D, body 10, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .head200: "none → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .head206: "none → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .head404: "none → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .headNotHTTP: "none → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .fileOpened: "none → waiting L, T, D, F2, body 10, on-end, in 10 out 0 head 2 end 1",
            .fileFailed: "cancel T → waiting L, T, D, file failed, body 10, on-end, in 10 out 0 head 2 end 1",
            .received: "none → waiting L, T, D, body 20, on-end, in 20 out 0 head 2 end 1",
            .sentPart: "none → waiting L, T, D, body 10, on-end, in 10 out 4 head 2 end 1",
            .sentAll: "none → waiting L, T, D, body 10, on-end, in 10 out 10 sent 3 head 2 end 1",
            .tlsRejected: "none → waiting L, T, D, body 10, tls rejected, on-end, in 10 out 0 head 2 end 1",
            .challengeDeclined: "none → waiting L, T, D, body 10, declined 401, on-end, in 10 out 0 head 2 end 1",
            .cancel:
                "stop cancelled: resume L, cancel T, cancel D, at 4"
                + " → stopped, body 10, on-end, in 10 out 0 head 2 end 4",
            .timeOut:
                "stop timedOut: resume L, cancel T, cancel D, at 5"
                + " → stopped, body 10, on-end, in 10 out 0 head 2 end 5",
            .taskEnded: "end: resume L, body 10, cancel D, run on-end → finished, in 10 out 10 head 2 end 6",
            .taskEndedWithBody: "end: resume L, body 7, cancel D, run on-end → finished, in 7 out 10 head 2 end 6",
            .taskEndedFailed:
                "end: resume L, body 10, error -1005, cancel D, run on-end → finished, in 10 out 0 head 2 end 6",
        ],
        .streamRunning: [
            .install: "resume L2 cancelled → waiting L, T, D, on-end, in 0 out 0 end 1",
            .whenTaskEnds: "none → waiting L, T, D, on-end, in 0 out 0 end 1",
            .starting: "cancel D2 → waiting L, T, D, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → waiting L, T, D, on-end, in 0 out 0 end 1",
            .head200: "resume L with 200 S2 pause T → streaming, T, D, S2, on-end, in 0 out 0 head 2 end 1",
            .head206: "resume L with 206 S2 pause T → streaming, T, D, S2, on-end, in 0 out 0 head 2 end 1",
            .head404: "resume L with 404 S2 pause T → streaming, T, D, S2, on-end, in 0 out 0 head 2 end 1",
            .headNotHTTP: "none → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .fileOpened: "none → waiting L, T, D, F2, on-end, in 0 out 0 end 1",
            .fileFailed: "cancel T → waiting L, T, D, file failed, on-end, in 0 out 0 end 1",
            .received: "stop cancelled: resume L, cancel T, cancel D, at 1 → stopped, on-end, in 10 out 0 end 1",
            .sentPart: "none → waiting L, T, D, on-end, in 0 out 4 end 1",
            .sentAll: "none → waiting L, T, D, on-end, in 0 out 10 sent 3 end 1",
            .tlsRejected: "none → waiting L, T, D, tls rejected, on-end, in 0 out 0 end 1",
            .challengeDeclined: "none → waiting L, T, D, declined 401, on-end, in 0 out 0 end 1",
            .cancel: "stop cancelled: resume L, cancel T, cancel D, at 4 → stopped, on-end, in 0 out 0 end 4",
            .timeOut: "stop timedOut: resume L, cancel T, cancel D, at 5 → stopped, on-end, in 0 out 0 end 5",
            .taskEnded: "end: resume L, body 0, cancel D, run on-end → finished, in 0 out 10 end 6",
            .taskEndedWithBody: "end: resume L, body 7, cancel D, run on-end → finished, in 7 out 10 end 6",
            .taskEndedFailed: "end: resume L, body 0, error -1005, cancel D, run on-end → finished, in 0 out 0 end 6",
        ],
        .streamEarlyHead: [
            .install: "resume L2 cancelled → streaming, S, in 0 out 0 head 2 end 1",
            .whenTaskEnds: "none → streaming, S, on-end, in 0 out 0 head 2 end 1",
            .starting: "none → streaming, D2, S, in 0 out 0 end 1",
            .started: "none → streaming, T2, S, in 0 out 0 head 2 end 1",
            .head200: "none → streaming, S, in 0 out 0 head 2 end 1",
            .head206: "none → streaming, S, in 0 out 0 head 2 end 1",
            .head404: "none → streaming, S, in 0 out 0 head 2 end 1",
            .headNotHTTP: "none → streaming, S, in 0 out 0 head 2 end 1",
            .fileOpened: "none → streaming, S, F2, in 0 out 0 head 2 end 1",
            .fileFailed: "none → streaming, S, file failed, in 0 out 0 head 2 end 1",
            .received: "deliver 10 to S → streaming, S, in 10 out 0 head 2 end 1",
            .sentPart: "none → streaming, S, in 0 out 4 head 2 end 1",
            .sentAll: "none → streaming, S, in 0 out 10 sent 3 head 2 end 1",
            .tlsRejected: "none → streaming, S, tls rejected, in 0 out 0 head 2 end 1",
            .challengeDeclined: "none → streaming, S, declined 401, in 0 out 0 head 2 end 1",
            .cancel: "stop cancelled: end S, at 4 → stopped, in 0 out 0 head 2 end 4",
            .timeOut: "stop timedOut: end S, at 5 → stopped, in 0 out 0 head 2 end 5",
            .taskEnded: "end: body 0, end S → finished, in 0 out 10 head 2 end 6",
            .taskEndedWithBody: "end: body 7, end S → finished, in 7 out 10 head 2 end 6",
            .taskEndedFailed: "end: body 0, error -1005, end S → finished, in 0 out 0 head 2 end 6",
        ],
        .streaming: [
            .install: "resume L2 cancelled → streaming, T, D, S, on-end, in 0 out 0 head 2 end 1",
            .whenTaskEnds: "none → streaming, T, D, S, on-end, in 0 out 0 head 2 end 1",
            .starting: "cancel D2 → streaming, T, D, S, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → streaming, T, D, S, on-end, in 0 out 0 head 2 end 1",
            .head200: "none → streaming, T, D, S, on-end, in 0 out 0 head 2 end 1",
            .head206: "none → streaming, T, D, S, on-end, in 0 out 0 head 2 end 1",
            .head404: "none → streaming, T, D, S, on-end, in 0 out 0 head 2 end 1",
            .headNotHTTP: "none → streaming, T, D, S, on-end, in 0 out 0 head 2 end 1",
            .fileOpened: "none → streaming, T, D, S, F2, on-end, in 0 out 0 head 2 end 1",
            .fileFailed: "cancel T → streaming, T, D, S, file failed, on-end, in 0 out 0 head 2 end 1",
            .received: "deliver 10 to S → streaming, T, D, S, on-end, in 10 out 0 head 2 end 1",
            .sentPart: "none → streaming, T, D, S, on-end, in 0 out 4 head 2 end 1",
            .sentAll: "none → streaming, T, D, S, on-end, in 0 out 10 sent 3 head 2 end 1",
            .tlsRejected: "none → streaming, T, D, S, tls rejected, on-end, in 0 out 0 head 2 end 1",
            .challengeDeclined: "none → streaming, T, D, S, declined 401, on-end, in 0 out 0 head 2 end 1",
            .cancel: "stop cancelled: cancel T, cancel D, end S, at 4 → stopped, on-end, in 0 out 0 head 2 end 4",
            .timeOut: "stop timedOut: cancel T, cancel D, end S, at 5 → stopped, on-end, in 0 out 0 head 2 end 5",
            .taskEnded: "end: body 0, end S, cancel D, run on-end → finished, in 0 out 10 head 2 end 6",
            .taskEndedWithBody: "end: body 7, end S, cancel D, run on-end → finished, in 7 out 10 head 2 end 6",
            .taskEndedFailed:
                "end: body 0, error -1005, end S, cancel D, run on-end → finished, in 0 out 0 head 2 end 6",
        ],
        .streamDropped: [
            .install: "resume L2 cancelled → streaming, T, D, on-end, in 0 out 0 head 2 end 1",
            .whenTaskEnds: "none → streaming, T, D, on-end, in 0 out 0 head 2 end 1",
            .starting: "cancel D2 → streaming, T, D, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → streaming, T, D, on-end, in 0 out 0 head 2 end 1",
            .head200: "none → streaming, T, D, on-end, in 0 out 0 head 2 end 1",
            .head206: "none → streaming, T, D, on-end, in 0 out 0 head 2 end 1",
            .head404: "none → streaming, T, D, on-end, in 0 out 0 head 2 end 1",
            .headNotHTTP: "none → streaming, T, D, on-end, in 0 out 0 head 2 end 1",
            .fileOpened: "none → streaming, T, D, F2, on-end, in 0 out 0 head 2 end 1",
            .fileFailed: "cancel T → streaming, T, D, file failed, on-end, in 0 out 0 head 2 end 1",
            .received: "stop cancelled: cancel T, cancel D, at 1 → stopped, on-end, in 10 out 0 head 2 end 1",
            .sentPart: "none → streaming, T, D, on-end, in 0 out 4 head 2 end 1",
            .sentAll: "none → streaming, T, D, on-end, in 0 out 10 sent 3 head 2 end 1",
            .tlsRejected: "none → streaming, T, D, tls rejected, on-end, in 0 out 0 head 2 end 1",
            .challengeDeclined: "none → streaming, T, D, declined 401, on-end, in 0 out 0 head 2 end 1",
            .cancel: "stop cancelled: cancel T, cancel D, at 4 → stopped, on-end, in 0 out 0 head 2 end 4",
            .timeOut: "stop timedOut: cancel T, cancel D, at 5 → stopped, on-end, in 0 out 0 head 2 end 5",
            .taskEnded: "end: body 0, cancel D, run on-end → finished, in 0 out 10 head 2 end 6",
            .taskEndedWithBody: "end: body 7, cancel D, run on-end → finished, in 7 out 10 head 2 end 6",
            .taskEndedFailed: "end: body 0, error -1005, cancel D, run on-end → finished, in 0 out 0 head 2 end 6",
        ],
        .fileRunning: [
            .install: "resume L2 cancelled → waiting L, T, D, on-end, in 0 out 0 end 1",
            .whenTaskEnds: "none → waiting L, T, D, on-end, in 0 out 0 end 1",
            .starting: "cancel D2 → waiting L, T, D, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → waiting L, T, D, on-end, in 0 out 0 end 1",
            .head200: "open file for 200 → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .head206: "open file for 206 → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .head404: "none → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .headNotHTTP: "none → waiting L, T, D, on-end, in 0 out 0 head 2 end 1",
            .fileOpened: "none → waiting L, T, D, F2, on-end, in 0 out 0 end 1",
            .fileFailed: "cancel T → waiting L, T, D, file failed, on-end, in 0 out 0 end 1",
            .received: "none → waiting L, T, D, body 10, on-end, in 10 out 0 end 1",
            .sentPart: "none → waiting L, T, D, on-end, in 0 out 4 end 1",
            .sentAll: "none → waiting L, T, D, on-end, in 0 out 10 sent 3 end 1",
            .tlsRejected: "none → waiting L, T, D, tls rejected, on-end, in 0 out 0 end 1",
            .challengeDeclined: "none → waiting L, T, D, declined 401, on-end, in 0 out 0 end 1",
            .cancel: "stop cancelled: resume L, cancel T, cancel D, at 4 → stopped, on-end, in 0 out 0 end 4",
            .timeOut: "stop timedOut: resume L, cancel T, cancel D, at 5 → stopped, on-end, in 0 out 0 end 5",
            .taskEnded: "end: resume L, body 0, cancel D, run on-end → finished, in 0 out 10 end 6",
            .taskEndedWithBody: "end: resume L, body 7, cancel D, run on-end → finished, in 7 out 10 end 6",
            .taskEndedFailed: "end: resume L, body 0, error -1005, cancel D, run on-end → finished, in 0 out 0 end 6",
        ],
        .fileWriting: [
            .install: "resume L2 cancelled → waiting L, T, D, F, on-end, in 0 out 0 head 2 end 1",
            .whenTaskEnds: "none → waiting L, T, D, F, on-end, in 0 out 0 head 2 end 1",
            .starting: "cancel D2 → waiting L, T, D, F, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → waiting L, T, D, F, on-end, in 0 out 0 head 2 end 1",
            .head200: "none → waiting L, T, D, F, on-end, in 0 out 0 head 2 end 1",
            .head206: "none → waiting L, T, D, F, on-end, in 0 out 0 head 2 end 1",
            .head404: "none → waiting L, T, D, F, on-end, in 0 out 0 head 2 end 1",
            .headNotHTTP: "none → waiting L, T, D, F, on-end, in 0 out 0 head 2 end 1",
            .fileOpened: "close F2 → waiting L, T, D, F, on-end, in 0 out 0 head 2 end 1",
            .fileFailed: "cancel T → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .received: "write 10 to F → waiting L, T, D, F, on-end, in 10 out 0 head 2 end 1",
            .sentPart: "none → waiting L, T, D, F, on-end, in 0 out 4 head 2 end 1",
            .sentAll: "none → waiting L, T, D, F, on-end, in 0 out 10 sent 3 head 2 end 1",
            .tlsRejected: "none → waiting L, T, D, F, tls rejected, on-end, in 0 out 0 head 2 end 1",
            .challengeDeclined: "none → waiting L, T, D, F, declined 401, on-end, in 0 out 0 head 2 end 1",
            .cancel: "stop cancelled: resume L, cancel T, cancel D, at 4 → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .timeOut: "stop timedOut: resume L, cancel T, cancel D, at 5 → stopped, F, on-end, in 0 out 0 head 2 end 5",
            .taskEnded: "end: resume L, body 0, close F, cancel D, run on-end → finished, in 0 out 10 head 2 end 6",
            .taskEndedWithBody:
                "end: resume L, body 7, close F, cancel D, run on-end → finished, in 7 out 10 head 2 end 6",
            .taskEndedFailed:
                "end: resume L, body 0, error -1005, close F, cancel D, run on-end → finished, in 0 out 0 head 2 end 6",
        ],
        .fileFailed: [
            .install: "resume L2 cancelled → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .whenTaskEnds: "none → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .starting: "cancel D2 → waiting L, T, D, F, file failed, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .head200: "none → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .head206: "none → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .head404: "none → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .headNotHTTP: "none → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .fileOpened: "close F2 → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .fileFailed: "none → waiting L, T, D, F, file failed, on-end, in 0 out 0 head 2 end 1",
            .received: "none → waiting L, T, D, F, file failed, on-end, in 10 out 0 head 2 end 1",
            .sentPart: "none → waiting L, T, D, F, file failed, on-end, in 0 out 4 head 2 end 1",
            .sentAll: "none → waiting L, T, D, F, file failed, on-end, in 0 out 10 sent 3 head 2 end 1",
            .tlsRejected: "none → waiting L, T, D, F, file failed, tls rejected, on-end, in 0 out 0 head 2 end 1",
            .challengeDeclined: "none → waiting L, T, D, F, file failed, declined 401, on-end, in 0 out 0 head 2 end 1",
            .cancel:
                "stop cancelled: resume L, cancel T, cancel D, at 4"
                + " → stopped, F, file failed, on-end, in 0 out 0 head 2 end 4",
            .timeOut:
                "stop timedOut: resume L, cancel T, cancel D, at 5"
                + " → stopped, F, file failed, on-end, in 0 out 0 head 2 end 5",
            .taskEnded:
                "end: resume L, body 0, close F, file failed, cancel D, run on-end"
                + " → finished, file failed, in 0 out 10 head 2 end 6",
            .taskEndedWithBody:
                "end: resume L, body 7, close F, file failed, cancel D, run on-end"
                + " → finished, file failed, in 7 out 10 head 2 end 6",
            .taskEndedFailed:
                "end: resume L, body 0, error -1005, close F, file failed, cancel D, run on-end"
                + " → finished, file failed, in 0 out 0 head 2 end 6",
        ],
        .fileOtherStatus: [
            .install: "resume L2 cancelled → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .whenTaskEnds: "none → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .starting: "cancel D2 → waiting L, T, D, body 10, on-end, in 0 out 0 end 1",
            .started: "cancel T2 → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .head200: "open file for 200 → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .head206: "open file for 206 → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .head404: "none → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .headNotHTTP: "none → waiting L, T, D, body 10, on-end, in 10 out 0 head 2 end 1",
            .fileOpened: "none → waiting L, T, D, F2, body 10, on-end, in 10 out 0 head 2 end 1",
            .fileFailed: "cancel T → waiting L, T, D, file failed, body 10, on-end, in 10 out 0 head 2 end 1",
            .received: "none → waiting L, T, D, body 20, on-end, in 20 out 0 head 2 end 1",
            .sentPart: "none → waiting L, T, D, body 10, on-end, in 10 out 4 head 2 end 1",
            .sentAll: "none → waiting L, T, D, body 10, on-end, in 10 out 10 sent 3 head 2 end 1",
            .tlsRejected: "none → waiting L, T, D, body 10, tls rejected, on-end, in 10 out 0 head 2 end 1",
            .challengeDeclined: "none → waiting L, T, D, body 10, declined 401, on-end, in 10 out 0 head 2 end 1",
            .cancel:
                "stop cancelled: resume L, cancel T, cancel D, at 4"
                + " → stopped, body 10, on-end, in 10 out 0 head 2 end 4",
            .timeOut:
                "stop timedOut: resume L, cancel T, cancel D, at 5"
                + " → stopped, body 10, on-end, in 10 out 0 head 2 end 5",
            .taskEnded: "end: resume L, body 10, cancel D, run on-end → finished, in 10 out 10 head 2 end 6",
            .taskEndedWithBody: "end: resume L, body 7, cancel D, run on-end → finished, in 7 out 10 head 2 end 6",
            .taskEndedFailed:
                "end: resume L, body 10, error -1005, cancel D, run on-end → finished, in 10 out 0 head 2 end 6",
        ],
        .stoppedBeforeStart: [
            .install: "resume L2 cancelled → stopped",
            .whenTaskEnds: "none → stopped, on-end",
            .starting: "cancel D2 → stopped",
            .started: "cancel T2 → stopped",
            .head200: "none → stopped",
            .head206: "none → stopped",
            .head404: "none → stopped",
            .headNotHTTP: "none → stopped",
            .fileOpened: "none → stopped, F2",
            .fileFailed: "none → stopped, file failed",
            .received: "none → stopped",
            .sentPart: "none → stopped",
            .sentAll: "none → stopped",
            .tlsRejected: "none → stopped, tls rejected",
            .challengeDeclined: "none → stopped, declined 401",
            .cancel: "none → stopped",
            .timeOut: "none → stopped",
            .taskEnded: "end: body 0 → finished",
            .taskEndedWithBody: "end: body 7 → finished",
            .taskEndedFailed: "end: body 0, error -1005 → finished",
        ],
        .stopped: [
            .install: "resume L2 cancelled → stopped, on-end, in 0 out 0 end 4",
            .whenTaskEnds: "none → stopped, on-end, in 0 out 0 end 4",
            .starting: "cancel D2 → stopped, on-end, in 0 out 0 end 4",
            .started: "cancel T2 → stopped, on-end, in 0 out 0 end 4",
            .head200: "none → stopped, on-end, in 0 out 0 end 4",
            .head206: "none → stopped, on-end, in 0 out 0 end 4",
            .head404: "none → stopped, on-end, in 0 out 0 end 4",
            .headNotHTTP: "none → stopped, on-end, in 0 out 0 end 4",
            .fileOpened: "none → stopped, F2, on-end, in 0 out 0 end 4",
            .fileFailed: "none → stopped, file failed, on-end, in 0 out 0 end 4",
            .received: "none → stopped, on-end, in 0 out 0 end 4",
            .sentPart: "none → stopped, on-end, in 0 out 0 end 4",
            .sentAll: "none → stopped, on-end, in 0 out 0 end 4",
            .tlsRejected: "none → stopped, tls rejected, on-end, in 0 out 0 end 4",
            .challengeDeclined: "none → stopped, declined 401, on-end, in 0 out 0 end 4",
            .cancel: "none → stopped, on-end, in 0 out 0 end 4",
            .timeOut: "none → stopped, on-end, in 0 out 0 end 4",
            .taskEnded: "end: body 0, run on-end → finished, in 0 out 0 end 4",
            .taskEndedWithBody: "end: body 7, run on-end → finished, in 0 out 0 end 4",
            .taskEndedFailed: "end: body 0, error -1005, run on-end → finished, in 0 out 0 end 4",
        ],
        .timedOut: [
            .install: "resume L2 cancelled → stopped, on-end, in 0 out 0 end 5",
            .whenTaskEnds: "none → stopped, on-end, in 0 out 0 end 5",
            .starting: "cancel D2 → stopped, on-end, in 0 out 0 end 5",
            .started: "cancel T2 → stopped, on-end, in 0 out 0 end 5",
            .head200: "none → stopped, on-end, in 0 out 0 end 5",
            .head206: "none → stopped, on-end, in 0 out 0 end 5",
            .head404: "none → stopped, on-end, in 0 out 0 end 5",
            .headNotHTTP: "none → stopped, on-end, in 0 out 0 end 5",
            .fileOpened: "none → stopped, F2, on-end, in 0 out 0 end 5",
            .fileFailed: "none → stopped, file failed, on-end, in 0 out 0 end 5",
            .received: "none → stopped, on-end, in 0 out 0 end 5",
            .sentPart: "none → stopped, on-end, in 0 out 0 end 5",
            .sentAll: "none → stopped, on-end, in 0 out 0 end 5",
            .tlsRejected: "none → stopped, tls rejected, on-end, in 0 out 0 end 5",
            .challengeDeclined: "none → stopped, declined 401, on-end, in 0 out 0 end 5",
            .cancel: "none → stopped, on-end, in 0 out 0 end 5",
            .timeOut: "none → stopped, on-end, in 0 out 0 end 5",
            .taskEnded: "end: body 0, run on-end → finished, in 0 out 0 end 5",
            .taskEndedWithBody: "end: body 7, run on-end → finished, in 0 out 0 end 5",
            .taskEndedFailed: "end: body 0, error -1005, run on-end → finished, in 0 out 0 end 5",
        ],
        .streamStopped: [
            .install: "resume L2 cancelled → stopped, on-end, in 0 out 0 head 2 end 4",
            .whenTaskEnds: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .starting: "cancel D2 → stopped, on-end, in 0 out 0 head 2 end 4",
            .started: "cancel T2 → stopped, on-end, in 0 out 0 head 2 end 4",
            .head200: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .head206: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .head404: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .headNotHTTP: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .fileOpened: "none → stopped, F2, on-end, in 0 out 0 head 2 end 4",
            .fileFailed: "none → stopped, file failed, on-end, in 0 out 0 head 2 end 4",
            .received: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .sentPart: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .sentAll: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .tlsRejected: "none → stopped, tls rejected, on-end, in 0 out 0 head 2 end 4",
            .challengeDeclined: "none → stopped, declined 401, on-end, in 0 out 0 head 2 end 4",
            .cancel: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .timeOut: "none → stopped, on-end, in 0 out 0 head 2 end 4",
            .taskEnded: "end: body 0, run on-end → finished, in 0 out 0 head 2 end 4",
            .taskEndedWithBody: "end: body 7, run on-end → finished, in 0 out 0 head 2 end 4",
            .taskEndedFailed: "end: body 0, error -1005, run on-end → finished, in 0 out 0 head 2 end 4",
        ],
        .fileStopped: [
            .install: "resume L2 cancelled → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .whenTaskEnds: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .starting: "cancel D2 → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .started: "cancel T2 → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .head200: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .head206: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .head404: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .headNotHTTP: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .fileOpened: "close F2 → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .fileFailed: "none → stopped, F, file failed, on-end, in 0 out 0 head 2 end 4",
            .received: "write 10 to F → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .sentPart: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .sentAll: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .tlsRejected: "none → stopped, F, tls rejected, on-end, in 0 out 0 head 2 end 4",
            .challengeDeclined: "none → stopped, F, declined 401, on-end, in 0 out 0 head 2 end 4",
            .cancel: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .timeOut: "none → stopped, F, on-end, in 0 out 0 head 2 end 4",
            .taskEnded: "end: body 0, close F, run on-end → finished, in 0 out 0 head 2 end 4",
            .taskEndedWithBody: "end: body 7, close F, run on-end → finished, in 0 out 0 head 2 end 4",
            .taskEndedFailed: "end: body 0, error -1005, close F, run on-end → finished, in 0 out 0 head 2 end 4",
        ],
        .finished: [
            .install: "resume L2 cancelled → finished, in 10 out 10 head 2 end 6",
            .whenTaskEnds: "run on-end → finished, in 10 out 10 head 2 end 6",
            .starting: "cancel D2 → finished, in 10 out 10 head 2 end 6",
            .started: "cancel T2 → finished, in 10 out 10 head 2 end 6",
            .head200: "none → finished, in 10 out 10 head 2 end 6",
            .head206: "none → finished, in 10 out 10 head 2 end 6",
            .head404: "none → finished, in 10 out 10 head 2 end 6",
            .headNotHTTP: "none → finished, in 10 out 10 head 2 end 6",
            .fileOpened: "close F2 → finished, in 10 out 10 head 2 end 6",
            .fileFailed: "none → finished, in 10 out 10 head 2 end 6",
            .received: "none → finished, in 10 out 10 head 2 end 6",
            .sentPart: "none → finished, in 10 out 10 head 2 end 6",
            .sentAll: "none → finished, in 10 out 10 head 2 end 6",
            .tlsRejected: "none → finished, in 10 out 10 head 2 end 6",
            .challengeDeclined: "none → finished, in 10 out 10 head 2 end 6",
            .cancel: "none → finished, in 10 out 10 head 2 end 6",
            .timeOut: "none → finished, in 10 out 10 head 2 end 6",
            .taskEnded: "none → finished, in 10 out 10 head 2 end 6",
            .taskEndedWithBody: "none → finished, in 10 out 10 head 2 end 6",
            .taskEndedFailed: "none → finished, in 10 out 10 head 2 end 6",
        ],
        .finishedAfterCancel: [
            .install: "resume L2 cancelled → finished, in 0 out 0 end 4",
            .whenTaskEnds: "run on-end → finished, in 0 out 0 end 4",
            .starting: "cancel D2 → finished, in 0 out 0 end 4",
            .started: "cancel T2 → finished, in 0 out 0 end 4",
            .head200: "none → finished, in 0 out 0 end 4",
            .head206: "none → finished, in 0 out 0 end 4",
            .head404: "none → finished, in 0 out 0 end 4",
            .headNotHTTP: "none → finished, in 0 out 0 end 4",
            .fileOpened: "close F2 → finished, in 0 out 0 end 4",
            .fileFailed: "none → finished, in 0 out 0 end 4",
            .received: "none → finished, in 0 out 0 end 4",
            .sentPart: "none → finished, in 0 out 0 end 4",
            .sentAll: "none → finished, in 0 out 0 end 4",
            .tlsRejected: "none → finished, in 0 out 0 end 4",
            .challengeDeclined: "none → finished, in 0 out 0 end 4",
            .cancel: "none → finished, in 0 out 0 end 4",
            .timeOut: "none → finished, in 0 out 0 end 4",
            .taskEnded: "none → finished, in 0 out 0 end 4",
            .taskEndedWithBody: "none → finished, in 0 out 0 end 4",
            .taskEndedFailed: "none → finished, in 0 out 0 end 4",
        ],
        .streamFinished: [
            .install: "resume L2 cancelled → finished, in 0 out 10 head 2 end 6",
            .whenTaskEnds: "run on-end → finished, in 0 out 10 head 2 end 6",
            .starting: "cancel D2 → finished, in 0 out 10 head 2 end 6",
            .started: "cancel T2 → finished, in 0 out 10 head 2 end 6",
            .head200: "none → finished, in 0 out 10 head 2 end 6",
            .head206: "none → finished, in 0 out 10 head 2 end 6",
            .head404: "none → finished, in 0 out 10 head 2 end 6",
            .headNotHTTP: "none → finished, in 0 out 10 head 2 end 6",
            .fileOpened: "close F2 → finished, in 0 out 10 head 2 end 6",
            .fileFailed: "none → finished, in 0 out 10 head 2 end 6",
            .received: "none → finished, in 0 out 10 head 2 end 6",
            .sentPart: "none → finished, in 0 out 10 head 2 end 6",
            .sentAll: "none → finished, in 0 out 10 head 2 end 6",
            .tlsRejected: "none → finished, in 0 out 10 head 2 end 6",
            .challengeDeclined: "none → finished, in 0 out 10 head 2 end 6",
            .cancel: "none → finished, in 0 out 10 head 2 end 6",
            .timeOut: "none → finished, in 0 out 10 head 2 end 6",
            .taskEnded: "none → finished, in 0 out 10 head 2 end 6",
            .taskEndedWithBody: "none → finished, in 0 out 10 head 2 end 6",
            .taskEndedFailed: "none → finished, in 0 out 10 head 2 end 6",
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
        let action = machine.handle(event.event(for: start.delivery))
        #expect("\(Self.describe(action)) → \(Self.describe(machine))" == Self.table[start]?[event])
    }

    /// What a run handed out: how often the load's waiter was resumed, the deadline cancelled and the end-of-task
    /// closure run.
    struct Handouts {
        var waiter = 0
        var timer = 0
        var taskEnd = 0

        mutating func count(_ action: Machine.Action, waiter name: String, timer timerName: String) {
            switch action {
            case .resumeCancelled(let given): if isFake(given, named: name) { waiter += 1 }
            case .resumeStreaming(let given, _, _, _): if isFake(given, named: name) { waiter += 1 }
            case .runTaskEnd: taskEnd += 1
            case .cancelTimer(let given): if isFake(given, named: timerName) { timer += 1 }
            case .stop(let stop):
                if isFake(stop.waiter, named: name) { waiter += 1 }
                if isFake(stop.timer, named: timerName) { timer += 1 }
            case .end(let end):
                if isFake(end.waiter, named: name) { waiter += 1 }
                if isFake(end.timer, named: timerName) { timer += 1 }
                if end.onTaskEnd != nil { taskEnd += 1 }
            case .none, .cancelStarted, .openFile, .closeFile, .cancelTask, .deliver, .write: break
            }
        }
    }

    /// Random runs as a driver makes them: the load waits (or is cancelled first), the task starts once and its
    /// end-of-task closure is set once, any callbacks, cancels and deadlines in any order, and URLSession's end last
    /// (it always comes, also for a cancelled task). Every run resumes the load exactly once, cancels the deadline
    /// exactly once and runs the end-of-task closure exactly once.
    @Test func randomRunsCompleteTheLoadExactlyOnce() {
        let seed = SplitMix64.seed()
        print("randomRunsCompleteTheLoadExactlyOnce seed: \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let middle: [Event] = Event.allCases.filter {
            ![.install, .whenTaskEnds, .started, .taskEnded, .taskEndedWithBody, .taskEndedFailed].contains($0)
        }
        for run in 0..<2_000 {
            let delivery = [Machine.Delivery.buffered, .stream, .file].randomElement(using: &random)!
            var events: [Machine.Event] = [
                .install(Fake("L")), .starting(HTTPMetrics(startDate: Date(), start: Self.at(1)), timer: Fake("D")),
                .whenTaskEnds({}), .started(Fake("T")),
            ]
            for _ in 0..<Int.random(in: 0...8, using: &random) {
                let event = middle.randomElement(using: &random)!
                events.insert(event.event(for: delivery), at: Int.random(in: 0...events.count, using: &random))
            }
            events.append(.taskEnded(response: Self.head(200), error: nil, body: nil, at: Self.at(6)))
            // Late events after the end (a closure given late runs at once: the table shows it).
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let late = Event.allCases.filter { $0 != .whenTaskEnds }.randomElement(using: &random)!
                events.append(late.event(for: delivery))
            }
            var machine = Machine(delivery: delivery, totalBytesToSend: 10)
            var handouts = Handouts()
            for event in events {
                handouts.count(machine.handle(event), waiter: "L", timer: "D")
            }
            let order = events.map { "\($0)".prefix(while: { $0 != "(" }) }.joined(separator: " ")
            #expect(handouts.waiter == 1, "run \(run), \(delivery): \(order)")
            #expect(handouts.timer == 1, "run \(run), \(delivery): \(order)")
            #expect(handouts.taskEnd == 1, "run \(run), \(delivery): \(order)")
            #expect(machine.isFinished, "run \(run)")
        }
    }

    /// A stream whose consumer dropped it stops the transfer at the next chunk, once: later chunks are dropped.
    @Test func aDroppedStreamStopsTheTransferOnce() {
        var machine = Start.streamDropped.machine
        #expect(Self.describe(machine.handle(.received(Self.bytes(10)))) == "stop cancelled: cancel T, cancel D, at 1")
        #expect(Self.describe(machine.handle(.received(Self.bytes(10)))) == "none")
        #expect(Self.describe(machine.handle(.cancel(at: Self.at(4)))) == "none")
    }
}

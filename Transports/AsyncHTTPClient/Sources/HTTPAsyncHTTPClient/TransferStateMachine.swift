@_spi(Transport) import HTTP
import NIOCore
import NIOHTTP1

/// The things a transfer's driver hands to ``TransferStateMachine`` to keep, and gets back in its actions: the
/// machine never calls them. ``Transfer`` uses the real ones; the tests use plain values.
protocol TransferHandles {
    /// The load waiting for the transfer's outcome.
    associatedtype Continuation
    /// AsyncHTTPClient's task, to cancel.
    associatedtype Task
    /// The response body's stream; held weakly, so that the consumer dropping it is seen.
    associatedtype Stream: AnyObject
    /// The download's open file.
    associatedtype File
    /// What a body part waits on while the stream's consumer is behind.
    associatedtype Promise
    /// The task writing a streamed request body, to cancel when the transfer ends.
    associatedtype Writer
    /// What runs once when the transfer has ended.
    associatedtype OnEnd
}

/// The state of one request's transfer through AsyncHTTPClient, as a value: whether its load still waits (or has its
/// outcome, or was cancelled), whether AsyncHTTPClient's task is known, running or ended, and what has arrived of the
/// response. Events go in, actions come out; there is no lock, no I/O, no continuation resumed and no clock read in
/// here (events bring the time). ``Transfer`` holds the machine under its lock and performs the actions.
///
/// The rules it keeps:
/// - the load completes exactly once: with the response when AsyncHTTPClient finishes, at the head for a stream, as
///   cancelled when cancelled first (before it began, nothing is sent), or with the error;
/// - the transfer ends exactly once, when AsyncHTTPClient reports it finished or failed, or at the cancellation of a
///   transfer AsyncHTTPClient has no task for yet; its end cancels the request body's writer and runs `onEnd`;
/// - a task or a writer that turns up after the end is cancelled at once, a file opened after it is closed;
/// - while a stream's consumer is behind, the next body part waits for a promise, which a resume, a cancellation or
///   the end succeeds.
struct TransferStateMachine<Handles: TransferHandles> {
    typealias Continuation = Handles.Continuation
    typealias Task = Handles.Task
    typealias Stream = Handles.Stream
    typealias File = Handles.File
    typealias Promise = Handles.Promise
    typealias Writer = Handles.Writer
    typealias OnEnd = Handles.OnEnd

    /// What becomes of the response's body.
    enum Mode: Equatable {
        case buffered
        case stream
        case file
    }

    /// The load's side.
    enum Load {
        /// Made; the load has not handed over its continuation.
        case notBegun
        /// The load waits for its outcome.
        case waiting(Continuation)
        /// The load has its outcome (a response, a stream's head, an error or a cancellation).
        case completed
    }

    /// AsyncHTTPClient's side.
    enum Execution {
        /// No task yet: not handed to AsyncHTTPClient, or handed and its task not yet known.
        case idle
        case running(Task)
        /// Finished, failed or cancelled; nothing more happens.
        case ended
    }

    /// Whether a body part of a stream waits for the consumer.
    enum Parking {
        case none
        /// The driver is making the promise the part will wait on.
        case making
        case waiting(Promise)
    }

    enum Event {
        /// The load hands over its continuation and what runs when the transfer ends; the transfer starts now.
        case begin(Continuation, onEnd: OnEnd, metrics: HTTPMetrics, bridgeFailuresBefore: Int)
        /// AsyncHTTPClient made its task.
        case executing(Task)
        /// A task writes the streamed request body.
        case bodyWriter(Writer)
        /// The load is cancelled: by its task, a cancelling reset, a shutdown or the stream's consumer.
        case cancel(now: ContinuousClock.Instant)
        /// Bytes of the request body went out.
        case requestPartSent(Int)
        /// The whole request went out.
        case requestSent(now: ContinuousClock.Instant)
        /// The response's head arrived; for a stream, the stream the load gets.
        case head(HTTPResponseHead, stream: Stream?, now: ContinuousClock.Instant)
        /// The download's file is open, as ``Action/openFile`` asked.
        case fileOpened(File)
        /// A part of the response body arrived.
        case bodyPart(ByteBuffer)
        /// The driver delivered a part to the stream, as ``Action/deliver(to:)`` asked.
        case delivered
        /// The driver made the promise the part waits on, as ``Action/park`` asked.
        case parked(Promise)
        /// The stream's consumer fell behind (`true`) or caught up.
        case pause(Bool)
        /// AsyncHTTPClient reported the end: finished (`failed` false) or failed.
        case finish(failed: Bool, totalBytesToSend: Int64?, now: ContinuousClock.Instant)
    }

    /// What a cancellation hands out: complete the load as cancelled (with the metrics), end the stream as
    /// cancelled, cancel AsyncHTTPClient's task, let a waiting body part go, and, for a transfer AsyncHTTPClient has
    /// no task for, end it (cancel the writer, run `onEnd`).
    struct Cancellation {
        var continuation: Continuation?
        var metrics: HTTPMetrics?
        var stream: Stream?
        var task: Task?
        var promise: Promise?
        var writer: Writer?
        var onEnd: OnEnd?
    }

    /// What the end hands out: complete the load (unless it has its outcome) from the head, body, file and metrics,
    /// end the stream, close the file, let a waiting body part go, cancel the writer, run `onEnd`.
    struct Ending {
        var continuation: Continuation?
        var head: HTTPResponseHead?
        var body: ByteBuffer?
        var stream: Stream?
        var file: File?
        var promise: Promise?
        var metrics: HTTPMetrics?
        var bridgeFailuresBefore: Int
        var writer: Writer?
        var onEnd: OnEnd?
    }

    enum Action {
        case none
        /// Hand the request to AsyncHTTPClient.
        case execute
        /// Cancelled before it began: complete the load as cancelled and run `onEnd`; nothing is sent.
        case refuse(Continuation, onEnd: OnEnd)
        /// The transfer ended before its task turned up: cancel it.
        case cancelTask(Task)
        /// The transfer ended before its writer turned up: cancel it.
        case cancelWriter(Writer)
        /// The transfer ended before its file was opened: close it.
        case closeFile(File)
        case cancel(Cancellation)
        /// Report the request body's bytes sent so far.
        case progress(sent: Int64)
        /// Complete the load with the head and this stream (and the metrics).
        case deliverHead(Continuation, stream: Stream, metrics: HTTPMetrics?)
        /// Open the download's file for this head (a `200` or `206`), then send ``Event/fileOpened(_:)``.
        case openFile
        /// Ask AsyncHTTPClient for the next part.
        case proceed
        /// Deliver the part to this stream, then send ``Event/delivered``.
        case deliver(to: Stream)
        /// Write the part to the file; the next part waits for the write.
        case write(to: File)
        /// The stream's consumer dropped it: cancel the transfer (then proceed).
        case cancelTransfer
        /// Make a promise for the next part to wait on, and send ``Event/parked(_:)``.
        case park
        /// The next part waits on the promise just made.
        case wait
        /// Succeed this promise: the next part goes on.
        case succeed(Promise)
        case end(Ending)
    }

    let mode: Mode
    private(set) var load = Load.notBegun
    private(set) var execution = Execution.idle
    private(set) var parking = Parking.none
    private(set) var isPaused = false
    private(set) var metrics: HTTPMetrics?
    private(set) var head: HTTPResponseHead?
    private(set) var body: ByteBuffer?
    private weak var streamReference: Stream?
    private(set) var file: File?
    private(set) var writer: Writer?
    private(set) var onEnd: OnEnd?
    private var bridgeFailuresBefore = 0

    init(mode: Mode) {
        self.mode = mode
    }

    /// The stream the load got, while its consumer keeps it.
    var stream: Stream? { streamReference }

    var isCompleted: Bool {
        if case .completed = load { return true }
        return false
    }

    var isEnded: Bool {
        if case .ended = execution { return true }
        return false
    }

    mutating func handle(_ event: Event) -> Action {
        switch event {
        case .begin(let continuation, let onEnd, let metrics, let bridgeFailuresBefore):
            return begin(continuation, onEnd: onEnd, metrics: metrics, bridgeFailuresBefore: bridgeFailuresBefore)
        case .executing(let task):
            guard case .idle = execution else { return .cancelTask(task) }
            execution = .running(task)
            return .none
        case .bodyWriter(let writer):
            if isEnded { return .cancelWriter(writer) }
            self.writer = writer
            return .none
        case .cancel(let now):
            return cancel(now: now)
        case .requestPartSent(let count):
            guard metrics != nil else { return .progress(sent: 0) }
            metrics!.requestBodyBytesSent += Int64(count)
            return .progress(sent: metrics!.requestBodyBytesSent)
        case .requestSent(let now):
            metrics?.requestSent = now
            return .none
        case .head(let head, let stream, let now):
            return receive(head, stream: stream, now: now)
        case .fileOpened(let file):
            if isEnded { return .closeFile(file) }
            self.file = file
            return .none
        case .bodyPart(let buffer):
            return receive(buffer)
        case .delivered:
            guard isPaused, !isEnded, case .none = parking else { return .proceed }
            parking = .making
            return .park
        case .parked(let promise):
            guard case .making = parking else { return .succeed(promise) }
            parking = .waiting(promise)
            return .wait
        case .pause(let paused):
            isPaused = paused
            guard !paused else { return .none }
            return resumeParked()
        case .finish(let failed, let totalBytesToSend, let now):
            return finish(failed: failed, totalBytesToSend: totalBytesToSend, now: now)
        }
    }

    private mutating func begin(
        _ continuation: Continuation, onEnd: OnEnd, metrics: HTTPMetrics, bridgeFailuresBefore: Int
    ) -> Action {
        guard case .notBegun = load else { return .refuse(continuation, onEnd: onEnd) }
        load = .waiting(continuation)
        self.metrics = metrics
        self.onEnd = onEnd
        self.bridgeFailuresBefore = bridgeFailuresBefore
        return .execute
    }

    private mutating func cancel(now: ContinuousClock.Instant) -> Action {
        var cancellation = Cancellation()
        switch load {
        case .notBegun:
            break
        case .waiting(let continuation):
            if !isEnded { metrics?.end = now }
            cancellation.continuation = continuation
            cancellation.metrics = metrics
        case .completed:
            if isEnded { return .none }
        }
        load = .completed
        cancellation.stream = streamReference
        if case .waiting(let promise) = parking { cancellation.promise = promise }
        parking = .none
        switch execution {
        case .idle:
            // No task to cancel: the transfer ends here.
            execution = .ended
            cancellation.writer = writer.take()
            cancellation.onEnd = onEnd.take()
        case .running(let task):
            cancellation.task = task  // AsyncHTTPClient then reports the task failed, which ends the transfer
        case .ended:
            break
        }
        return .cancel(cancellation)
    }

    private mutating func receive(_ head: HTTPResponseHead, stream: Stream?, now: ContinuousClock.Instant) -> Action {
        self.head = head
        metrics?.responseHeadReceived = now
        switch mode {
        case .buffered:
            return .none
        case .stream:
            guard let stream, case .waiting(let continuation) = load else { return .none }
            load = .completed
            streamReference = stream
            metrics?.end = now  // a stream's load ends when its head arrives
            return .deliverHead(continuation, stream: stream, metrics: metrics)
        case .file:
            guard head.status == .ok || head.status == .partialContent, !isEnded else { return .none }
            return .openFile
        }
    }

    private mutating func receive(_ buffer: ByteBuffer) -> Action {
        let count = Int64(buffer.readableBytes)
        switch mode {
        case .buffered:
            collect(buffer)
            return .proceed
        case .stream:
            metrics?.responseBodyBytesReceived += count
            if let stream = streamReference { return .deliver(to: stream) }
            return isCompleted && !isEnded ? .cancelTransfer : .proceed
        case .file:
            guard let file else {
                collect(buffer)  // a status whose body is not written to the file
                return .proceed
            }
            metrics?.responseBodyBytesReceived += count
            return .write(to: file)
        }
    }

    /// Keeps `buffer` as part of the body, and counts it.
    private mutating func collect(_ buffer: ByteBuffer) {
        metrics?.responseBodyBytesReceived += Int64(buffer.readableBytes)
        if body == nil {
            body = buffer
        } else {
            var copy = buffer
            body!.writeBuffer(&copy)
        }
    }

    private mutating func resumeParked() -> Action {
        switch parking {
        case .none:
            return .none
        case .making:
            parking = .none  // the promise being made is succeeded as soon as it is handed over
            return .none
        case .waiting(let promise):
            parking = .none
            return .succeed(promise)
        }
    }

    private mutating func finish(failed: Bool, totalBytesToSend: Int64?, now: ContinuousClock.Instant) -> Action {
        guard !isEnded else { return .none }
        execution = .ended
        if metrics != nil {
            if !isCompleted { metrics!.end = now }
            if metrics!.requestBodyBytesSent == 0, !failed { metrics!.requestBodyBytesSent = totalBytesToSend ?? 0 }
        }
        var continuation: Continuation?
        if case .waiting(let waiting) = load { continuation = waiting }
        load = .completed
        var promise: Promise?
        if case .waiting(let waiting) = parking { promise = waiting }
        parking = .none
        return .end(
            Ending(
                continuation: continuation, head: head.take(), body: body.take(), stream: streamReference,
                file: file.take(), promise: promise, metrics: metrics.take(),
                bridgeFailuresBefore: bridgeFailuresBefore, writer: writer.take(), onEnd: onEnd.take()))
    }
}

// Safe to share when every handle is: the machine is a value holding only them, the response so far and metrics.
extension TransferStateMachine: Sendable
where
    Handles.Continuation: Sendable, Handles.Task: Sendable, Handles.Stream: Sendable, Handles.File: Sendable,
    Handles.Promise: Sendable, Handles.Writer: Sendable, Handles.OnEnd: Sendable
{}

extension TransferStateMachine.Mode: Sendable {}
extension TransferStateMachine.Load: Sendable where Handles.Continuation: Sendable {}
extension TransferStateMachine.Execution: Sendable where Handles.Task: Sendable {}
extension TransferStateMachine.Parking: Sendable where Handles.Promise: Sendable {}

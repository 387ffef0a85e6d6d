#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
#else
import Foundation
#endif

/// One URLSession transfer as a value: whether its load still waits, has the head of a stream, was stopped early
/// (cancelled or timed out) or has ended, and what it collected on the way — the task, the deadline, the body, the
/// file, the metrics. Events go in, actions come out; there is no lock, no I/O, no continuation call and no clock in
/// here (time comes with the events that record it). ``TransferContext`` holds the machine under its lock and
/// performs the actions — resuming the load, cancelling the task, delivering to the stream, writing the file —
/// after unlocking.
///
/// The rules it keeps:
/// - the load's waiter is handed out once: with the head of a stream, with the outcome URLSession reports, or when
///   the transfer is stopped (cancelled or timed out) before either; a waiter that arrives after the stop is handed
///   back at once, to resume as cancelled;
/// - a task that starts after the stop is cancelled as it starts, and so is a deadline set after it;
/// - a stream whose consumer has dropped it (or that never came, the head not being HTTP) stops the transfer as
///   cancelled when data arrives;
/// - a download's file is opened only for a `200` or `206` head while the load waits; once writing it failed, the
///   task is cancelled and what arrives later is dropped; the file is closed when URLSession reports the end;
/// - once stopped, the metrics stay as they were at the stop;
/// - URLSession's report of the end comes once and everything after it — a late callback, a second cancel, a timer
///   that fires late — changes nothing. A transfer stopped early still takes that report: it frees the session and
///   closes the file.
struct URLSessionTransferStateMachine {
    typealias Waiter = any TransferWaiter
    typealias Task = any TransferTask
    typealias Timer = any TransferTimer
    typealias Stream = HTTPBodyStream
    typealias File = any TransferFile
    typealias Instant = ContinuousClock.Instant

    /// What becomes of the response's body as it arrives.
    enum Delivery: Equatable {
        /// Collected in memory, handed over with the outcome.
        case buffered
        /// Delivered to a stream that the load returns with the head.
        case stream
        /// Written to a file (a `200` or `206`; another status's body is collected in memory).
        case file
    }

    /// Where the load is.
    enum Phase {
        /// No load waits yet.
        case idle
        /// The load waits for the outcome (a stream: for the head).
        case waiting(Waiter)
        /// The load returned with the head; the body goes to the stream.
        case streaming
        /// The load completed before URLSession reported the end (cancelled or timed out): URLSession's report is
        /// still to come, to free the session and close the file.
        case stopped
        /// URLSession reported the end: nothing changes any more.
        case finished
    }

    enum Event {
        /// The load waits for the outcome with this waiter.
        case install(Waiter)
        /// Run this once the task has ended.
        case whenTaskEnds(@Sendable () -> Void)
        /// The transfer begins: its metrics, started now, and the timer of its deadline, where the loader enforces
        /// one. It comes before the task is made, so that the deadline counts the wait for URLSession too.
        case starting(HTTPMetrics, timer: Timer?)
        /// The task was started (resumed).
        case started(Task)
        /// The response's head arrived; `stream` is the stream for it, made by the driver for a stream delivery and
        /// an HTTP head.
        case headReceived(URLResponse, stream: Stream?, at: Instant)
        /// The driver opened the download's file, as ``Action/openFile(_:)`` asked.
        case fileOpened(File)
        /// Opening or writing the download's file failed.
        case fileFailed(any Error)
        /// A chunk of the body arrived.
        case received(Data)
        /// Bytes of the request's body were sent.
        case sent(totalBytes: Int64, expected: Int64, at: Instant)
        /// URLSession's own metrics of the task (Apple platforms).
        case collected(URLSessionTaskMetrics)
        /// A TLS challenge was refused for this reason.
        case tlsRejected(TLSRejection)
        /// The authentication challenge of this `401` was declined (Linux: the task is cancelled, the `401` is the
        /// response).
        case challengeDeclined(HTTPURLResponse?)
        /// The load was cancelled (its task, a reset, the consumer of the stream).
        case cancel(at: Instant)
        /// The deadline passed.
        case timeOut(at: Instant)
        /// URLSession reported the end: the body handed over at once (a completion-handler task), or `nil` for the
        /// one collected from the delegate's callbacks.
        case taskEnded(response: URLResponse?, error: (any Error)?, body: Data?, at: Instant)
    }

    /// Why a transfer was stopped before URLSession reported its end.
    enum StopReason: Equatable {
        case cancelled
        case timedOut
    }

    /// What a stop hands over: the load's waiter (if it still waited), and what to cancel or end.
    struct Stop {
        var reason: StopReason
        /// Resume with the stop's outcome.
        var waiter: Waiter?
        var task: Task?
        var timer: Timer?
        /// End with the stop's error.
        var stream: Stream?
        /// The metrics up to the stop, for the error a timed-out stream ends with.
        var metrics: HTTPMetrics?
    }

    /// What URLSession's end hands over.
    struct End {
        /// Resume with the outcome: `nil` when the load has already completed (a stream, a stop).
        var waiter: Waiter?
        var response: URLResponse?
        var error: (any Error)?
        /// The body collected (or handed over).
        var body: Data
        var declinedChallenge: HTTPURLResponse?
        /// End with the outcome's error, if any.
        var stream: Stream?
        /// Close it; the download's outcome is the file when it closes without error.
        var file: File?
        var fileError: (any Error)?
        var timer: Timer?
        var onTaskEnd: (@Sendable () -> Void)?
    }

    enum Action {
        case none
        /// The waiter came after the transfer was stopped (or a second one came): resume it as cancelled.
        case resumeCancelled(Waiter)
        /// The task has already ended: run this now.
        case runTaskEnd(@Sendable () -> Void)
        /// The task started after the transfer was stopped or ended, or a second task: cancel it.
        case cancelStarted(Task)
        /// A deadline set after the transfer was stopped or ended, or a second one: cancel it.
        case cancelTimer(Timer)
        /// Connect `stream` to the task (its pause), and resume the waiter with the head and the stream.
        case resumeStreaming(Waiter, head: HTTPURLResponse, stream: Stream, task: Task?)
        /// Open the download's file for this head; send ``Event/fileOpened(_:)`` or ``Event/fileFailed(_:)``.
        case openFile(HTTPURLResponse)
        /// A file opened after the end, or a second one: close it.
        case closeFile(File)
        /// Cancel the task (the file failed); URLSession's end follows.
        case cancelTask(Task)
        /// Hand the chunk to the stream.
        case deliver(Stream, Data)
        /// Write the chunk to the file; send ``Event/fileFailed(_:)`` if that fails.
        case write(File, Data)
        /// Stop the transfer: cancel the timer, stop the progress, end the stream, cancel the task, resume the
        /// waiter.
        case stop(Stop)
        /// URLSession reported the end: free the session, cancel the timer, close the file, end the stream, resume
        /// the waiter.
        case end(End)
    }

    /// A reference that does not keep the stream alive: dropping it is how the consumer stops the transfer.
    private struct WeakStream {
        weak var value: Stream?
    }

    let delivery: Delivery
    /// The request body's length, when known: the bytes sent, if URLSession never reports them.
    let totalBytesToSend: Int64?
    private(set) var phase = Phase.idle
    private(set) var task: Task?
    private(set) var timer: Timer?
    private var weakStream = WeakStream()
    private(set) var file: File?
    private(set) var fileError: (any Error)?
    /// The body collected in memory: a buffered delivery's, or a download's whose status is not written to the file.
    private(set) var body = Data()
    private(set) var declinedChallenge: HTTPURLResponse?
    /// Why a TLS challenge was refused (Apple platforms), to fail the load with instead of "cancelled".
    private(set) var tlsRejection: TLSRejection?
    /// This attempt's timings and byte counts, from the task's start.
    private(set) var metrics: HTTPMetrics?
    private(set) var onTaskEnd: (@Sendable () -> Void)?
    /// The session delegate's registration of the task: stored for the driver, never decided on.
    var registration: (delegate: SessionDelegate, taskIdentifier: Int)?

    init(delivery: Delivery, totalBytesToSend: Int64?) {
        self.delivery = delivery
        self.totalBytesToSend = totalBytesToSend
    }

    /// The stream the body goes to, while its consumer holds it.
    var stream: Stream? { weakStream.value }

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    mutating func handle(_ event: Event) -> Action {
        if isFinished { return afterEnd(event) }
        guard case .stopped = phase else { return handleLive(event) }
        // Once stopped, the metrics stay those of the stop: the load's result (read when the load resumes, which
        // may be after URLSession's end) and a stream's error report the transfer up to the deadline or the cancel.
        let atStop = metrics
        defer { metrics = atStop }
        return handleLive(event)
    }

    private mutating func handleLive(_ event: Event) -> Action {
        switch event {
        case .install(let waiter):
            guard case .idle = phase else { return .resumeCancelled(waiter) }
            phase = .waiting(waiter)
            return .none

        case .whenTaskEnds(let body):
            onTaskEnd = body
            return .none

        case .starting(let started, let timer):
            metrics = started
            // A deadline set after the stop, or a second one, is cancelled at once.
            guard let timer else { return .none }
            if case .stopped = phase { return .cancelTimer(timer) }
            if self.timer != nil { return .cancelTimer(timer) }
            self.timer = timer
            return .none

        case .started(let task):
            // A task that starts after the stop, or a second one, is cancelled at once.
            if case .stopped = phase { return .cancelStarted(task) }
            if self.task != nil { return .cancelStarted(task) }
            self.task = task
            return .none

        case .headReceived(let response, let stream, let instant):
            metrics?.responseHeadReceived = instant
            return receivedHead(response as? HTTPURLResponse, stream: stream)

        case .fileOpened(let opened):
            if file != nil { return .closeFile(opened) }  // one file per transfer
            file = opened
            return .none

        case .fileFailed(let error):
            guard fileError == nil else { return .none }
            fileError = error
            if case .stopped = phase { return .none }
            return task.map(Action.cancelTask) ?? .none

        case .received(let data):
            metrics?.responseBodyBytesReceived += Int64(data.count)
            return received(data)

        case .sent(let totalBytes, let expected, let instant):
            metrics?.requestBodyBytesSent = totalBytes
            if totalBytes >= expected { metrics?.requestSent = instant }
            return .none

        case .collected(let taskMetrics):
            metrics?.record(taskMetrics)
            return .none

        case .tlsRejected(let rejection):
            tlsRejection = rejection
            return .none

        case .challengeDeclined(let response):
            declinedChallenge = response
            return .none

        case .cancel(let instant):
            return stop(.cancelled, at: instant)

        case .timeOut(let instant):
            return stop(.timedOut, at: instant)

        case .taskEnded(let response, let error, let handedOver, let instant):
            return taskEnded(response: response, error: error, body: handedOver, at: instant)
        }
    }

    /// After URLSession's end every event changes nothing; only what was handed over late is given back.
    private func afterEnd(_ event: Event) -> Action {
        switch event {
        case .install(let waiter): .resumeCancelled(waiter)
        case .whenTaskEnds(let body): .runTaskEnd(body)
        case .starting(_, let timer?): .cancelTimer(timer)
        case .started(let task): .cancelStarted(task)
        case .fileOpened(let file): .closeFile(file)
        case .starting, .headReceived, .fileFailed, .received, .sent, .collected, .tlsRejected, .challengeDeclined,
            .cancel, .timeOut, .taskEnded:
            .none
        }
    }

    private mutating func receivedHead(_ head: HTTPURLResponse?, stream: Stream?) -> Action {
        guard case .waiting(let waiter) = phase, let head else { return .none }
        switch delivery {
        case .buffered:
            return .none
        case .stream:
            guard let stream else { return .none }
            phase = .streaming
            weakStream.value = stream
            return .resumeStreaming(waiter, head: head, stream: stream, task: task)
        case .file:
            guard head.statusCode == 200 || head.statusCode == 206, file == nil, fileError == nil else { return .none }
            return .openFile(head)
        }
    }

    private mutating func received(_ data: Data) -> Action {
        switch (delivery, phase) {
        case (.buffered, .stopped):
            return .none  // the load has completed: nobody takes the body
        case (.buffered, _):
            body.append(data)
            return .none
        case (.stream, .stopped):
            return .none
        case (.stream, _):
            if let stream = weakStream.value { return .deliver(stream, data) }
            return stop(.cancelled, at: nil)  // the consumer dropped the stream, or never had one
        case (.file, _):
            if fileError != nil { return .none }
            if let file { return .write(file, data) }
            if case .stopped = phase { return .none }
            body.append(data)  // a status whose body is not written to the file
            return .none
        }
    }

    /// Stops the transfer before URLSession's end; `instant` is when, or `nil` to leave the metrics' end to the
    /// end URLSession reports.
    private mutating func stop(_ reason: StopReason, at instant: Instant?) -> Action {
        var waiter: Waiter?
        switch phase {
        case .idle, .streaming: break
        case .waiting(let waiting): waiter = waiting
        case .stopped, .finished: return .none
        }
        if let instant { metrics?.end = instant }
        phase = .stopped
        let stop = Stop(
            reason: reason, waiter: waiter, task: task, timer: timer, stream: weakStream.value, metrics: metrics)
        task = nil
        timer = nil
        weakStream.value = nil
        return .stop(stop)
    }

    private mutating func taskEnded(
        response: URLResponse?, error: (any Error)?, body handedOver: Data?, at instant: Instant
    )
        -> Action
    {
        if var metrics {
            metrics.end = instant
            if let handedOver { metrics.responseBodyBytesReceived = Int64(handedOver.count) }
            if metrics.requestBodyBytesSent == 0, error == nil { metrics.requestBodyBytesSent = totalBytesToSend ?? 0 }
            self.metrics = metrics
        }
        var waiter: Waiter?
        if case .waiting(let waiting) = phase { waiter = waiting }
        let end = End(
            waiter: waiter, response: response, error: error, body: handedOver ?? body,
            declinedChallenge: declinedChallenge, stream: weakStream.value, file: file, fileError: fileError,
            timer: timer, onTaskEnd: onTaskEnd)
        phase = .finished
        task = nil
        timer = nil
        weakStream.value = nil
        file = nil
        body = Data()
        onTaskEnd = nil
        return .end(end)
    }
}

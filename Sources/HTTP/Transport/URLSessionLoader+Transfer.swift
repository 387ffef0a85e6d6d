#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
#else
import Foundation
#endif

/// A request ready for URLSession: the `URLRequest` (with its body, when it is in memory or streams), or the file
/// to upload from.
struct PreparedRequest {
    var urlRequest: URLRequest
    /// A body that is one whole file: uploaded with `uploadTask(with:fromFile:)`, which sends its length.
    var uploadFile: URL?
    /// A body with an `AsyncSequence` in it, to collect into a temporary file and upload from there.
    var spool: HTTPBodySource?
    var bodyLength: Int64?
    /// The server-trust evaluator and client identity this request is sent with.
    var tls = TLSSettings()
}

/// One request on its way through URLSession: collects the body (or streams it, or writes it to a file) and
/// completes exactly once — with the result, or as cancelled.
///
/// The decisions are ``URLSessionTransferStateMachine``'s: each call from the load, the session delegate or the
/// deadline becomes one event, handled under the lock, and the action that comes back is performed after unlocking.
final class TransferContext: Sendable {
    /// How a transfer ended, as URLSession reported it, or its head arrived (a stream); mapped to an
    /// ``HTTPResult`` by ``result(of:)``.
    enum Outcome: @unchecked Sendable {  // Sendable: URLSession's values are not mutated after the handover
        case finished(
            response: URLResponse?, body: Data, error: (any Error)?, declinedChallenge: HTTPURLResponse?, file: URL?)
        case streaming(HTTPURLResponse, HTTPBodyStream)
        case cancelled
    }

    /// What becomes of the response's body as it arrives.
    enum Delivery: Equatable {
        case buffered
        case stream
        case file(URL, offset: Int64)
    }

    typealias Machine = URLSessionTransferStateMachine

    let request: HTTPRequest
    let delivery: Delivery
    let tls: TLSSettings
    private let progress: ProgressReporter?
    private let state: Locked<Machine>

    init(request: HTTPRequest, totalBytesToSend: Int64?, tls: TLSSettings = TLSSettings()) {
        self.request = request
        self.tls = tls
        let kind: Machine.Delivery
        switch request.responseDelivery {
        case .buffered:
            delivery = .buffered
            kind = .buffered
        case .stream:
            delivery = .stream
            kind = .stream
        case .file(let url, let offset):
            delivery = .file(url, offset: offset)
            kind = .file
        }
        state = Locked(Machine(delivery: kind, totalBytesToSend: totalBytesToSend))
        let offset: Int64 = if case .file(_, let offset) = delivery { offset } else { 0 }
        progress = ProgressReporter(request: request, totalBytesToSend: totalBytesToSend, alreadyReceived: offset)
    }

    /// Whether URLSession hands this transfer's data to the session delegate as it arrives, rather than all at once
    /// to a completion handler.
    var isDelegateDriven: Bool { delivery != .buffered || progress != nil }

    /// Hands `event` to the machine under the lock, and performs what it returns after unlocking.
    private func send(_ event: Machine.Event) {
        perform(state.withLock { $0.handle(event) })
    }

    /// Runs `body` once the task has ended (URLSession reported its completion): the session it ran in is free
    /// for another transfer then.
    func whenTaskEnds(_ body: @escaping @Sendable () -> Void) {
        send(.whenTaskEnds(body))
    }

    /// Stores the continuation; `false` (and the continuation already resumed) if the load was cancelled first.
    func install(_ continuation: CheckedContinuation<Outcome, Never>) -> Bool {
        let action = state.withLock { $0.handle(.install(continuation)) }
        perform(action)
        if case .resumeCancelled = action { return false }
        return true
    }

    /// The transfer begins, before its task is made: its metrics start now, and so does its deadline, where the
    /// loader enforces one — the wait for URLSession to make and start the task counts against the timeout.
    func begin() {
        let metrics = HTTPMetrics(startingNowFor: request)
        let timeout = Self.enforcesDeadline ? request.timeout : nil
        // The deadline is set under the lock, so that it reaches the machine before it can fire.
        perform(state.withLock { $0.handle(.starting(metrics, timer: timeout.map(startDeadline))) })
        request.emit(.attemptStarted)
    }

    /// Whether the transfer still waits for its task: `false` once it was stopped (cancelled, timed out), when
    /// making a task would only send a request nobody waits for.
    var awaitsTask: Bool {
        state.withLock { machine in
            guard case .waiting = machine.phase else { return false }
            return machine.task == nil
        }
    }

    /// Starts `task`, then makes it visible to ``cancel()``.
    ///
    /// The order matters on Linux: swift-corelibs-foundation can trap ("Trying to access a behaviour for a
    /// task that in not in the registry") when a task is cancelled before or while it is being resumed, so
    /// the task is resumed first and only then handed to a concurrent cancellation.
    func start(_ task: URLSessionTask) {
        task.resume()
        send(.started(task))
    }

    /// Cancels `task` away from the caller's thread. On Linux, `URLSessionTask.cancel()` waits synchronously for the
    /// work queue every session shares, the very thread the session delegate's callbacks run on: a cancel from a
    /// callback (a download's file failing, a stream dropped while its data arrives) would wait for itself forever,
    /// and one from a load's thread would hold that thread while the queue is busy (``URLSessionCalls``).
    private static func cancel(_ task: any TransferTask) {
        if URLSessionCalls.isolatesCalls {
            URLSessionCalls.shared.run { task.cancel() }
        } else {
            DispatchQueue.global().async { task.cancel() }
        }
    }

    /// Cancels the transfer: the load, if it has not returned, completes as cancelled; a stream ends as cancelled.
    func cancel() {
        send(.cancel(at: .now))
    }

    /// Whether the loader times requests out itself, at their ``HTTPRequest/timeout`` to the millisecond: on Linux,
    /// where swift-corelibs-foundation counts a request's `timeoutInterval` in whole seconds (the interval it is
    /// given is rounded up, so URLSession's own timer is only a backstop). On Apple platforms URLSession honours
    /// fractions of a second, and the interval means the longest wait between packets, so it is left to URLSession.
    static var enforcesDeadline: Bool {
        #if canImport(FoundationNetworking)
        true
        #else
        false
        #endif
    }

    /// A timer that times the transfer out `timeout` from now: the whole transfer, as swift-corelibs-foundation
    /// counts its own timeout — a stream's body included. At the deadline the load, if it has not returned, fails
    /// with ``HTTPError/Code/timedOut`` (through the same mapping as URLSession's own `URLError.timedOut`); a stream
    /// ends with that error, which carries the transfer's metrics up to then.
    private func startDeadline(after timeout: Duration) -> any TransferTimer {
        TransferDeadlines.shared.schedule(after: timeout) { [weak self] in self?.send(.timeOut(at: .now)) }
    }

    /// The session delegate this transfer's task is registered with, and the identifier it knows the task by.
    var registration: (delegate: SessionDelegate, taskIdentifier: Int)? {
        get { state.withLock { $0.registration } }
        set { state.withLock { $0.registration = newValue } }
    }

    // MARK: - From the session delegate

    /// The response's head arrived (delegate-driven tasks): a stream is handed to the load now; a download
    /// opens its file.
    func receivedHead(_ response: URLResponse) {
        let http = response as? HTTPURLResponse
        if let progress, let http {
            progress.receivedHead(
                status: http.statusCode, contentRange: http.value(forHTTPHeaderField: "Content-Range"),
                declaredLength: Self.bodyLength(of: http))
        }
        let instant = ContinuousClock.now
        if request.isObserved, let http {
            request.emit(
                .responseHeadReceived, result: .success(HTTPResponse(request: request, urlResponse: http, body: Data()))
            )
        }
        let stream = delivery == .stream && http != nil ? HTTPBodyStream(request: request) : nil
        send(.headReceived(response, stream: stream, at: instant))
    }

    /// How a stream pauses its transfer when the consumer falls behind, or `nil` where it cannot be paused.
    ///
    /// On Linux, suspending a running data task takes it off libcurl (closing its connection) and resuming it
    /// sends the request again from the start (swift-corelibs-foundation 6.3.1): the stream spills what the
    /// consumer has not taken to a temporary file instead (see ``HTTPBodyStream``), and the delivering thread never
    /// waits. On Apple platforms, suspending the task pauses it.
    private static func pause(_ task: (any TransferTask)?) -> (@Sendable (Bool) -> Void)? {
        #if canImport(FoundationNetworking)
        return nil
        #else
        guard let task else { return nil }
        return { paused in paused ? task.suspend() : task.resume() }
        #endif
    }

    func append(_ data: Data) {
        progress?.received(data.count)
        send(.received(data))
    }

    func sent(totalBytes: Int64, expected: Int64) {
        progress?.sent(totalBytes: totalBytes, expected: expected)
        send(.sent(totalBytes: totalBytes, expected: expected, at: .now))
    }

    /// The platform's own metrics for the task (Apple platforms).
    func collected(_ taskMetrics: URLSessionTaskMetrics) {
        send(.collected(taskMetrics))
    }

    /// Records why a TLS challenge was refused.
    func recordTLSRejection(_ rejection: TLSRejection) {
        send(.tlsRejected(rejection))
    }

    /// Records the 401 whose authentication challenge was declined, to return it when URLSession reports the
    /// task cancelled (see ``SessionDelegate``).
    func recordDeclinedChallenge(response: HTTPURLResponse?) {
        send(.challengeDeclined(response))
    }

    /// Completes the load with what URLSession reported: the body collected from the delegate's callbacks,
    /// or `body` when URLSession hands it over at once (a completion-handler task). A stream ends.
    ///
    /// It only hands the outcome over: it is called on URLSession's queue, and the mapping happens in the load.
    func finish(response: URLResponse?, error: (any Error)?, body handedOver: Data? = nil) {
        send(.taskEnded(response: response, error: error, body: handedOver, at: .now))
    }

    // MARK: - Actions

    private func perform(_ action: Machine.Action) {
        switch action {
        case .none:
            break
        case .resumeCancelled(let continuation):
            continuation.complete(with: .cancelled)
        case .runTaskEnd(let body):
            body()
        case .cancelStarted(let task):
            Self.cancel(task)
        case .cancelTimer(let timer):
            timer.cancel()
        case .resumeStreaming(let continuation, let head, let stream, let task):
            stream.connect(cancel: { [weak self] in self?.cancel() }, pause: Self.pause(task))
            continuation.complete(with: .streaming(head, stream))
        case .openFile(let head):
            guard case .file(let url, let offset) = delivery else { return }
            do {
                let start = head.statusCode == 206 ? try Self.rangeStart(of: head, expected: offset) : 0
                send(.fileOpened(try FileWriter(url: url, startingAt: start)))
            } catch {
                send(.fileFailed(error))
            }
        case .closeFile(let file):
            try? file.close()
        case .cancelTask(let task):
            Self.cancel(task)
        case .deliver(let stream, let data):
            stream.deliver(data)
        case .write(let file, let data):
            // URLSession delivers a task's data, and then its end, one callback at a time: writes and the close
            // never overlap.
            do { try file.write(data) } catch { send(.fileFailed(error)) }
        case .stop(let stop):
            stopped(stop)
        case .end(let end):
            ended(end)
        }
    }

    /// The transfer was stopped before URLSession's end: the load, if it has not returned, completes now; a
    /// stream ends; the task is cancelled (URLSession's end then only frees the session and closes the file).
    private func stopped(_ stop: Machine.Stop) {
        stop.timer?.cancel()
        progress?.stop()
        let outcome: Outcome
        switch stop.reason {
        case .cancelled:
            outcome = .cancelled
            stop.stream?.finish(throwing: HTTPError(.cancelled, request: request))
        case .timedOut:
            let timedOut = URLError(.timedOut, userInfo: [NSLocalizedDescriptionKey: "The request timed out."])
            outcome = .finished(response: nil, body: Data(), error: timedOut, declinedChallenge: nil, file: nil)
            if let stream = stop.stream {
                var streamError = transportError(timedOut, response: nil)
                streamError.metrics = stop.metrics
                stream.finish(throwing: streamError)
            }
        }
        if let task = stop.task { Self.cancel(task) }
        // Without a task yet, the load is about to start one, which finds the transfer stopped and cancels it:
        // its end then frees the session.
        stop.waiter?.complete(with: outcome)
    }

    /// URLSession reported the end.
    private func ended(_ end: Machine.End) {
        // The session is free before the consumer hears of the end, so that a stream read to its end and followed
        // at once by another finds the session, and its connection, ready for it.
        end.onTaskEnd?()
        end.timer?.cancel()
        var fileError = end.fileError
        if let file = end.file {
            do { try file.close() } catch { fileError = fileError ?? error }
        }
        let failure: (any Error)? =
            fileError.map { WriteError(path: fileURL?.path ?? "the file", cause: $0) } ?? end.error
        if let stream = end.stream {
            stream.finish(throwing: failure.map { transportError($0, response: end.response) })
        }
        if end.error == nil, failure == nil { progress?.complete() } else { progress?.stop() }
        let written = end.file != nil && failure == nil ? fileURL : nil
        end.waiter?.complete(
            with: .finished(
                response: end.response, body: end.body, error: failure, declinedChallenge: end.declinedChallenge,
                file: written))
    }

    private var fileURL: URL? {
        if case .file(let url, _) = delivery { return url }
        return nil
    }

    /// The load's result for `outcome`, with this attempt's metrics, reported to the load's observers.
    func result(of outcome: Outcome) -> HTTPResult {
        let (collected, rejection) = state.withLock { ($0.metrics, $0.tlsRejection) }
        var metrics = collected
        if case .streaming = outcome { metrics?.end = .now }  // a stream's load ends when its head arrives
        let result = mapped(outcome, tlsRejection: rejection)
        guard let metrics else { return result }
        let measured = HTTPResult.attaching(metrics, to: result)
        request.emit(.attemptFinished, result: measured)
        return measured
    }

    private func mapped(_ outcome: Outcome, tlsRejection: TLSRejection?) -> HTTPResult {
        switch outcome {
        case .cancelled:
            return .failure(HTTPError(.cancelled, request: request))
        case .streaming(let head, let stream):
            var response = HTTPResponse(request: request, urlResponse: head, body: Data())
            response.bodyStream = stream
            return .success(response)
        case .finished(_, _, let error, _, _) where tlsRejection != nil && (error as? URLError)?.code == .cancelled:
            return .failure(tlsRejection!.httpError(for: request))
        case .finished(_, let body, let error, let declinedChallenge?, _) where (error as? URLError)?.code == .cancelled:
            return .success(HTTPResponse(request: request, urlResponse: declinedChallenge, body: body))
        case .finished(let response, _, let error?, _, _):
            return .failure(transportError(error, response: response))
        case .finished(let response as HTTPURLResponse, let body, nil, _, let file):
            var result = HTTPResponse(request: request, urlResponse: response, body: body)
            result.fileURL = file
            return .success(result)
        case .finished:
            return .failure(
                HTTPError(.invalidResponse, request: request, message: "the server's response was not an HTTP response")
            )
        }
    }

    /// The error for a transfer that failed, keeping the response's head when it had arrived.
    private func transportError(_ error: any Error, response: URLResponse?) -> HTTPError {
        if let writeError = error as? WriteError {
            return HTTPError(
                .unknown, request: request,
                message: "could not write the response to \(writeError.path): \(writeError.cause)",
                response: (response as? HTTPURLResponse).map {
                    HTTPResponse(request: request, urlResponse: $0, body: Data())
                },
                underlyingError: writeError.cause)
        }
        var failure = HTTPError(request: request, transportError: error)
        if failure.response == nil, let head = response as? HTTPURLResponse {
            failure.response = HTTPResponse(request: request, urlResponse: head, body: Data())
        }
        return failure
    }

    private struct WriteError: Error {
        var path: String
        var cause: any Error
    }

    /// The body's length the head announces: `Content-Length`, or a `206`'s range.
    private static func bodyLength(of response: HTTPURLResponse?) -> Int64? {
        guard let response, response.expectedContentLength >= 0 else { return nil }
        return response.expectedContentLength
    }

    /// The first byte a `206` carries, which must be the one asked for.
    private static func rangeStart(of response: HTTPURLResponse, expected: Int64) throws -> Int64 {
        let range = response.value(forHTTPHeaderField: "Content-Range") ?? ""
        guard let start = ContentRange(range)?.first, start == expected else {
            throw ResumeError(
                "the server answered 206 with Content-Range '\(range)', not one starting at byte \(expected)")
        }
        return start
    }

    struct ResumeError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// A `Content-Range: bytes first-last/complete` field value (RFC 9110 §14.4).
package struct ContentRange: Sendable, Equatable {
    package var first: Int64
    package var last: Int64
    /// The length of the whole representation, when the server says (`*` otherwise).
    package var completeLength: Int64?

    package init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        let bounds = spec[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0, last >= first
        else { return nil }
        self.first = first
        self.last = last
        if spec[1] == "*" {
            completeLength = nil
        } else {
            guard let complete = Int64(spec[1]), complete > last else { return nil }
            completeLength = complete
        }
    }
}

/// The session's delegate: routes callbacks to each task's ``TransferContext``, declines authentication challenges
/// and refuses every redirect.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let transfers = Locked<[Int: TransferContext]>([:])

    func register(_ transfer: TransferContext, for task: URLSessionTask) {
        transfer.registration = (self, task.taskIdentifier)
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    /// Forgets a transfer whose task completed through its completion handler.
    func unregister(_ transfer: TransferContext) {
        guard let (delegate, identifier) = transfer.registration, delegate === self else { return }
        transfers.withLock { _ = $0.removeValue(forKey: identifier) }
    }

    /// The transfers whose tasks have not completed.
    func registeredTransfers() -> [TransferContext] {
        transfers.withLock { Array($0.values) }
    }

    private func transfer(for task: URLSessionTask) -> TransferContext? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        transfer(for: dataTask)?.receivedHead(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(for: dataTask)?.append(data)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        transfer(for: task)?.sent(totalBytes: totalBytesSent, expected: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        transfer(for: task)?.collected(metrics)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        guard let transfer, transfer.isDelegateDriven else { return }
        transfer.finish(response: task.response, error: error)
    }

    /// HTTP authentication challenges (a 401 with `WWW-Authenticate: Basic` or `Digest`) are declined so that
    /// the 401 comes back as the response: credentials are the business of the chain's auth loaders, never of
    /// URLSession's credential storage. Server-trust challenges get the system's default evaluation.
    ///
    /// On Linux, swift-corelibs-foundation cannot decline a challenge and still deliver the response: default
    /// handling without a stored credential never completes the task, and declining cancels it. So the loader
    /// cancels the challenge and remembers `failureResponse`, the 401 itself, which ``TransferContext`` then
    /// returns as the response.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Security)
        if let transfer = transfer(for: task), let answer = transfer.tls.answer(challenge) {
            if let rejection = answer.rejection { transfer.recordTLSRejection(rejection) }
            completionHandler(answer.disposition, answer.credential)
            return
        }
        #endif
        #if canImport(FoundationNetworking)
        transfer(for: task)?.recordDeclinedChallenge(response: challenge.failureResponse as? HTTPURLResponse)
        // Answered from another thread: cancelling waits synchronously for the task's work queue, which is
        // the queue this callback runs on when the delegate queue is an `ImmediateQueue`.
        URLSessionCalls.shared.run { completionHandler(.cancelAuthenticationChallenge, nil) }
        #else
        completionHandler(.performDefaultHandling, nil)
        #endif
    }

    /// Never follows a redirect: the `3xx` comes back as the response, with its body, for ``FollowRedirects`` to
    /// follow in the chain, where every hop passes the loaders below it and RFC 9110's rules apply on every
    /// platform.
    ///
    /// URLSession asks the session's delegate about every redirect of every task of the session — on Linux too,
    /// for tasks with a completion handler (swift-corelibs-foundation asks the task's delegate, which is the
    /// session's when the task has none of its own). Answered `nil`, it ends the task with the `3xx`: its head
    /// reaches `TransferContext.receivedHead(_:)` and its body `append(_:)` as any other
    /// response's would.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

#if canImport(FoundationNetworking)
/// A delegate queue that runs each operation at once, on the thread that adds it.
///
/// swift-corelibs-foundation adds every session callback — a completion handler, a redirect question — to the
/// session's delegate queue from the task's own serial work queue. Run there directly, a completion skips the
/// wake-up of an `OperationQueue` thread. The callbacks stay serial, as the work queues of one session share
/// one serial target queue. What runs here must not wait for that queue: ``SessionDelegate`` answers an
/// authentication challenge from another thread for that reason.
// Safety: it has no state of its own; `OperationQueue` is thread-safe.
final class ImmediateQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ operation: Operation) {
        operation.start()
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }

    override func addOperations(_ operations: [Operation], waitUntilFinished wait: Bool) {
        for operation in operations { operation.start() }
    }

    override func addBarrierBlock(_ barrier: @escaping @Sendable () -> Void) {
        barrier()
    }
}
#endif

import AsyncHTTPClient
import Foundation
@_spi(Transport) import HTTP
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A buffered load sent with AsyncHTTPClient's async API (`execute(_:deadline:)`): the request in a task of its own,
/// which the load's cancellation, a cancelling reset, a shutdown and the request's deadline cancel.
///
/// The loader takes this path for a load sent while others are in flight, with a body in memory (or none), a buffered
/// response, no pinned server and no upload progress: AsyncHTTPClient runs an async request on its connection's event
/// loop, where the delegate API hops to the task's loop for each callback, which costs more under concurrency than
/// this task's own wake-up. A load alone, streams, files and request bodies read as they are sent keep ``Transfer``.
final class AsyncExchange: Sendable {
    private struct State {
        var task: Task<HTTPResult, Never>?
        var isCancelled = false
        var didTimeOut = false
        var deadline: Scheduled<Void>?
    }

    let request: HTTPRequest
    private let state = NIOLockedValueBox(State())

    init(request: HTTPRequest) {
        self.request = request
    }

    /// Runs the exchange in `task`; cancelled at once if the exchange was cancelled before.
    func attach(_ task: Task<HTTPResult, Never>) {
        let cancelled = state.withLockedValue { state -> Bool in
            state.task = task
            return state.isCancelled
        }
        if cancelled { task.cancel() }
    }

    /// Times the exchange out at `deadline`, on `eventLoop`.
    func startDeadline(_ deadline: NIODeadline, on eventLoop: any EventLoop) {
        let scheduled = eventLoop.scheduleTask(deadline: deadline) { [weak self] () -> Void in self?.timeOut() }
        let ended = state.withLockedValue { state -> Bool in
            if state.isCancelled { return true }
            state.deadline = scheduled
            return false
        }
        if ended { scheduled.cancel() }
    }

    /// Cancels the exchange: its task ends with `cancelled` (or `timedOut`, after the deadline).
    func cancel() {
        let (task, deadline) = state.withLockedValue { state -> (Task<HTTPResult, Never>?, Scheduled<Void>?) in
            state.isCancelled = true
            defer { state.deadline = nil }
            return (state.task, state.deadline)
        }
        deadline?.cancel()
        task?.cancel()
    }

    /// Ends the exchange's timer, once it has its outcome.
    func finish() {
        state.withLockedValue { $0.deadline.take() }?.cancel()
    }

    private func timeOut() {
        state.withLockedValue { state in
            state.didTimeOut = !state.isCancelled
            state.deadline = nil
        }
        cancel()
    }

    var didTimeOut: Bool { state.withLockedValue { $0.didTimeOut } }

    /// Whether ``cancel()`` was called: it sets this before it cancels the task, the only way the task is cancelled.
    private var isCancelled: Bool { state.withLockedValue { $0.isCancelled } }

    /// Sends `prepared` with `client`'s async API and collects the response: the exchange's task runs this.
    func run(_ prepared: PreparedRequest, client: HTTPClient) async -> HTTPResult {
        let request = request
        var metrics = HTTPMetrics(startingNowFor: request)
        let isObserved = request.isObserved
        // Cancelled before its task was attached (a reset, a shutdown, the load's cancellation): nothing is sent.
        if isCancelled {
            finish()
            return HTTPResult.attaching(metrics, to: .failure(failure(CancellationError(), head: nil)))
        }
        var outgoing = HTTPClientRequest(url: prepared.url)
        outgoing.method = prepared.method
        outgoing.headers = prepared.headers
        outgoing.tlsConfiguration = prepared.tlsConfiguration
        if let data = prepared.body?.inMemory { outgoing.body = .bytes(ByteBuffer(data: data)) }
        let progress = ProgressReporter(request: request, totalBytesToSend: prepared.bodyLength, alreadyReceived: 0)
        if isObserved { request.emit(.attemptStarted) }
        var head: HTTPResponseHead?
        let outcome: HTTPResult
        do {
            // The deadline of the whole transfer is the exchange's own (it cancels the task, body included):
            // AsyncHTTPClient's covers the head only.
            let response = try await client.execute(outgoing, deadline: .distantFuture)
            let now = ContinuousClock.now
            let received = HTTPResponseHead(
                version: response.version, status: response.status, headers: response.headers)
            head = received
            metrics.responseHeadReceived = now
            metrics.requestSent = now  // the async API tells no earlier moment: the request was sent by now
            metrics.requestBodyBytesSent = prepared.bodyLength ?? 0
            if let progress {
                if let length = prepared.bodyLength, length > 0 { progress.sent(totalBytes: length, expected: length) }
                progress.receivedHead(received)
            }
            if isObserved {
                request.emit(
                    .responseHeadReceived, result: .success(Transfer.response(for: received, to: request, body: Data()))
                )
            }
            var body: ByteBuffer?
            for try await part in response.body {
                progress?.received(part.readableBytes)
                metrics.responseBodyBytesReceived += Int64(part.readableBytes)
                if body == nil {
                    body = part
                } else {
                    var part = part
                    body!.writeBuffer(&part)
                }
            }
            try Task.checkCancellation()
            progress?.complete()
            outcome = .success(
                Transfer.response(for: received, to: request, body: body.map { Data(buffer: $0) } ?? Data()))
        } catch {
            progress?.stop()
            outcome = .failure(failure(error, head: head))
        }
        finish()
        metrics.end = .now
        let result = HTTPResult.attaching(metrics, to: outcome)
        if isObserved { request.emit(.attemptFinished, result: result) }
        return result
    }

    /// The error for an exchange that failed with `error`, keeping the response's head when it had arrived.
    private func failure(_ error: any Error, head: HTTPResponseHead?) -> HTTPError {
        var failure: HTTPError
        if didTimeOut {
            failure = HTTPError(request: request, asyncHTTPClientError: HTTPClientError.deadlineExceeded)
        } else if isCancelled {
            failure = HTTPError(.cancelled, request: request)
        } else {
            failure = HTTPError(request: request, asyncHTTPClientError: error)
        }
        if failure.response == nil, let head {
            failure.response = Transfer.response(for: head, to: request, body: Data())
        }
        return failure
    }
}

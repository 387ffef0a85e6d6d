import AsyncHTTPClient
import Foundation
@_spi(Transport) import HTTP
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// One request on its way through AsyncHTTPClient: its response delegate, the thin driver of a
/// ``TransferStateMachine``. It collects the body (or streams it, or writes it to a file), measures the transfer,
/// reports progress, and completes its load exactly once — with the result, at the head for a stream, or as
/// cancelled. What happens when is the machine's decision; the driver performs its actions outside the lock.
///
/// AsyncHTTPClient calls the delegate on the request's event loop, one call at a time; ``cancel()`` comes from any
/// thread.
final class Transfer: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    /// What becomes of the response's body as it arrives.
    enum Delivery: Equatable {
        case buffered
        case stream
        case file(URL, offset: Int64)
    }

    /// The load waiting for the transfer.
    typealias Continuation = CheckedContinuation<HTTPResult, Never>

    /// The machine's handles: the real continuation, task, stream, file, promise and writer.
    enum Handles: TransferHandles {
        typealias Continuation = Transfer.Continuation
        typealias Task = HTTPClient.Task<Void>
        typealias Stream = HTTPBodyStream
        typealias File = FileSink
        typealias Promise = EventLoopPromise<Void>
        typealias Writer = _Concurrency.Task<Void, Never>
        typealias OnEnd = @Sendable () -> Void
    }

    typealias Machine = TransferStateMachine<Handles>

    let request: HTTPRequest
    let delivery: Delivery
    private let progress: ProgressReporter?
    /// Whether observers above want the transfer's events: looked up once, not at each event.
    private let isObserved: Bool
    private let totalBytesToSend: Int64?
    /// The bridge a pinned request goes through, whose rejection explains a lost connection.
    let bridge: TLSBridge?
    private let machine: NIOLockedValueBox<Machine>

    init(request: HTTPRequest, totalBytesToSend: Int64?, bridge: TLSBridge?) {
        self.request = request
        self.totalBytesToSend = totalBytesToSend
        self.bridge = bridge
        let mode: Machine.Mode
        switch request.responseDelivery {
        case .buffered:
            delivery = .buffered
            mode = .buffered
        case .stream:
            delivery = .stream
            mode = .stream
        case .file(let url, let offset):
            delivery = .file(url, offset: offset)
            mode = .file
        }
        machine = NIOLockedValueBox(Machine(mode: mode))
        let offset: Int64 = if case .file(_, let offset) = delivery { offset } else { 0 }
        progress = ProgressReporter(request: request, totalBytesToSend: totalBytesToSend, alreadyReceived: offset)
        isObserved = request.isObserved
    }

    private func handle(_ event: Machine.Event) -> Machine.Action {
        machine.withLockedValue { $0.handle(event) }
    }

    // MARK: - From the load

    /// Hands the request to AsyncHTTPClient, the load waiting on `continuation`; `onEnd` runs once when the transfer
    /// has ended. If the transfer was cancelled first, nothing is sent: the continuation resumes as cancelled and
    /// `onEnd` runs at once.
    func begin(
        _ continuation: Continuation, onEnd: @escaping @Sendable () -> Void, client: HTTPClient,
        request prepared: HTTPClient.Request, deadline: NIODeadline?
    ) {
        let failuresBefore = bridge?.failureCount ?? 0
        let metrics = HTTPMetrics(startingNowFor: request)
        switch handle(.begin(continuation, onEnd: onEnd, metrics: metrics, bridgeFailuresBefore: failuresBefore)) {
        case .refuse(let continuation, let onEnd):
            continuation.resume(returning: .failure(HTTPError(.cancelled, request: request)))
            onEnd()
            return
        default:
            break
        }
        if isObserved { request.emit(.attemptStarted) }
        let task = client.execute(request: prepared, delegate: self, deadline: deadline)
        perform(handle(.executing(task)))
    }

    /// Keeps the task that writes a streamed request body, to cancel it when the transfer ends.
    func own(bodyWriter: Task<Void, Never>) {
        perform(handle(.bodyWriter(bodyWriter)))
    }

    /// Cancels the transfer: the load, if it has not returned, completes as cancelled; a stream ends as cancelled.
    /// AsyncHTTPClient then reports the task failed, which ends the transfer; a transfer not yet handed to it ends
    /// here.
    func cancel() {
        perform(handle(.cancel(now: .now)))
    }

    // MARK: - AsyncHTTPClient's delegate

    func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
        perform(handle(.requestPartSent(part.readableBytes)))
    }

    func didSendRequest(task: HTTPClient.Task<Void>) {
        perform(handle(.requestSent(now: .now)))
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        if let progress {
            progress.receivedHead(head)
        }
        if isObserved {
            request.emit(.responseHeadReceived, result: .success(response(for: head, body: Data())))
        }
        let stream = delivery == .stream ? HTTPBodyStream(request: request) : nil
        switch handle(.head(head, stream: stream, now: .now)) {
        case .deliverHead(let continuation, let stream, let metrics):
            stream.connect(
                cancel: { [weak self] in self?.cancel() },
                pause: { [weak self] paused in
                    guard let self else { return }
                    perform(handle(.pause(paused)))
                })
            var response = response(for: head, body: Data())
            response.bodyStream = stream
            continuation.resume(returning: result(.success(consume response), metrics: metrics))
        case .openFile:
            guard case .file(let url, let offset) = delivery else { break }
            do {
                let start = head.status == .partialContent ? try Self.rangeStart(of: head, expected: offset) : 0
                perform(handle(.fileOpened(try FileSink(url: url, truncatingAt: start))))
            } catch {
                task.fail(reason: error)
            }
        case let other:
            perform(other)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        progress?.received(buffer.readableBytes)
        switch handle(.bodyPart(buffer)) {
        case .deliver(let stream):
            stream.deliver(Data(buffer: buffer, byteTransferStrategy: .noCopy))
            // Backpressure: while the consumer is behind, the next part waits (AsyncHTTPClient stops reading).
            guard case .park = handle(.delivered) else { break }
            let promise = task.eventLoop.makePromise(of: Void.self)
            if case .succeed = handle(.parked(promise)) { promise.succeed() }  // the consumer caught up meanwhile
            return promise.futureResult
        case .write(let file):
            return file.write(buffer, on: task.eventLoop)  // the next part waits for the write
        case .cancelTransfer:
            cancel()  // the consumer dropped the stream
        case let other:
            perform(other)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        finish(error: error)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        finish(error: nil)
    }

    // MARK: - Actions

    /// Performs the actions that need nothing but their own values.
    private func perform(_ action: Machine.Action) {
        switch action {
        case .none, .execute, .proceed, .wait, .park, .openFile, .deliverHead, .deliver, .write, .end:
            break
        case .refuse(let continuation, let onEnd):
            continuation.resume(returning: .failure(HTTPError(.cancelled, request: request)))
            onEnd()
        case .cancelTask(let task):
            task.cancel()
        case .cancelWriter(let writer):
            writer.cancel()
        case .closeFile(let file):
            try? file.close()
        case .cancel(let cancellation):
            progress?.stop()
            cancellation.stream?.finish(throwing: HTTPError(.cancelled, request: request))
            cancellation.task?.cancel()
            cancellation.promise?.succeed()
            if let continuation = cancellation.continuation {
                continuation.resume(
                    returning: result(.failure(HTTPError(.cancelled, request: request)), metrics: cancellation.metrics))
            }
            cancellation.writer?.cancel()
            cancellation.onEnd?()
        case .progress(let sent):
            progress?.sent(totalBytes: sent, expected: totalBytesToSend)
        case .cancelTransfer:
            cancel()
        case .succeed(let promise):
            promise.succeed()
        }
    }

    /// Ends the transfer with what AsyncHTTPClient reported: completes the load (unless a stream's head or a
    /// cancellation completed it already) and ends the stream.
    private func finish(error: (any Error)?) {
        guard
            case .end(let ending) = handle(.finish(failed: error != nil, totalBytesToSend: totalBytesToSend, now: .now))
        else { return }
        ending.promise?.succeed()
        var failure = error
        if let file = ending.file {
            do { try file.close() } catch { failure = failure ?? error }
        }
        if let reported = failure, let bridge, let rejection = bridge.failure(since: ending.bridgeFailuresBefore),
            !(reported is ServerTrustRejection), (reported as? HTTPClientError) != .cancelled
        {
            failure = rejection  // the bridge refused the server: that is why the connection closed
        }
        if let stream = ending.stream {
            stream.finish(throwing: failure.map { transportError($0, head: ending.head) })
        }
        if failure == nil { progress?.complete() } else { progress?.stop() }
        if let continuation = ending.continuation {
            let outcome: HTTPResult
            if let failure {
                outcome = .failure(transportError(failure, head: ending.head))
            } else if let head = ending.head {
                // Small bodies are copied out of the buffer, large ones referenced: `Data(buffer:)`'s default.
                var response = response(for: head, body: ending.body.map { Data(buffer: $0) } ?? Data())
                if ending.file != nil, case .file(let url, _) = delivery { response.fileURL = url }
                outcome = .success(consume response)
            } else {
                outcome = .failure(
                    HTTPError(.invalidResponse, request: request, message: "the transfer ended without a response"))
            }
            continuation.resume(returning: result(consume outcome, metrics: ending.metrics))
        }
        ending.writer?.cancel()
        ending.onEnd?()
    }

    /// `outcome` with this attempt's metrics, reported to the load's observers.
    private func result(_ outcome: consuming HTTPResult, metrics: HTTPMetrics?) -> HTTPResult {
        guard let metrics else { return outcome }
        let result = HTTPResult.attaching(metrics, to: outcome)
        if isObserved { request.emit(.attemptFinished, result: result) }
        return result
    }

    /// The error for a transfer that failed, keeping the response's head when it had arrived.
    private func transportError(_ error: any Error, head: HTTPResponseHead?) -> HTTPError {
        var failure = HTTPError(request: request, asyncHTTPClientError: error)
        if let file = error as? FileSink.Failure {
            failure = HTTPError(.unknown, request: request, message: file.description, underlyingError: error)
        }
        if failure.response == nil, let head { failure.response = response(for: head, body: Data()) }
        return failure
    }

    private func response(for head: HTTPResponseHead, body: Data) -> HTTPResponse {
        Self.response(for: head, to: request, body: body)
    }

    /// The response `head` and `body` make, to `request`.
    static func response(for head: HTTPResponseHead, to request: HTTPRequest, body: Data) -> HTTPResponse {
        // A loop, not `map`: NIO's `HTTPHeaders` is iterated through its generic `Sequence` conformance by `map`.
        var fields: [HTTP.HTTPHeaders.Field] = []
        fields.reserveCapacity(head.headers.count)
        for (name, value) in head.headers { fields.append(HTTP.HTTPHeaders.Field(name: name, value: value)) }
        return HTTPResponse(
            request: request, status: HTTPStatus(rawValue: Int(head.status.code)), headers: HTTP.HTTPHeaders(fields),
            body: body)
    }

    // MARK: - Files

    /// The first byte a `206` carries, which must be the one asked for: `Content-Range: bytes first-last/length`.
    private static func rangeStart(of head: HTTPResponseHead, expected: Int64) throws -> Int64 {
        let range = head.headers.first(name: "Content-Range") ?? ""
        let spec = range.trimmingCharacters(in: .whitespaces)
        let first = spec.lowercased().hasPrefix("bytes ") ? spec.dropFirst(6).prefix { $0 != "-" } : ""
        guard let start = Int64(first), start == expected else {
            throw FileSink.Failure(
                description:
                    "the server answered 206 with Content-Range '\(range)', not one starting at byte \(expected)")
        }
        return start
    }
}

extension ProgressReporter {
    /// The response's head arrived: its status, `Content-Range` and `Content-Length`.
    func receivedHead(_ head: HTTPResponseHead) {
        receivedHead(
            status: Int(head.status.code), contentRange: head.headers.first(name: "Content-Range"),
            declaredLength: head.headers.first(name: "Content-Length").flatMap { Int64($0) })
    }
}

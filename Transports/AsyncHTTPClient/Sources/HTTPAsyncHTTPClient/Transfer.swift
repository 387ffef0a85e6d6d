import AsyncHTTPClient
import Foundation
@_spi(Transport) import HTTP
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One request on its way through AsyncHTTPClient: its response delegate. It collects the body (or streams it, or
/// writes it to a file), measures the transfer, reports progress, and completes its load exactly once — with the
/// result, at the head for a stream, or as cancelled.
///
/// AsyncHTTPClient calls the delegate on the request's event loop, one call at a time; ``cancel()`` comes from any
/// thread. Every field that both touch is behind the lock.
final class Transfer: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    /// What becomes of the response's body as it arrives.
    enum Delivery: Equatable {
        case buffered
        case stream
        case file(URL, offset: Int64)
    }

    /// A reference that does not keep the stream alive: dropping it is how the consumer stops the transfer.
    private struct WeakStream {
        weak var value: HTTPBodyStream?
    }

    /// The load waiting for the transfer.
    typealias Continuation = CheckedContinuation<HTTPResult, Never>

    private struct State {
        var continuation: Continuation?
        /// Set once the load's outcome is decided; later events only finish a stream or release resources.
        var isCompleted = false
        /// Set once the transfer has ended (finished, failed or cancelled).
        var isEnded = false
        var task: HTTPClient.Task<Void>?
        var head: HTTPResponseHead?
        var body: ByteBuffer?
        var stream = WeakStream()
        var file: FileSink?
        var metrics: HTTPMetrics?
        /// The stream's consumer is behind: the next body part waits for this promise.
        var isPaused = false
        var resume: EventLoopPromise<Void>?
        /// Produces a streamed request body; cancelled when the transfer ends.
        var bodyWriter: Task<Void, Never>?
        var onEnd: (@Sendable () -> Void)?
        /// The TLS bridge's rejections counted before this transfer started, to tell its own.
        var bridgeFailuresBefore = 0
    }

    let request: HTTPRequest
    let delivery: Delivery
    private let progress: ProgressReporter?
    /// Whether observers above want the transfer's events: looked up once, not at each event.
    private let isObserved: Bool
    private let totalBytesToSend: Int64?
    /// The bridge a pinned request goes through, whose rejection explains a lost connection.
    let bridge: TLSBridge?
    private let state = NIOLockedValueBox(State())

    init(request: HTTPRequest, totalBytesToSend: Int64?, bridge: TLSBridge?) {
        self.request = request
        self.totalBytesToSend = totalBytesToSend
        self.bridge = bridge
        switch request.responseDelivery {
        case .buffered: delivery = .buffered
        case .stream: delivery = .stream
        case .file(let url, let offset): delivery = .file(url, offset: offset)
        }
        let offset: Int64 = if case .file(_, let offset) = delivery { offset } else { 0 }
        progress = ProgressReporter(request: request, totalBytesToSend: totalBytesToSend, alreadyReceived: offset)
        isObserved = request.isObserved
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
        let cancelled = state.withLockedValue { state -> Bool in
            if state.isCompleted { return true }
            state.continuation = continuation
            state.metrics = metrics
            state.onEnd = onEnd
            state.bridgeFailuresBefore = failuresBefore
            return false
        }
        if cancelled {
            continuation.resume(returning: .failure(HTTPError(.cancelled, request: request)))
            onEnd()
            return
        }
        if isObserved { request.emit(.attemptStarted) }
        let task = client.execute(request: prepared, delegate: self, deadline: deadline)
        let cancelledMeanwhile = state.withLockedValue { state -> Bool in
            if state.isEnded { return true }
            state.task = task
            return false
        }
        if cancelledMeanwhile { task.cancel() }
    }

    /// Keeps the task that writes a streamed request body, to cancel it when the transfer ends.
    func own(bodyWriter: Task<Void, Never>) {
        let ended = state.withLockedValue { state -> Bool in
            if state.isEnded { return true }
            state.bodyWriter = bodyWriter
            return false
        }
        if ended { bodyWriter.cancel() }
    }

    /// Cancels the transfer: the load, if it has not returned, completes as cancelled; a stream ends as cancelled.
    /// AsyncHTTPClient then reports the task failed, which ends the transfer; a transfer not yet handed to it ends
    /// here.
    func cancel() {
        let (task, continuation, stream, resume) = state.withLockedValue {
            state -> (
                HTTPClient.Task<Void>?, Continuation?, HTTPBodyStream?,
                EventLoopPromise<Void>?
            ) in
            if !state.isEnded, !state.isCompleted { state.metrics?.end = .now }
            state.isCompleted = true
            if state.task == nil { state.isEnded = true }
            defer {
                state.continuation = nil
                state.resume = nil
            }
            return (state.task, state.continuation, state.stream.value, state.resume)
        }
        progress?.stop()
        stream?.finish(throwing: HTTPError(.cancelled, request: request))
        task?.cancel()
        resume?.succeed()
        continuation?.resume(returning: result(.failure(HTTPError(.cancelled, request: request))))
        if task == nil { ended() }
    }

    // MARK: - AsyncHTTPClient's delegate

    func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
        let total = state.withLockedValue { state -> Int64 in
            state.metrics?.requestBodyBytesSent += Int64(part.readableBytes)
            return state.metrics?.requestBodyBytesSent ?? 0
        }
        progress?.sent(totalBytes: total, expected: totalBytesToSend)
    }

    func didSendRequest(task: HTTPClient.Task<Void>) {
        state.withLockedValue { $0.metrics?.requestSent = .now }
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        if let progress {
            progress.receivedHead(
                status: Int(head.status.code), contentRange: head.headers.first(name: "Content-Range"),
                declaredLength: head.headers.first(name: "Content-Length").flatMap { Int64($0) })
        }
        state.withLockedValue { state in
            state.head = head
            state.metrics?.responseHeadReceived = .now
        }
        if isObserved {
            request.emit(.responseHeadReceived, result: .success(response(for: head, body: Data())))
        }
        switch delivery {
        case .buffered:
            break
        case .stream:
            let stream = HTTPBodyStream(request: request)
            let continuation = state.withLockedValue { state -> Continuation? in
                guard !state.isCompleted, let continuation = state.continuation else { return nil }
                state.continuation = nil
                state.isCompleted = true
                state.stream.value = stream
                return continuation
            }
            guard let continuation else { break }
            stream.connect(
                cancel: { [weak self] in self?.cancel() },
                pause: { [weak self] paused in self?.setPaused(paused) })
            var response = response(for: head, body: Data())
            response.bodyStream = stream
            var metrics = state.withLockedValue { $0.metrics }
            metrics?.end = .now  // a stream's load ends when its head arrives
            continuation.resume(returning: result(.success(consume response), metrics: metrics))
        case .file(let url, let offset):
            guard head.status == .ok || head.status == .partialContent else { break }
            do {
                let start = head.status == .partialContent ? try Self.rangeStart(of: head, expected: offset) : 0
                let sink = try FileSink(url: url, truncatingAt: start)
                state.withLockedValue { $0.file = sink }
            } catch {
                task.fail(reason: error)
            }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        progress?.received(buffer.readableBytes)
        let count = Int64(buffer.readableBytes)
        switch delivery {
        case .buffered:
            collect(buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        case .stream:
            let (stream, isCompleted) = state.withLockedValue { state in
                state.metrics?.responseBodyBytesReceived += count
                return (state.stream.value, state.isCompleted)
            }
            guard let stream else {
                if isCompleted { cancel() }  // the consumer dropped the stream
                return task.eventLoop.makeSucceededVoidFuture()
            }
            stream.deliver(Data(buffer: buffer, byteTransferStrategy: .noCopy))
            // Backpressure: while the consumer is behind, the next part waits (AsyncHTTPClient stops reading).
            return state.withLockedValue { state -> EventLoopFuture<Void> in
                guard state.isPaused, !state.isEnded else { return task.eventLoop.makeSucceededVoidFuture() }
                let promise = task.eventLoop.makePromise(of: Void.self)
                state.resume = promise
                return promise.futureResult
            }
        case .file:
            let file = state.withLockedValue { state -> FileSink? in
                if state.file != nil { state.metrics?.responseBodyBytesReceived += count }
                return state.file
            }
            guard let file else {
                collect(buffer)  // a status whose body is not written to the file
                return task.eventLoop.makeSucceededVoidFuture()
            }
            return file.write(buffer, on: task.eventLoop)  // the next part waits for the write
        }
    }

    /// Keeps `buffer` as part of the body, and counts it.
    private func collect(_ buffer: ByteBuffer) {
        state.withLockedValue { state in
            state.metrics?.responseBodyBytesReceived += Int64(buffer.readableBytes)
            if state.body == nil {
                state.body = buffer
            } else {
                var copy = buffer
                state.body!.writeBuffer(&copy)
            }
        }
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        finish(error: error)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        finish(error: nil)
    }

    // MARK: - Ending

    private func setPaused(_ paused: Bool) {
        let resume = state.withLockedValue { state -> EventLoopPromise<Void>? in
            state.isPaused = paused
            guard !paused else { return nil }
            defer { state.resume = nil }
            return state.resume
        }
        resume?.succeed()
    }

    /// Ends the transfer with what AsyncHTTPClient reported: completes the load (unless a stream's head or a
    /// cancellation completed it already) and ends the stream.
    private func finish(error: (any Error)?) {
        struct Taken {
            var continuation: Continuation?
            var head: HTTPResponseHead?
            var body: ByteBuffer?
            var stream: HTTPBodyStream?
            var file: FileSink?
            var resume: EventLoopPromise<Void>?
            var metrics: HTTPMetrics?
            var bridgeFailuresBefore: Int
            var onEnd: (@Sendable () -> Void)?
            var bodyWriter: Task<Void, Never>?
        }
        let totalBytesToSend = self.totalBytesToSend
        // One visit to the lock ends the transfer: everything is moved out, nothing copied.
        let taken = state.withLockedValue { state -> Taken? in
            guard !state.isEnded else { return nil }
            state.isEnded = true
            var metrics = state.metrics.take()
            if metrics != nil {
                if !state.isCompleted { metrics!.end = .now }
                if metrics!.requestBodyBytesSent == 0, error == nil {
                    metrics!.requestBodyBytesSent = totalBytesToSend ?? 0
                }
            }
            let continuation = state.isCompleted ? nil : state.continuation.take()
            state.isCompleted = true
            state.task = nil
            return Taken(
                continuation: continuation, head: state.head.take(), body: state.body.take(),
                stream: state.stream.value, file: state.file.take(), resume: state.resume.take(), metrics: metrics,
                bridgeFailuresBefore: state.bridgeFailuresBefore, onEnd: state.onEnd.take(),
                bodyWriter: state.bodyWriter.take())
        }
        guard let taken else { return }
        taken.resume?.succeed()
        var failure = error
        if let file = taken.file {
            do { try file.close() } catch { failure = failure ?? error }
        }
        if let reported = failure, let bridge, let rejection = bridge.failure(since: taken.bridgeFailuresBefore),
            !(reported is ServerTrustRejection), (reported as? HTTPClientError) != .cancelled
        {
            failure = rejection  // the bridge refused the server: that is why the connection closed
        }
        if let stream = taken.stream {
            stream.finish(throwing: failure.map { transportError($0, head: taken.head) })
        }
        if failure == nil { progress?.complete() } else { progress?.stop() }
        if let continuation = taken.continuation {
            let outcome: HTTPResult
            if let failure {
                outcome = .failure(transportError(failure, head: taken.head))
            } else if let head = taken.head {
                // Small bodies are copied out of the buffer, large ones referenced: `Data(buffer:)`'s default.
                var response = response(for: head, body: taken.body.map { Data(buffer: $0) } ?? Data())
                if taken.file != nil, case .file(let url, _) = delivery { response.fileURL = url }
                outcome = .success(consume response)
            } else {
                outcome = .failure(
                    HTTPError(.invalidResponse, request: request, message: "the transfer ended without a response"))
            }
            continuation.resume(returning: result(consume outcome, metrics: taken.metrics))
        }
        taken.bodyWriter?.cancel()
        taken.onEnd?()
    }

    private func ended() {
        let (onEnd, writer) = state.withLockedValue { state in
            defer {
                state.onEnd = nil
                state.bodyWriter = nil
                state.task = nil
            }
            state.isEnded = true
            return (state.onEnd, state.bodyWriter)
        }
        writer?.cancel()
        onEnd?()
    }

    /// `outcome` with this attempt's metrics, reported to the load's observers.
    private func result(_ outcome: consuming HTTPResult, metrics given: HTTPMetrics? = nil) -> HTTPResult {
        guard let metrics = given ?? state.withLockedValue({ $0.metrics }) else { return outcome }
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

/// A download's file: each part written by NIO's thread pool, never on the event loop, straight from the
/// `ByteBuffer` it arrived in; AsyncHTTPClient hands over the next part only once the write is done, so writes never
/// overlap. Closed once the write under way, if any, is done.
final class FileSink: Sendable {
    /// A problem with the download's file, naming it.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private struct State {
        var isWriting = false
        var isCloseRequested = false
        var isClosed = false
    }

    private let url: URL
    private let handle: FileHandle
    private let state = NIOLockedValueBox(State())

    /// Opens `url` for writing after its first `offset` bytes, creating it if needed.
    init(url: URL, truncatingAt offset: Int64) throws {
        self.url = url
        do {
            handle = try ResponseDelivery.openFile(url, resumingAt: offset)
        } catch {
            throw Failure(description: "could not open \(url.path) for writing: \(error)")
        }
    }

    /// Appends `buffer`; the future fails with a ``Failure`` when the write fails.
    func write(_ buffer: ByteBuffer, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let descriptor = handle.fileDescriptor
        let path = url.path
        state.withLockedValue { $0.isWriting = true }
        let written = NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            try buffer.withUnsafeReadableBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        throw Failure(
                            description: "could not write the response to \(path): \(String(cString: strerror(errno)))")
                    }
                    offset += count
                }
            }
        }
        written.whenComplete { [self] _ in
            let close = state.withLockedValue { state -> Bool in
                state.isWriting = false
                return state.isCloseRequested && !state.isClosed
            }
            if close { try? closeNow() }
        }
        return written
    }

    /// Closes the file: at once, or once the write under way is done (its error is then not reported).
    func close() throws {
        let now = state.withLockedValue { state -> Bool in
            state.isCloseRequested = true
            return !state.isWriting && !state.isClosed
        }
        if now { try closeNow() }
    }

    private func closeNow() throws {
        let first = state.withLockedValue { state -> Bool in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard first else { return }
        do {
            try handle.close()
        } catch {
            throw Failure(description: "could not write the response to \(url.path): \(error)")
        }
    }
}

/// `write(2)`, under a name that does not clash with the methods called `write`.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #elseif canImport(Musl)
    Musl.write(descriptor, bytes, count)
    #else
    Darwin.write(descriptor, bytes, count)
    #endif
}

public import Foundation

/// A response body as it arrives: an `AsyncSequence` of chunks with backpressure.
///
/// ```swift
/// switch await chain.stream(HTTPRequest(path: "/events")) {
/// case .success(let streamed):
///     for try await line in streamed.body.lines { handle(line) }
/// case .failure(let error): print(error)
/// }
/// ```
///
/// The stream holds at most ``bufferLimit`` bytes in memory that the consumer has not taken. Beyond that the
/// transport pauses the transfer until the consumer catches up (Apple platforms), or — where a transfer cannot
/// be paused (URLSession on Linux: a suspended task keeps receiving, and a resumed one starts over) — the stream
/// spills the rest to a temporary file that it reads back in order and deletes at the end. Either way a slow
/// consumer never makes the process hold the body in memory. The stream ends exactly once: when the body is complete
/// (the sequence ends), when the transfer fails (the iteration throws an ``HTTPError``), or when it is
/// cancelled — by ``cancel()``, by cancelling the task that iterates it, or by dropping the stream and every
/// iterator of it, which stops the transfer too.
///
/// The stream is meant for one consumer: iterating it from two places at once hands each chunk to one of them.
public final class HTTPBodyStream: AsyncSequence, Sendable {
    public typealias Element = Data

    private struct State {
        var chunks: [Data] = []
        var head = 0
        var bufferedBytes = 0
        /// How the body ended, once it has: `nil` when it is complete.
        var end: HTTPError??
        var waiter = Waiters<Void>()
        var waiterID: UInt64?
        /// Whether the transfer should be paused: decided under the lock, by deliver and by the consumer.
        var producerIsPaused = false
        /// What the pause closure was last called with, and whether a thread is calling it: the calls are made one
        /// at a time, until the transport has the state last decided (``applyPauseChanges()``).
        var appliedPause = false
        var isApplyingPause = false
        /// The thread calling the pause closure, while one is: a deliver from inside that call (a transport that
        /// reads on at once when resumed) leaves the call to the loop already running on its thread.
        var pauseCaller: ObjectIdentifier?
        var cancelTransfer: (@Sendable () -> Void)?
        var pauseTransfer: (@Sendable (Bool) -> Void)?
        /// Bytes received beyond the limit while the transfer could not be paused, in arrival order after the
        /// chunks in memory.
        var spill: SpillFile?
    }

    /// The most bytes held for the consumer before the transport stops reading. 256 KiB by default.
    public let bufferLimit: Int
    private let request: HTTPRequest
    private let state = Locked(State())
    /// Signalled when a thread stops calling the pause closure: a deliver that decided to pause while another
    /// thread was calling it waits for that thread, so the transport is paused when the deliver returns.
    private let pauseCallsEnded = NSCondition()

    /// A stream that a transport feeds: for terminal loaders of your own (a transport over another HTTP client).
    ///
    /// The transport makes the stream when the response head arrives, sets how to stop and pause its transfer with
    /// ``connect(cancel:pause:)``, hands each chunk over with ``deliver(_:)`` as it arrives, and ends it exactly
    /// once with ``finish(throwing:)``:
    ///
    /// ```swift
    /// let stream = HTTPBodyStream(request: request)
    /// stream.connect(cancel: { transfer.cancel() }, pause: { paused in transfer.setReading(!paused) })
    /// var response = HTTPResponse(request: request, status: status, headers: headers)
    /// response.bodyStream = stream
    /// // as the transfer goes on:
    /// stream.deliver(chunk)
    /// stream.finish()  // or stream.finish(throwing: HTTPError(.cannotConnect, request: request))
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request whose response body this is, for the errors the stream throws.
    ///   - bufferLimit: The most bytes held for the consumer before the producer pauses.
    public init(request: HTTPRequest, bufferLimit: Int = 256 * 1024) {
        self.request = request
        self.bufferLimit = Swift.max(1, bufferLimit)
    }

    /// A stream of a body that is already complete: for transports and test doubles that produce bodies in
    /// memory.
    public convenience init(request: HTTPRequest, completeBody body: Data, chunkSize: Int = 64 * 1024) {
        self.init(request: request, bufferLimit: Swift.max(1, body.count))
        var offset = 0
        while offset < body.count {
            let end = Swift.min(body.count, offset + Swift.max(1, chunkSize))
            deliver(body.subdata(in: offset..<end))
            offset = end
        }
        finish()
    }

    deinit {
        let cancel = state.withLock { state -> (@Sendable () -> Void)? in
            state.end == nil ? state.cancelTransfer : nil
        }
        cancel?()
        state.withLock { $0.spill?.remove() }
    }

    // MARK: - Producer side

    /// Sets what stops the transfer (when the consumer cancels or drops the stream), and what pauses and
    /// resumes it when the buffer is full (`nil`: the stream spills to a file instead). For transports.
    ///
    /// - Parameters:
    ///   - cancel: Stops the transfer. Called at most once, from the consumer's thread, or at once when the
    ///     stream was cancelled before it was connected.
    ///   - pause: Called with `true` from ``deliver(_:)`` when the buffer passes ``bufferLimit``, and with `false`
    ///     from the consumer's thread once it has taken half of it. Must not block.
    public func connect(cancel: @escaping @Sendable () -> Void, pause: (@Sendable (Bool) -> Void)?) {
        let cancelledAlready = state.withLock { state -> Bool in
            state.cancelTransfer = cancel
            state.pauseTransfer = pause
            if case .some(.some(let error)) = state.end, error.code == .cancelled { return true }
            return false
        }
        if cancelledAlready { cancel() }
    }

    /// Hands a chunk to the consumer. When the buffer is over its limit the transfer pauses, through the
    /// closure given to ``connect(cancel:pause:)``; without one the chunk goes to the spill file. Chunks after the
    /// end are dropped. For transports.
    ///
    /// - Parameter chunk: The next bytes of the body.
    public func deliver(_ chunk: Data) {
        guard !chunk.isEmpty else { return }
        enum PauseCall { case none, apply, awaitCaller }
        let (waiter, pauseCall, failure) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, PauseCall, HTTPError?) in
            guard state.end == nil else { return (nil, .none, nil) }
            if state.spill?.hasUnreadBytes == true || (state.pauseTransfer == nil && state.bufferedBytes > bufferLimit)
            {
                do {
                    if state.spill == nil { state.spill = try SpillFile() }
                    try state.spill?.append(chunk)
                } catch {
                    return (
                        nil, .none,
                        HTTPError(
                            .unknown, request: request,
                            message:
                                "could not keep the streamed body for a slow consumer in a temporary file: \(error)",
                            underlyingError: error)
                    )
                }
            } else {
                state.chunks.append(chunk)
                state.bufferedBytes += chunk.count
            }
            let waiter = state.waiterID.flatMap { state.waiter.answer($0, with: ()) }
            if waiter != nil { state.waiterID = nil }
            guard state.bufferedBytes > bufferLimit, !state.producerIsPaused, state.pauseTransfer != nil else {
                return (waiter, .none, nil)
            }
            state.producerIsPaused = true
            return (waiter, Self.claimPauseCalls(&state) ? .apply : .awaitCaller, nil)
        }
        if let failure {
            finish(throwing: failure)
            state.withLock { $0.cancelTransfer }?()
            return
        }
        waiter?.resume()
        switch pauseCall {
        case .none: break
        case .apply: applyPauseChanges()
        case .awaitCaller: awaitPauseCalls()
        }
    }

    /// Under the lock, after a change of `producerIsPaused`: whether this thread is to call the pause closure (no other
    /// thread is calling it now).
    private static func claimPauseCalls(_ state: inout State) -> Bool {
        guard !state.isApplyingPause else { return false }
        state.isApplyingPause = true
        state.pauseCaller = ObjectIdentifier(Thread.current)
        return true
    }

    /// A deliver decided to pause while another thread was calling the pause closure (a read resuming the
    /// transfer): that thread's loop makes the call, and the deliver returns only once it has, so a transport that
    /// reads on until told to pause is told before its next chunk. Without the wait, a consumer thread descheduled
    /// between its two calls let the producer run on past the limit for as long as it slept. A deliver from inside
    /// the call, on the caller's own thread, does not wait: the loop it is nested in makes the call when it returns.
    private func awaitPauseCalls() {
        let thread = ObjectIdentifier(Thread.current)
        pauseCallsEnded.lock()
        defer { pauseCallsEnded.unlock() }
        while state.withLock({ $0.isApplyingPause && $0.pauseCaller != thread }) {
            pauseCallsEnded.wait()
        }
    }

    /// Calls the pause closure, one call at a time, until the transport has the state last decided. A deliver that
    /// pauses and a read that resumes decide in turn under the lock; called in the other order outside it, they
    /// would leave the transfer paused with nothing buffered, and the stream would wait forever.
    private func applyPauseChanges() {
        while let (pause, paused) = state.withLock({ state -> ((@Sendable (Bool) -> Void), Bool)? in
            guard let pause = state.pauseTransfer, state.appliedPause != state.producerIsPaused else {
                state.isApplyingPause = false
                state.pauseCaller = nil
                return nil
            }
            state.appliedPause = state.producerIsPaused
            return (pause, state.producerIsPaused)
        }) {
            pause(paused)
        }
        pauseCallsEnded.lock()
        pauseCallsEnded.broadcast()
        pauseCallsEnded.unlock()
    }

    /// Ends the stream: complete (`error == nil`) or failed. Only the first end counts. For transports.
    ///
    /// - Parameter error: Why the transfer failed, or `nil` when the body is complete.
    public func finish(throwing error: HTTPError? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.end == nil else { return nil }
            state.end = .some(error)
            if error?.code == .cancelled {
                // Cancelled: what was received and not taken is dropped, and iteration ends at once. (After a
                // failure, the bytes that arrived before it are still handed over, then the error.)
                state.chunks = []
                state.head = 0
                state.bufferedBytes = 0
                state.spill?.remove()
                state.spill = nil
            }
            let waiter = state.waiterID.flatMap { state.waiter.answer($0, with: ()) }
            state.waiterID = nil
            state.producerIsPaused = false
            return waiter
        }
        waiter?.resume()
    }

    /// Whether the stream has ended (complete, failed or cancelled).
    public var isFinished: Bool { state.withLock { $0.end != nil } }

    /// The bytes received and not yet taken by the consumer.
    public var bufferedByteCount: Int { state.withLock { $0.bufferedBytes } }

    /// Whether the stream has paused its transfer because the consumer lags (for tests).
    package var isProducerPaused: Bool { state.withLock { $0.producerIsPaused } }

    // MARK: - Consumer side

    /// Stops the transfer and drops what the consumer has not taken; iteration ends by throwing
    /// ``HTTPError/Code/cancelled``. Does nothing once the consumer has taken the whole body, or the stream failed.
    public func cancel() {
        let cancelTransfer = state.withLock { state -> (@Sendable () -> Void)? in
            // A body that arrived completely but is not consumed yet is dropped too.
            if case .some(.none) = state.end, state.head < state.chunks.count || state.spill?.hasUnreadBytes == true {
                state.end = nil
            }
            guard state.end == nil else { return nil }
            return state.cancelTransfer
        }
        finish(throwing: HTTPError(.cancelled, request: request, message: "the response body's stream was cancelled"))
        cancelTransfer?()
    }

    /// The next chunk, waiting for it; `nil` once the body is complete.
    func next() async throws(HTTPError) -> Data? {
        while true {
            let id = state.withLock { $0.waiter.nextID() }
            enum Taken {
                case chunk(Data, appliesPause: Bool)
                case end(HTTPError?)
                case failed(HTTPError)
                case wait
            }
            var taken = Taken.wait
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    taken = state.withLock { state -> Taken in
                        if state.head < state.chunks.count {
                            let chunk = state.chunks[state.head]
                            state.head += 1
                            state.bufferedBytes -= chunk.count
                            if state.head == state.chunks.count {
                                state.chunks.removeAll(keepingCapacity: true)
                                state.head = 0
                            } else if state.head > 64, state.head * 2 > state.chunks.count {
                                state.chunks.removeFirst(state.head)
                                state.head = 0
                            }
                            var appliesPause = false
                            if state.producerIsPaused, state.bufferedBytes <= bufferLimit / 2 {
                                state.producerIsPaused = false
                                appliesPause = Self.claimPauseCalls(&state)
                            }
                            state.waiter.answerUnparked(id, with: ())
                            return .chunk(chunk, appliesPause: appliesPause)
                        }
                        if let spill = state.spill, spill.hasUnreadBytes {
                            state.waiter.answerUnparked(id, with: ())
                            do {
                                let chunk = try spill.read(upTo: 64 * 1024)
                                if !spill.hasUnreadBytes {
                                    spill.remove()
                                    state.spill = nil
                                }
                                return .chunk(chunk, appliesPause: false)
                            } catch {
                                return .failed(
                                    HTTPError(
                                        .unknown, request: request,
                                        message: "could not read back the streamed body kept in a temporary file",
                                        underlyingError: error))
                            }
                        }
                        if let end = state.end {
                            state.waiter.answerUnparked(id, with: ())
                            return .end(end)
                        }
                        state.waiter.park(id, continuation)
                        state.waiterID = id
                        return .wait
                    }
                    if case .wait = taken { return }
                    continuation.resume()
                }
            } onCancel: {
                self.cancel()
            }
            state.withLock { _ = $0.waiter.takeAnswer(id) }
            switch taken {
            case .chunk(let chunk, let appliesPause):
                if appliesPause { applyPauseChanges() }
                return chunk
            case .failed(let error):
                finish(throwing: error)
                state.withLock { $0.cancelTransfer }?()
                throw error
            case .end(let error):
                if let error { throw error }
                return nil
            case .wait:
                continue  // woken: look again
            }
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: HTTPBodyStream

        public mutating func next() async throws(HTTPError) -> Data? {
            try await stream.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// The rest of the body in memory, failing once it passes `limit` bytes.
    public func collect(upTo limit: Int = .max) async throws(HTTPError) -> Data {
        var data = Data()
        for try await chunk in self {
            guard data.count + chunk.count <= limit else {
                cancel()
                throw HTTPError(.invalidResponse, request: request, message: "the body is longer than \(limit) bytes")
            }
            data.append(chunk)
        }
        return data
    }

    /// The body's lines, decoded as UTF-8, without their line terminators (LF or CRLF): for JSON Lines and
    /// similar formats.
    public var lines: AsyncThrowingStream<String, any Error> {
        let stream = self
        return AsyncThrowingStream { continuation in
            let task = Task {
                var pending = Data()
                do {
                    for try await chunk in stream {
                        pending.append(chunk)
                        while let newline = pending.firstIndex(of: 0x0A) {
                            var line = pending[pending.startIndex..<newline]
                            if line.last == 0x0D { line = line.dropLast() }
                            continuation.yield(String(decoding: line, as: UTF8.self))
                            pending = Data(pending[(newline + 1)...])
                        }
                    }
                    if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// A stream's bytes beyond its limit, in a temporary file: appended at the end, read from the front.
final class SpillFile: @unchecked Sendable {  // Sendable: used only inside its stream's lock
    private let url: URL
    private let writer: FileHandle
    private let reader: FileHandle
    private var written: UInt64 = 0
    private var read: UInt64 = 0

    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "http-stream-\(UUID().uuidString).spill")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw BodyError("could not create \(url.path)")
        }
        writer = try FileHandle(forWritingTo: url)
        reader = try FileHandle(forReadingFrom: url)
    }

    var hasUnreadBytes: Bool { read < written }

    func append(_ data: Data) throws {
        try writer.write(contentsOf: data)
        written += UInt64(data.count)
    }

    func read(upTo count: Int) throws -> Data {
        try reader.seek(toOffset: read)
        let data = try reader.read(upToCount: Int(min(UInt64(count), written - read))) ?? Data()
        read += UInt64(data.count)
        return data
    }

    func remove() {
        try? writer.close()
        try? reader.close()
        try? FileManager.default.removeItem(at: url)
    }
}

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
    typealias Machine = BodyStreamStateMachine
    /// What ``whenEnded(_:)`` calls: the bytes the transport delivered, and the error the body ended with (`nil`:
    /// complete).
    package typealias EndObserver = @Sendable (_ delivered: Int64, _ failure: HTTPError?) -> Void

    /// The machine, and what performing its actions needs: the parked consumers, the transport's closures and the
    /// spill file.
    struct Driven {
        var machine: Machine
        var consumers: [CheckedContinuation<Void, Never>] = []
        var cancelTransfer: (@Sendable () -> Void)?
        var pauseTransfer: (@Sendable (Bool) -> Void)?
        /// Bytes received beyond the limit while the transfer could not be paused, in arrival order after the
        /// chunks in memory.
        var spill: SpillFile?
        /// Told once, when the body ends: the bytes delivered, and how it ended (``whenEnded(_:)``).
        var endObservers: [EndObserver] = []

        /// Performs under the lock what a ``BodyStreamStateMachine/Action/finished(wake:removeSpill:cancelTransfer:)``
        /// asks (the spill file deleted), and takes what is to happen after it; `nil` for any other action.
        mutating func end(by action: Machine.Action) -> Ended? {
            guard case .finished(let wake, let removeSpill, let cancel) = action else { return nil }
            if removeSpill {
                spill?.remove()
                spill = nil
            }
            defer { endObservers = [] }
            return Ended(
                consumers: takeConsumers(if: wake), cancelTransfer: cancel ? cancelTransfer : nil,
                observers: endObservers, delivered: machine.deliveredBytes, failure: machine.end ?? nil)
        }

        /// The consumers to resume (after the lock) when `wake`.
        mutating func takeConsumers(if wake: Bool) -> [CheckedContinuation<Void, Never>] {
            guard wake else { return [] }
            defer { consumers = [] }
            return consumers
        }
    }

    /// The most bytes held for the consumer before the transport stops reading. 256 KiB by default.
    public let bufferLimit: Int
    let request: HTTPRequest
    let state: Locked<Driven>
    /// Signalled when a thread stops calling the pause closure: a deliver that decided to pause while another
    /// thread was calling it waits for that thread, so the transport is paused when the deliver returns.
    let pauseCallsEnded = NSCondition()

    /// A stream that a transport feeds: for terminal loaders of your own (a transport over another HTTP client).
    ///
    /// The transport makes the stream when the response head arrives, sets how to stop and pause its transfer with
    /// ``connect(cancel:pause:)``, hands each chunk over with ``deliver(_:)`` as it arrives, and ends it exactly
    /// once with ``finish(throwing:)`` (these are for transports: `@_spi(Transport) import HTTP`):
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
    @_spi(Transport) public init(request: HTTPRequest, bufferLimit: Int = 256 * 1024) {
        self.request = request
        let machine = Machine(bufferLimit: bufferLimit)
        self.bufferLimit = machine.bufferLimit
        self.state = Locked(Driven(machine: machine))
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
        let (cancel, observers, delivered) = state.withLock {
            driven -> ((@Sendable () -> Void)?, [EndObserver], Int64) in
            guard !driven.machine.isEnded else { return (nil, [], 0) }
            defer { driven.endObservers = [] }
            return (driven.cancelTransfer, driven.endObservers, driven.machine.deliveredBytes)
        }
        cancel?()
        state.withLock { $0.spill?.remove() }
        if !observers.isEmpty {
            let dropped = HTTPError(.cancelled, request: request, message: "the response body's stream was dropped")
            for observer in observers { observer(delivered, dropped) }
        }
    }

    /// Calls `observer` once, when the body ends — complete, failed, cancelled, or dropped unread — with the bytes
    /// the transport delivered and the error it ended with; at once when it has ended already. For loaders that
    /// report on a body they pass on (``PrintLoader``), without standing between it and its consumer.
    package func whenEnded(_ observer: @escaping EndObserver) {
        let ended = state.withLock { driven -> (Int64, HTTPError?)? in
            guard let end = driven.machine.end else {
                driven.endObservers.append(observer)
                return nil
            }
            return (driven.machine.deliveredBytes, end)
        }
        if let (delivered, failure) = ended { observer(delivered, failure) }
    }

    /// What follows the end of the body, after the lock: the consumers resumed, the transfer cancelled (when the
    /// consumer ended it), the end observers told.
    struct Ended {
        var consumers: [CheckedContinuation<Void, Never>]
        var cancelTransfer: (@Sendable () -> Void)?
        var observers: [EndObserver]
        var delivered: Int64
        var failure: HTTPError?

        func perform() {
            for consumer in consumers { consumer.resume() }
            cancelTransfer?()
            for observer in observers { observer(delivered, failure) }
        }
    }

    /// Whether the stream has ended (complete, failed or cancelled).
    public var isFinished: Bool { state.withLock { $0.machine.isEnded } }

    /// The bytes received and not yet taken by the consumer.
    public var bufferedByteCount: Int { state.withLock { $0.machine.bufferedBytes } }

    /// Whether the stream has paused its transfer because the consumer lags (for tests).
    package var isProducerPaused: Bool { state.withLock { $0.machine.isPauseDecided } }

    /// The thread that calls: see ``BodyStreamStateMachine/Caller``.
    static func currentCaller() -> Machine.Caller { ObjectIdentifier(Thread.current) }

    /// Sees to the transport's pause closure as the machine said (`caller` is the thread this runs on).
    func perform(_ pause: Machine.PauseCall, caller: Machine.Caller) {
        switch pause {
        case .none:
            return
        case .call:
            // One call at a time, until the transport has the decision last made.
            while let (closure, paused) = state.withLock({ driven -> ((@Sendable (Bool) -> Void), Bool)? in
                guard case .callPause(let paused) = driven.machine.handle(.pauseCallDue(caller)),
                    let closure = driven.pauseTransfer
                else { return nil }
                return (closure, paused)
            }) {
                closure(paused)
            }
            pauseCallsEnded.lock()
            pauseCallsEnded.broadcast()
            pauseCallsEnded.unlock()
        case .awaitCaller:
            pauseCallsEnded.lock()
            defer { pauseCallsEnded.unlock() }
            while state.withLock({ $0.machine.isCallingPause(otherThan: caller) }) {
                pauseCallsEnded.wait()
            }
        }
    }

    // MARK: - Consumer side

    /// Stops the transfer and drops what the consumer has not taken; iteration ends by throwing
    /// ``HTTPError/Code/cancelled``. Does nothing once the consumer has taken the whole body, or the stream failed.
    public func cancel() {
        let cancelled = HTTPError(.cancelled, request: request, message: "the response body's stream was cancelled")
        state.withLock { $0.end(by: $0.machine.handle(.cancel(cancelled))) }?.perform()
    }

    /// What a read took from the stream, to act on after the lock.
    private enum Taken {
        case chunk(Data, resumes: Bool)
        case end(HTTPError?)
        case failed(HTTPError)
        case wait
    }

    /// The next chunk, waiting for it; `nil` once the body is complete.
    func next() async throws(HTTPError) -> Data? {
        while true {
            // A chunk or the end that is there already is taken without suspending the task (no continuation, no
            // cancellation handler: most reads of a small body). A cancelled task takes the other way, whose
            // cancellation handler cancels the stream first.
            var taken: Taken? =
                Task.isCancelled
                ? nil : state.withLock { driven in driven.machine.isReadReady ? read(&driven, parking: nil) : nil }
            if taken == nil {
                var parked = Taken.wait
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        parked = state.withLock { read(&$0, parking: continuation) }
                        if case .wait = parked { return }
                        continuation.resume()
                    }
                } onCancel: {
                    self.cancel()
                }
                taken = parked
            }
            switch taken ?? .wait {
            case .chunk(let chunk, let resumes):
                if resumes {
                    // The thread this task runs on now: it may not be the one it read on.
                    let caller = Self.currentCaller()
                    let action = state.withLock { $0.machine.handle(.resumeDue(caller)) }
                    if case .pause(let pause) = action { perform(pause, caller: caller) }
                }
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

    /// Reads under the lock: a chunk (from memory or the spill file), the end, or — when nothing is there yet —
    /// `continuation` parked until a delivery or the end wakes it. Without a continuation it is called only when
    /// the machine is ready to be read (``BodyStreamStateMachine/isReadReady``), so it never parks.
    private func read(_ driven: inout Driven, parking continuation: CheckedContinuation<Void, Never>?) -> Taken {
        switch driven.machine.handle(.read) {
        case .chunk(let chunk, let resumes):
            return .chunk(chunk, resumes: resumes)
        case .readSpill(let count):
            do {
                let chunk = try driven.spill?.read(upTo: count) ?? Data()
                if case .removeSpill = driven.machine.handle(.spillRead(chunk.count)) {
                    driven.spill?.remove()
                    driven.spill = nil
                }
                return .chunk(chunk, resumes: false)
            } catch {
                return .failed(
                    HTTPError(
                        .unknown, request: request,
                        message: "could not read back the streamed body kept in a temporary file",
                        underlyingError: error))
            }
        case .end(let error):
            return .end(error)
        case .wait:
            if let continuation { driven.consumers.append(continuation) }
            return .wait
        default:
            return .failed(HTTPError(.unknown, request: request, message: "the stream lost its state"))
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

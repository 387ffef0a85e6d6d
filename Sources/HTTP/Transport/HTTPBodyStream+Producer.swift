public import Foundation

/// The producer half of a body stream: what a transport calls as the body arrives. Behind `@_spi(Transport)`, so
/// that an app sees only the consumer half; a transport of its own imports it with `@_spi(Transport) import HTTP`.
extension HTTPBodyStream {
    /// Sets what stops the transfer (when the consumer cancels or drops the stream), and what pauses and
    /// resumes it when the buffer is full (`nil`: the stream spills to a file instead). For transports.
    ///
    /// - Parameters:
    ///   - cancel: Stops the transfer. Called at most once, from the consumer's thread, or at once when the
    ///     stream was cancelled before it was connected.
    ///   - pause: Called with `true` from ``deliver(_:)`` when the buffer passes ``bufferLimit``, and with `false`
    ///     from the consumer's thread once it has taken half of it; one call at a time, in the order decided (a
    ///     call is nested in another only when the transport delivers from inside it). Must not block.
    @_spi(Transport) public func connect(cancel: @escaping @Sendable () -> Void, pause: (@Sendable (Bool) -> Void)?) {
        let cancelledAlready = state.withLock { driven -> Bool in
            driven.cancelTransfer = cancel
            driven.pauseTransfer = pause
            guard case .cancelTransfer = driven.machine.handle(.connect(pausable: pause != nil)) else { return false }
            return true
        }
        if cancelledAlready { cancel() }
    }

    /// Hands a chunk to the consumer. When the buffer is over its limit the transfer pauses, through the
    /// closure given to ``connect(cancel:pause:)`` — the call is made before this returns, or by the thread
    /// already calling it, which this waits for —; without one the chunk goes to the spill file. Chunks after the
    /// end are dropped. For transports.
    ///
    /// - Parameter chunk: The next bytes of the body.
    @_spi(Transport) public func deliver(_ chunk: Data) {
        guard !chunk.isEmpty else { return }
        let caller = Self.currentCaller()
        let outcome = state.withLock {
            driven -> Result<([CheckedContinuation<Void, Never>], Machine.PauseCall), HTTPError> in
            var action = driven.machine.handle(.deliver(chunk, caller: caller))
            if case .writeSpill(let chunk) = action {
                do {
                    if driven.spill == nil { driven.spill = try SpillFile() }
                    try driven.spill?.append(chunk)
                } catch {
                    return .failure(
                        HTTPError(
                            .unknown, request: request,
                            message: "could not keep the streamed body for a slow consumer in a temporary file",
                            underlyingError: error))
                }
                action = driven.machine.handle(.spillWritten(chunk.count, caller: caller))
            }
            guard case .stored(let wake, let pause) = action else { return .success(([], .none)) }
            return .success((driven.takeConsumers(if: wake), pause))
        }
        switch outcome {
        case .failure(let failure):
            finish(throwing: failure)
            state.withLock { $0.cancelTransfer }?()
        case .success(let (consumers, pause)):
            for consumer in consumers { consumer.resume() }
            perform(pause, caller: caller)
        }
    }

    /// Ends the stream: complete (`error == nil`) or failed. Only the first end counts. For transports.
    ///
    /// - Parameter error: Why the transfer failed, or `nil` when the body is complete.
    @_spi(Transport) public func finish(throwing error: HTTPError? = nil) {
        state.withLock { $0.end(by: $0.machine.handle(.finish(error))) }?.perform()
    }
}

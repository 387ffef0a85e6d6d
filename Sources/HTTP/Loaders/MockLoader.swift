public import Foundation

/// A terminal loader that answers from a queue of handlers instead of a network, for tests.
///
/// Each load takes the next handler in the queue and returns what it returns; with no handler left, the
/// load fails with ``HTTPError/Code/cannotConnect``. Every request received is recorded in
/// ``receivedRequests``, so a test can check what the chain above actually sent.
///
/// ```swift
/// let mock = MockLoader()
///     .then { request in .success(HTTPResponse(request: request, status: .ok, body: personJSON)) }
///     .then(status: .notFound)
/// let chain = ApplyEnvironment(environment: .production) --> mock
///
/// let first = await chain.load(HTTPRequest(path: "/people/42"))
/// #expect(mock.receivedRequests.first?.url?.absoluteString == "https://api.example.com/v1/people/42")
/// ```
///
/// Handlers may be `async`; a handler that awaits a cancellable operation (such as `Task.sleep`) lets
/// tests exercise cancellation. A load whose task is already cancelled completes with
/// ``HTTPError/Code/cancelled`` without using a handler or being recorded; one cancelled while its handler
/// runs completes with ``HTTPError/Code/cancelled`` at once, whatever the handler returns later (the handler's
/// task is cancelled too).
///
/// A request that asks for its body as a stream or in a file (``HTTPRequest/responseDelivery``) gets the
/// handler's body that way (a handler that sets ``HTTPResponse/bodyStream`` itself streams its chunks as it delivers
/// them), and a request with a ``HTTPRequest/progressHandler`` gets its progress reported as a
/// transport reports it: the body sent, the response's body received (a resumed download's `206` counting what is
/// on disk), and the final report.
///
/// As a terminal it measures each handler's run — ``HTTPResponse/metrics`` (or ``HTTPError/metrics``) from the moment it
/// calls the handler until the result, with the response body's size; a handler may set metrics of its own — and
/// reports it to the load's observers (``HTTPEvent/Kind/attemptStarted``, ``HTTPEvent/Kind/attemptFinished``).
///
/// As a terminal it takes part in a reset like ``URLSessionLoader``: during one it refuses loads with
/// ``HTTPError/Code/resetInProgress``; ``ResetMode/drain`` waits for running handlers to return, and
/// ``ResetMode/cancel`` completes their loads with ``HTTPError/Code/cancelled`` at once.
// Safety: configuration is immutable (`let`); mutable state is behind one lock (`Locked`).
public final class MockLoader: HTTPLoader, @unchecked Sendable {
    /// Produces the result for one request.
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResult

    private struct State {
        var handlers: [Handler] = []
        var nextHandler = 0
        var received: [HTTPRequest] = []
        /// Loads whose handler runs, waiting for its result, a cancellation or a cancelling reset.
        var running = Waiters<HTTPResult?>()
        var handlerTasks: [UInt64: Task<Void, Never>] = [:]
        /// Counts cancelling resets, so that a load that was accepted before one began but parks after it is
        /// cancelled too.
        var cancellingResets: UInt64 = 0
    }

    private let state = Locked(State())
    /// Counted for the whole load, so that a reset of a chain that is only this loader waits for its handlers.
    private var inFlight: InFlightLoads { participation.inFlight }

    public override init() {}

    /// Appends a handler to the queue; the *n*th load is answered by the *n*th handler.
    ///
    /// - Returns: The loader itself, so handlers can be chained.
    @discardableResult
    public func then(_ handler: @escaping Handler) -> MockLoader {
        state.withLock { $0.handlers.append(handler) }
        return self
    }

    /// Appends a handler that answers with a fixed status, header fields and body.
    @discardableResult
    public func then(status: HTTPStatus, headers: HTTPHeaders = [:], body: Data = Data()) -> MockLoader {
        then { request in .success(HTTPResponse(request: request, status: status, headers: headers, body: body)) }
    }

    /// Appends a handler that fails with `code`.
    @discardableResult
    public func then(failWith code: HTTPError.Code, message: String? = nil) -> MockLoader {
        then { request in .failure(HTTPError(code, request: request, message: message)) }
    }

    /// The requests received so far, in order.
    public var receivedRequests: [HTTPRequest] {
        state.withLock { $0.received }
    }

    /// The number of handlers not yet used.
    public var pendingHandlerCount: Int {
        state.withLock { $0.handlers.count - $0.nextHandler }
    }

    private enum Decision {
        case run(Handler, UInt64, epoch: UInt64)
        case noHandler(Int)
        case refused
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        // Counted before the reset check (see `HTTPLoader.send(_:to:)`).
        inFlight.begin()
        defer { inFlight.end() }
        if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }
        let decision = state.withLock { state -> Decision in
            if isResetting, !request.isPartOfReset { return .refused }
            state.received.append(request)
            guard state.nextHandler < state.handlers.count else { return .noHandler(state.received.count) }
            defer { state.nextHandler += 1 }
            return .run(state.handlers[state.nextHandler], state.running.nextID(), epoch: state.cancellingResets)
        }
        switch decision {
        case .refused:
            return .failure(resetRefusal(of: request))
        case .noHandler(let number):
            return .failure(
                HTTPError(
                    .cannotConnect,
                    request: request,
                    message: "MockLoader has no handler left for request #\(number); add one with then(_:)"
                )
            )
        case .run(let handler, let id, let epoch):
            let metrics = HTTPMetrics(startingNowFor: request)
            request.emit(.attemptStarted)
            let outcome = await run(handler, id: id, epoch: epoch, for: request)
            var result: HTTPResult =
                if Task.isCancelled {
                    .failure(HTTPError(.cancelled, request: request))
                } else {
                    outcome ?? .failure(HTTPError(.cancelled, request: request, message: "cancelled by a reset"))
                }
            if case .success(let response) = result {
                Self.reportProgress(of: request, answeredWith: response)
                // A stream or a download gets the handler's body the way the request asks for it.
                if request.responseDelivery != .buffered { result = response.delivered(for: request) }
            }
            return finish(result, of: request, measuredFrom: metrics)
        }
    }

    /// Reports progress to the request's ``HTTPRequest/progressHandler`` as a transport would: the body sent,
    /// the head (its `Content-Length`, a resumed download's `Content-Range`), the body received, and the final
    /// report.
    private static func reportProgress(of request: HTTPRequest, answeredWith response: HTTPResponse) {
        // Only a replayable body is measured: making a one-shot body's source would use it up.
        let length = request.body.isReplayable ? (try? request.body.makeSource())?.length : nil
        let offset: Int64 = if case .file(_, let offset) = request.responseDelivery { offset } else { 0 }
        guard let progress = ProgressReporter(request: request, totalBytesToSend: length, alreadyReceived: offset)
        else { return }
        if let length { progress.sent(totalBytes: length, expected: length) }
        progress.receivedHead(
            status: response.status.rawValue, contentRange: response.headers["Content-Range"],
            declaredLength: response.headers["Content-Length"].flatMap { Int64($0) })
        progress.received(response.body.count)
        progress.complete()
    }

    /// `result` with metrics from `start` until now, unless its handler gave it some; reported to the load's
    /// observers (``HTTPEvent/Kind/attemptFinished``) as a terminal does.
    private func finish(
        _ result: consuming HTTPResult, of request: HTTPRequest, measuredFrom start: HTTPMetrics
    ) -> HTTPResult {
        var metrics = start
        metrics.end = .now
        let isMeasured: Bool
        switch result {
        case .success(let response):
            isMeasured = response.metrics != nil
            metrics.responseBodyBytesReceived = Int64(response.body.count)
        case .failure(let error):
            isMeasured = error.metrics != nil
        }
        let measured = isMeasured ? result : HTTPResult.attaching(metrics, to: result)
        request.emit(.attemptFinished, result: measured)
        return measured
    }

    /// Runs `handler` in a task of its own, so that a cancellation or a cancelling reset ends the load at once;
    /// `nil` when it was ended so.
    private func run(
        _ handler: @escaping Handler, id: UInt64, epoch: UInt64, for request: HTTPRequest
    ) async -> HTTPResult? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let endedAlready = state.withLock { state -> Bool in
                    if Task.isCancelled || state.cancellingResets != epoch {
                        state.running.answerUnparked(id, with: nil)
                        return true
                    }
                    state.running.park(id, continuation)
                    return false
                }
                if endedAlready {
                    continuation.resume()
                    return
                }
                let task = Task {
                    let result = await handler(request)
                    self.finish(id, with: result)
                }
                let endedMeanwhile = state.withLock { state -> Bool in
                    guard state.running.isWaiting(id) else { return true }
                    state.handlerTasks[id] = task
                    return false
                }
                if endedMeanwhile { task.cancel() }
            }
            return state.withLock { state in
                state.handlerTasks[id] = nil
                return state.running.takeAnswer(id) ?? nil
            }
        } onCancel: {
            finish(id, with: nil)
        }
    }

    /// Ends the load `id` with `result` (`nil`: cancelled), if it has not ended yet, and cancels its handler.
    private func finish(_ id: UInt64, with result: HTTPResult?) {
        let (waiter, task) = state.withLock { state in
            (state.running.answer(id, with: result), result == nil ? state.handlerTasks[id] : nil)
        }
        task?.cancel()
        waiter?.resume()
    }

    /// With ``ResetMode/cancel``, ends the running loads as cancelled.
    public override func failHeldLoads(_ mode: ResetMode) {
        guard mode == .cancel else { return }
        let (waiters, tasks) = state.withLock { state in
            state.cancellingResets += 1
            return (state.running.answerAll(with: nil), Array(state.handlerTasks.values))
        }
        for task in tasks { task.cancel() }
        for waiter in waiters { waiter.resume() }
    }
}

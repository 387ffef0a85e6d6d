public import Foundation

/// The handle of one load started with a completion handler; use it to cancel the load.
///
/// The completion handler runs exactly once: with the result, or with ``HTTPError/Code/cancelled`` as soon
/// as ``cancel()`` is called, whichever comes first. It runs on whichever thread finishes the load; hop to
/// your own executor if you need one.
///
/// ```swift
/// let task = chain.load(request) { result in print(result) }
/// task.cancel()  // the handler runs now, with .cancelled
/// ```
public final class HTTPTask: Sendable {
    private enum State {
        case running(completion: @Sendable (HTTPResult) -> Void, onCancel: (@Sendable () -> Void)?)
        case finished
    }

    /// The request being loaded.
    public let request: HTTPRequest
    private let state: Locked<State>

    /// Creates a task whose completion handler runs exactly once.
    ///
    /// You need this only when you bridge other asynchronous code; ``HTTPLoader/load(_:completion:)``
    /// creates tasks for you.
    public init(request: HTTPRequest, completion: @escaping @Sendable (HTTPResult) -> Void) {
        self.request = request
        self.state = Locked(.running(completion: completion, onCancel: nil))
    }

    /// The identifier of the request being loaded.
    public var id: UUID { request.id }

    /// Whether the task has completed, by finishing or by being cancelled.
    public var isFinished: Bool {
        state.withLock { if case .finished = $0 { true } else { false } }
    }

    /// Cancels the load. The completion handler runs at once with ``HTTPError/Code/cancelled`` unless the
    /// task already completed; cancelling twice, or after completion, does nothing.
    ///
    /// - Returns: Whether this call cancelled the task — `false` when it had already completed (its handler
    ///   may still be running with the result that won).
    @discardableResult
    public func cancel() -> Bool {
        let taken = state.withLock { state -> (@Sendable (HTTPResult) -> Void, (@Sendable () -> Void)?)? in
            guard case .running(let completion, let onCancel) = state else { return nil }
            state = .finished
            return (completion, onCancel)
        }
        guard let (completion, onCancel) = taken else { return false }
        onCancel?()
        completion(.failure(HTTPError(.cancelled, request: request)))
        return true
    }

    /// Completes the task with `result`, unless it already completed. Returns whether this call completed it.
    @discardableResult
    public func complete(with result: HTTPResult) -> Bool {
        let completion = state.withLock { state -> (@Sendable (HTTPResult) -> Void)? in
            guard case .running(let completion, _) = state else { return nil }
            state = .finished
            return completion
        }
        guard let completion else { return false }
        completion(result)
        return true
    }

    /// Registers work to run when the task is cancelled: at once, if it already was.
    ///
    /// - Parameter handler: Stops whatever is producing the result, for example by cancelling a Swift `Task`.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard case .running(let completion, _) = state else { return true }
            state = .running(completion: completion, onCancel: handler)
            return false
        }
        if runNow { handler() }
    }
}

extension HTTPLoader {
    /// Starts loading a request and calls `completion` exactly once with its result.
    ///
    /// The callback form of ``load(_:)``, for code that is not `async`.
    ///
    /// - Parameters:
    ///   - request: The request to load.
    ///   - completion: Called exactly once, on an arbitrary thread.
    /// - Returns: A handle that cancels the load.
    @discardableResult
    public func load(_ request: HTTPRequest, completion: @escaping @Sendable (HTTPResult) -> Void) -> HTTPTask {
        let task = HTTPTask(request: request, completion: completion)
        let work = Task {
            let result = await self.load(request)
            task.complete(with: result)
        }
        task.onCancel { work.cancel() }
        return task
    }

    /// Resets the chain from this loader down and calls `completion` when it has quiesced.
    ///
    /// - Parameters:
    ///   - mode: What happens to the loads already sent on; ``ResetMode/drain`` by default.
    ///   - completion: Called once the reset has finished.
    public func reset(mode: ResetMode = .drain, completion: @escaping @Sendable () -> Void) {
        Task {
            await self.reset(mode: mode)
            completion()
        }
    }
}

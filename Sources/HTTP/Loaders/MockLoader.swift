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
/// runs completes with ``HTTPError/Code/cancelled`` whatever the handler returns.
/// ``HTTPLoader/reset()`` returns once every running handler has returned.
// Safety: configuration is immutable (`let`); mutable state, if any, is behind one lock (`Locked`).
public final class MockLoader: HTTPLoader, @unchecked Sendable {
    /// Produces the result for one request.
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResult

    private struct State {
        var handlers: [Handler] = []
        var nextHandler = 0
        var received: [HTTPRequest] = []
    }

    private let state = Locked(State())
    private let inFlight = InFlightLoads()

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

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }
        let handler = state.withLock { state -> (Handler?, Int) in
            state.received.append(request)
            guard state.nextHandler < state.handlers.count else { return (nil, state.received.count) }
            defer { state.nextHandler += 1 }
            return (state.handlers[state.nextHandler], state.received.count)
        }
        guard let next = handler.0 else {
            return .failure(
                HTTPError(
                    .cannotConnect,
                    request: request,
                    message: "MockLoader has no handler left for request #\(handler.1); add one with then(_:)"
                )
            )
        }
        inFlight.begin()
        defer { inFlight.end() }
        let result = await next(request)
        if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }
        return result
    }

    /// Returns once every handler that is running has returned.
    public override func reset() async {
        await inFlight.waitUntilIdle()
        await super.reset()
    }
}

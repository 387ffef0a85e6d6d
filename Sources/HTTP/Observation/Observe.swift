/// A loader that reports every load through it to an ``HTTPEventObserver``: its start and finish, and what the
/// loaders below emit — each attempt the terminal sends, each retry ``Retry`` schedules.
///
/// ```swift
/// let metrics = Observe { event in
///     if event.kind == .loadFinished, let duration = event.duration {
///         print("\(event.loadID) \(event.request.method) \(event.request.path): \(duration)")
///     }
/// }
/// let chain = metrics --> ApplyEnvironment(environment: .production) --> Retry() --> URLSessionLoader()
/// ```
///
/// Each load gets a ``LoadID`` here, unless a loader above stamped one already, and every event names it. The
/// observer rides down the chain with the request, so the loaders below reach it with
/// ``HTTPRequest/emit(_:result:delay:duration:)``.
///
/// ## Where it goes
///
/// At the head of the chain, or at least above ``Retry`` and authentication: there, one load is one
/// ``HTTPEvent/Kind/loadStarted`` … ``HTTPEvent/Kind/loadFinished``, and its retries and replays are attempts
/// within it. Below ``Retry`` it sees each attempt as a load of its own (with the same ``LoadID`` if one was
/// stamped above). Several `Observe` loaders may sit in one chain; each observer gets its own start and finish and
/// every event emitted below it.
// Safety: configuration is immutable (`let`).
public final class Observe: HTTPLoader, @unchecked Sendable {
    /// The observer events go to.
    public let observer: any HTTPEventObserver

    /// - Parameter observer: Receives the events of every load through this loader.
    public init(_ observer: any HTTPEventObserver) {
        self.observer = observer
    }

    /// - Parameter handle: Receives the events of every load through this loader; see ``HTTPEventObserver`` for
    ///   what it may do.
    public convenience init(_ handle: @escaping @Sendable (HTTPEvent) -> Void) {
        self.init(ClosureObserver(body: handle))
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        var observed = request
        let id = observed.observe(with: observer)
        let start = ContinuousClock.now
        observer.handle(HTTPEvent(kind: .loadStarted, loadID: id, request: observed, instant: start))
        let result = await loadNext(observed)
        let end = ContinuousClock.now
        observer.handle(
            HTTPEvent(
                kind: .loadFinished, loadID: id, request: result.request, instant: end, result: result,
                duration: end - start))
        return result
    }
}

extension Result where Success == HTTPResponse, Failure == HTTPError {
    /// The request of the response, or of the error: the copy last sent, or refused.
    var request: HTTPRequest {
        switch self {
        case .success(let response): response.request
        case .failure(let error): error.request
        }
    }
}

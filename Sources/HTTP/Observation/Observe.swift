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
/// observers ride down the chain with the request, so the loaders below reach them with
/// ``HTTPRequest/emit(_:result:delay:duration:)``.
///
/// ## Several observers
///
/// Give one `Observe` every observer of the chain — a logger, metrics, an app's own — rather than one `Observe`
/// each: the load is stamped and timed once, and each event made once for all of them.
///
/// ```swift
/// let observed = Observe(LoadTimes(), SlowLoadLogger())
/// ```
///
/// An observer receives only the kinds it is interested in (``HTTPEventObserver/isInterested(in:)``); an event
/// that none of them wants is not made.
///
/// ## Where it goes
///
/// At the head of the chain, or at least above ``Retry`` and authentication: there, one load is one
/// ``HTTPEvent/Kind/loadStarted`` … ``HTTPEvent/Kind/loadFinished``, and its retries and replays are attempts
/// within it. Below ``Retry`` it sees each attempt as a load of its own (with the same ``LoadID`` if one was
/// stamped above). Several `Observe` loaders may sit in one chain; each one's observers get its own start and finish
/// and every event emitted below it.
// Safety: configuration is immutable (`let`).
public final class Observe: HTTPLoader, @unchecked Sendable {
    /// The observers events go to, in the order they receive each event.
    public let observers: [any HTTPEventObserver]

    /// The first of ``observers``; one that ignores every event when there are none.
    @available(*, deprecated, renamed: "observers")
    public var observer: any HTTPEventObserver { observers.first ?? ClosureObserver(body: { _ in }) }

    /// - Parameter observers: Receive the events of every load through this loader, each in turn.
    public init(_ observers: [any HTTPEventObserver]) {
        self.observers = observers
    }

    /// - Parameters:
    ///   - observer: Receives the events of every load through this loader.
    ///   - more: Receive them too, in turn, after `observer`.
    public convenience init(_ observer: any HTTPEventObserver, _ more: any HTTPEventObserver...) {
        self.init([observer] + more)
    }

    /// - Parameter handle: Receives the events of every load through this loader; see ``HTTPEventObserver`` for
    ///   what it may do.
    public convenience init(_ handle: @escaping @Sendable (HTTPEvent) -> Void) {
        self.init([ClosureObserver(body: handle)])
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        var observed = request
        let id = observed.observe(with: observers)
        let start = ContinuousClock.now
        observers.deliver(.loadStarted) { HTTPEvent(kind: .loadStarted, loadID: id, request: observed, instant: start) }
        let result = await loadNext(observed)
        observers.deliver(.loadFinished, result: result) {
            let end = ContinuousClock.now
            return HTTPEvent(
                kind: .loadFinished, loadID: id, request: result.request, instant: end, result: result,
                duration: end - start)
        }
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

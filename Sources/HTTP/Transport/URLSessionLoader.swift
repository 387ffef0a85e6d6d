import Synchronization

#if canImport(FoundationNetworking)
import Foundation
#else
public import Foundation
#endif

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The terminal loader that sends requests over the network with `URLSession`.
///
/// ```swift
/// let chain = ApplyEnvironment(environment: .production) --> URLSessionLoader()
/// ```
///
/// The loader validates each request before sending it (a malformed one fails with
/// ``HTTPError/Code/invalidRequest``), maps `URLError`s to ``HTTPError`` codes keeping the original as
/// ``HTTPError/underlyingError``, and returns every status — `404` and `500` included — as a response.
///
/// ## What URLSession does on its own, and the defaults chosen here
///
/// - **Redirects.** URLSession follows them on every platform. Left alone it forwards hand-set
///   `Authorization` and `Cookie` header fields to whatever host the redirect names (measured on Linux:
///   from `localhost` to `127.0.0.1` on a 302). This loader owns its session's delegate and, when a
///   redirect changes scheme, host or port, removes `Authorization`, `Proxy-Authorization` and `Cookie`.
///   A request can refuse to follow redirects with ``HTTPRequest/redirectPolicy``.
/// - **Cookies.** URLSession's cookie storage would silently add and keep cookies, and they would survive
///   a ``HTTPLoader/reset()`` (log out). ``defaultConfiguration`` turns cookie handling off: a request carries exactly
///   the `Cookie` field it sets. Pass a configuration with a cookie storage to opt in.
/// - **Caching.** The shared `URLCache` (a disk cache on Linux) would answer some requests without asking
///   the server. ``defaultConfiguration`` uses no cache, so every load reaches the server.
/// - **Credentials.** URLSession's credential storage and authentication challenges are not used;
///   authentication belongs to loaders in the chain (`BasicAuth`, `OAuth`).
/// - **Compression.** Responses with `gzip`, `deflate` (and `br` where supported) encoding arrive decoded.
///
/// ## Cancellation and reset
///
/// Cancelling the task that awaits ``load(_:)`` cancels the URLSession task and returns
/// ``HTTPError/Code/cancelled`` at once, without waiting for URLSession to report back. During a reset the
/// loader refuses loads with ``HTTPError/Code/resetInProgress``; ``ResetMode/drain`` waits until every load in
/// flight has completed, ``ResetMode/cancel`` cancels them at once.
// Safety: configuration is immutable; per-load state lives behind the delegate's lock and each
// TransferContext's lock.
public final class URLSessionLoader: HTTPLoader, @unchecked Sendable {
    /// The session requests are sent with. Its delegate belongs to the loader.
    public let session: URLSession
    private let delegate: SessionDelegate
    private let inFlight = InFlightLoads()
    /// Resets that have begun and not ended: loads are refused meanwhile.
    private let resetsInProgress = Atomic<Int>(0)
    /// Counts cancelling resets, so that a load accepted before one began but started after it is cancelled too.
    private let cancellingResets = Atomic<Int>(0)

    /// A configuration with URLSession's hidden state turned off: no cookie handling, no cache, no
    /// credential storage. See the discussion of ``URLSessionLoader``.
    public static var defaultConfiguration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCredentialStorage = nil
        return configuration
    }

    /// Creates a loader with its own session.
    ///
    /// - Parameter configuration: The session configuration: timeouts, connection limits, additional
    ///   header fields, protocol classes (such as a `URLProtocol` stub), cookie storage and cache.
    ///   ``defaultConfiguration`` by default. The loader always installs its own session delegate, which
    ///   enforces ``RedirectPolicy`` and strips credentials on cross-origin redirects.
    ///
    /// On Linux two things differ:
    /// - The configuration's `urlCache` is replaced by `nil`: swift-corelibs-foundation can trap when a task is
    ///   cancelled while its response is being written to the cache (swift-corelibs-foundation issues #3292
    ///   and #3296, reproduced here with 6.3.1), and cancellation must never crash.
    /// - The session's delegate queue runs each callback at once on the thread that delivers it, instead of
    ///   handing it to an `OperationQueue` thread: a completed request then reaches its caller with one thread
    ///   hop fewer, as `URLSession.data(for:)` does (≈ 4% of the throughput of small requests over loopback).
    public init(configuration: URLSessionConfiguration = URLSessionLoader.defaultConfiguration) {
        let delegate = SessionDelegate()
        self.delegate = delegate
        #if canImport(FoundationNetworking)
        let configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: ImmediateQueue())
        #else
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        #endif
    }

    /// Creates a loader over a session you make — to choose its delegate queue, or to share it with other
    /// code — from the delegate the loader gives you.
    ///
    /// ```swift
    /// let loader = URLSessionLoader { delegate in
    ///     URLSession(configuration: myConfiguration, delegate: delegate, delegateQueue: myQueue)
    /// }
    /// ```
    ///
    /// The session must use `delegate`: it routes each task's data back to its load and enforces the
    /// redirect rules. (A session with another delegate cannot be used: on Linux the per-task delegate is
    /// ignored, so the loader could neither complete its loads nor keep credentials from following
    /// redirects.) Passing a session with another delegate is a programming error and traps.
    ///
    /// - Parameter makeSession: Makes the session from the loader's delegate.
    public init(makeSession: (any URLSessionDataDelegate) -> URLSession) {
        let delegate = SessionDelegate()
        let session = makeSession(delegate)
        precondition(
            session.delegate === delegate,
            "URLSessionLoader(makeSession:) needs a session whose delegate is the one it was given"
        )
        self.delegate = delegate
        self.session = session
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// The session's request timeout and connections per host.
    public override var configurationDescription: String {
        let configuration = session.configuration
        let timeout = Duration(clampingSeconds: configuration.timeoutIntervalForRequest, to: .zero ... .century)
        return
            "timeout: \(timeout.shortDescription), connectionsPerHost: \(configuration.httpMaximumConnectionsPerHost)"
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        let epoch = cancellingResets.load(ordering: .sequentiallyConsistent)
        if resetsInProgress.load(ordering: .sequentiallyConsistent) > 0, !request.isPartOfReset {
            return .failure(
                HTTPError(
                    .resetInProgress, request: request, message: "refused by URLSessionLoader while the chain resets")
            )
        }
        let urlRequest: URLRequest
        do {
            urlRequest = try request.urlRequest()
        } catch {
            return .failure(error)
        }
        if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }

        inFlight.begin()
        defer { inFlight.end() }
        let transfer = TransferContext(request: request)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard transfer.install(continuation) else { return }
                let task = makeTask(for: urlRequest, transfer: transfer)
                delegate.register(transfer, for: task)
                transfer.start(task)
                if cancellingResets.load(ordering: .sequentiallyConsistent) != epoch { transfer.cancel() }
            }
        } onCancel: {
            transfer.cancel()
        }
        #if canImport(FoundationNetworking)
        delegate.unregister(transfer)
        #endif
        return transfer.result(of: outcome)
    }

    /// A data task for `transfer`, not yet started.
    ///
    /// On Linux it is a completion-handler task: swift-corelibs-foundation hands each delegate callback to the
    /// session's delegate queue as an operation of its own, and a delegate-driven task pays for one per chunk
    /// of data and one for the completion, where a completion-handler task pays for one in all (measured over
    /// loopback: ≈ 0.82× raw `URLSession` throughput the delegate way, on a par with it this way). The session
    /// delegate is still asked about redirects and authentication challenges for such tasks (verified with
    /// 6.3.1), so the redirect policy and the credential stripping hold. On Apple platforms the task is
    /// delegate-driven, as the session's delegate sees no data for completion-handler tasks there.
    private func makeTask(for urlRequest: URLRequest, transfer: TransferContext) -> URLSessionDataTask {
        #if canImport(FoundationNetworking)
        // This runs on the session's one serial work queue, which every request of the session passes
        // through: it only hands the outcome over, and the load maps it on its own thread.
        return session.dataTask(with: urlRequest) { data, response, error in
            transfer.finish(response: response, error: error, body: data)
        }
        #else
        return session.dataTask(with: urlRequest)
        #endif
    }

    /// Refuses loads until the reset ends; with ``ResetMode/cancel``, cancels the transfers in flight, whose loads
    /// complete with ``HTTPError/Code/cancelled`` at once.
    public override func beginReset(_ mode: ResetMode) {
        resetsInProgress.add(1, ordering: .sequentiallyConsistent)
        guard mode == .cancel else { return }
        cancellingResets.add(1, ordering: .sequentiallyConsistent)
        for transfer in delegate.registeredTransfers() { transfer.cancel() }
    }

    /// Returns once every load in flight has completed.
    public override func waitUntilIdle() async {
        await inFlight.waitUntilIdle()
    }

    public override func endReset() {
        resetsInProgress.subtract(1, ordering: .sequentiallyConsistent)
    }
}

/// One request on its way through URLSession: collects the body and completes exactly once, with the
/// result or as cancelled.
final class TransferContext: Sendable {
    /// How a transfer ended, as URLSession reported it; mapped to an ``HTTPResult`` by ``result(of:)``.
    enum Outcome: @unchecked Sendable {  // Sendable: URLSession's values are not mutated after the handover
        case finished(response: URLResponse?, body: Data, error: (any Error)?, declinedChallenge: HTTPURLResponse?)
        case cancelled
    }

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var task: URLSessionDataTask?
        var body = Data()
        var isFinished = false
        var strippedCredentials = false
        var declinedChallengeResponse: HTTPURLResponse?
        /// The task's identifier, once the task is registered with the session delegate.
        var taskIdentifier: Int?
    }

    let request: HTTPRequest
    private let state = Locked(State())

    init(request: HTTPRequest) {
        self.request = request
    }

    /// Stores the continuation; `false` (and the continuation already resumed) if the load was cancelled first.
    func install(_ continuation: CheckedContinuation<Outcome, Never>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if state.isFinished { return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(returning: .cancelled) }
        return !cancelled
    }

    /// Starts `task`, then makes it visible to ``cancel()``.
    ///
    /// The order matters on Linux: swift-corelibs-foundation can trap ("Trying to access a behaviour for a
    /// task that in not in the registry") when a task is cancelled before or while it is being resumed, so
    /// the task is resumed first and only then handed to a concurrent cancellation.
    func start(_ task: URLSessionDataTask) {
        task.resume()
        let cancelledMeanwhile = state.withLock { state -> Bool in
            if state.isFinished { return true }
            state.task = task
            return false
        }
        if cancelledMeanwhile { task.cancel() }
    }

    func cancel() {
        let (task, continuation) = state.withLock {
            state -> (URLSessionDataTask?, CheckedContinuation<Outcome, Never>?) in
            guard !state.isFinished else { return (nil, nil) }
            state.isFinished = true
            defer { state.continuation = nil }
            return (state.task, state.continuation)
        }
        task?.cancel()
        continuation?.resume(returning: .cancelled)
    }

    /// The identifier of the task the session delegate knows this transfer by.
    var taskIdentifier: Int? {
        get { state.withLock { $0.taskIdentifier } }
        set { state.withLock { $0.taskIdentifier = newValue } }
    }

    func append(_ data: Data) {
        state.withLock { $0.body.append(data) }
    }

    /// Records that credentials were removed from this transfer's redirects; later hops keep them removed.
    func markCredentialsStripped() {
        state.withLock { $0.strippedCredentials = true }
    }

    var hasStrippedCredentials: Bool { state.withLock { $0.strippedCredentials } }

    /// Records the 401 whose authentication challenge was declined, to return it when URLSession reports the
    /// task cancelled (see ``SessionDelegate``).
    func recordDeclinedChallenge(response: HTTPURLResponse?) {
        state.withLock { $0.declinedChallengeResponse = response }
    }

    /// Completes the load with what URLSession reported: the body collected from the delegate's callbacks,
    /// or `body` when URLSession hands it over at once (a completion-handler task).
    ///
    /// It only hands the outcome over: it is called on URLSession's queue, and the mapping happens in the load.
    func finish(response: URLResponse?, error: (any Error)?, body handedOver: Data? = nil) {
        let taken = state.withLock { state -> (CheckedContinuation<Outcome, Never>, Data, HTTPURLResponse?)? in
            guard !state.isFinished, let continuation = state.continuation else { return nil }
            state.isFinished = true
            state.continuation = nil
            state.task = nil
            defer { state.body = Data() }
            return (continuation, handedOver ?? state.body, state.declinedChallengeResponse)
        }
        guard let (continuation, body, declinedChallenge) = taken else { return }
        continuation.resume(
            returning: .finished(response: response, body: body, error: error, declinedChallenge: declinedChallenge))
    }

    /// The load's result for `outcome`.
    func result(of outcome: Outcome) -> HTTPResult {
        switch outcome {
        case .cancelled:
            return .failure(HTTPError(.cancelled, request: request))
        case .finished(_, let body, let error, let declinedChallenge?) where (error as? URLError)?.code == .cancelled:
            return .success(HTTPResponse(request: request, urlResponse: declinedChallenge, body: body))
        case .finished(_, _, let error?, _):
            return .failure(HTTPError(request: request, transportError: error))
        case .finished(let response as HTTPURLResponse, let body, nil, _):
            return .success(HTTPResponse(request: request, urlResponse: response, body: body))
        case .finished:
            return .failure(
                HTTPError(.invalidResponse, request: request, message: "the server's response was not an HTTP response")
            )
        }
    }
}

/// The session's delegate: routes callbacks to each task's ``TransferContext`` and enforces the redirect rules.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let transfers = Locked<[Int: TransferContext]>([:])

    func register(_ transfer: TransferContext, for task: URLSessionTask) {
        transfer.taskIdentifier = task.taskIdentifier
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    /// Forgets a transfer whose task completed through its completion handler.
    func unregister(_ transfer: TransferContext) {
        guard let identifier = transfer.taskIdentifier else { return }
        transfers.withLock { _ = $0.removeValue(forKey: identifier) }
    }

    /// The transfers whose tasks have not completed.
    func registeredTransfers() -> [TransferContext] {
        transfers.withLock { Array($0.values) }
    }

    private func transfer(for task: URLSessionTask) -> TransferContext? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(for: dataTask)?.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        transfer?.finish(response: task.response, error: error)
    }

    /// HTTP authentication challenges (a 401 with `WWW-Authenticate: Basic` or `Digest`) are declined so that
    /// the 401 comes back as the response: credentials are the business of the chain's auth loaders, never of
    /// URLSession's credential storage. Server-trust challenges get the system's default evaluation.
    ///
    /// On Linux, swift-corelibs-foundation cannot decline a challenge and still deliver the response: default
    /// handling without a stored credential never completes the task, and declining cancels it. So the loader
    /// cancels the challenge and remembers `failureResponse`, the 401 itself, which ``TransferContext`` then
    /// returns as the response.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
        transfer(for: task)?.recordDeclinedChallenge(response: challenge.failureResponse as? HTTPURLResponse)
        // Answered from another thread: cancelling waits synchronously for the task's work queue, which is
        // the queue this callback runs on when the delegate queue is an `ImmediateQueue`.
        DispatchQueue.global().async { completionHandler(.cancelAuthenticationChallenge, nil) }
        #else
        completionHandler(.performDefaultHandling, nil)
        #endif
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let transfer = transfer(for: task) else { return completionHandler(newRequest) }
        guard transfer.request.redirectPolicy == .follow else { return completionHandler(nil) }
        let originalOrigin = transfer.request.origin
        guard
            transfer.hasStrippedCredentials || newRequest.url.flatMap(Origin.init) != originalOrigin
                || response.url.flatMap(Origin.init) != originalOrigin
        else { return completionHandler(newRequest) }
        transfer.markCredentialsStripped()
        var stripped = newRequest
        for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
            stripped.setValue(nil, forHTTPHeaderField: name)
        }
        completionHandler(stripped)
    }
}

#if canImport(FoundationNetworking)
/// A delegate queue that runs each operation at once, on the thread that adds it.
///
/// swift-corelibs-foundation adds every session callback — a completion handler, a redirect question — to the
/// session's delegate queue from the task's own serial work queue. Run there directly, a completion skips the
/// wake-up of an `OperationQueue` thread. The callbacks stay serial, as the work queues of one session share
/// one serial target queue. What runs here must not wait for that queue: ``SessionDelegate`` answers an
/// authentication challenge from another thread for that reason.
// Safety: it has no state of its own; `OperationQueue` is thread-safe.
final class ImmediateQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ operation: Operation) {
        operation.start()
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }

    override func addOperations(_ operations: [Operation], waitUntilFinished wait: Bool) {
        for operation in operations { operation.start() }
    }

    override func addBarrierBlock(_ barrier: @escaping @Sendable () -> Void) {
        barrier()
    }
}
#endif

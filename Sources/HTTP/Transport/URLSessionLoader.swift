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
/// - **Redirects.** URLSession follows them on every platform, by rules of its own (on Linux a `307` `POST` loses
///   its body), and forwards hand-set `Authorization` and `Cookie` header fields to whatever host the redirect
///   names. This loader follows none: its session's delegate refuses every redirect, and the `3xx` is the
///   response, on every platform and for every kind of task. ``FollowRedirects`` follows redirects in the chain.
/// - **Cookies.** URLSession's cookie storage would silently add and keep cookies, and they would survive
///   a ``HTTPLoader/reset()`` (log out). ``defaultConfiguration`` turns cookie handling off: a request carries exactly
///   the `Cookie` field it sets. Pass a configuration with a cookie storage to opt in.
/// - **Caching.** The shared `URLCache` (a disk cache on Linux) would answer some requests without asking
///   the server. ``defaultConfiguration`` uses no cache, so every load reaches the server.
/// - **Credentials.** URLSession's credential storage and authentication challenges are not used;
///   authentication belongs to loaders in the chain (`BasicAuth`, `OAuth`).
/// - **Compression.** Responses with `gzip`, `deflate` (and `br` where supported) encoding arrive decoded.
///
/// ## Bodies that stream, responses that stream, downloads, progress
///
/// A body in memory goes as `URLRequest.httpBody`; a ``FileBody`` is uploaded from disk (`uploadTask(with:fromFile:)`,
/// with its `Content-Length`); a ``StreamBody`` or a ``MultipartFormBody`` with file parts is read as it is sent
/// (`httpBodyStream`; chunked transfer coding unless its length is known and the platform sends it).
///
/// A request's ``HTTPRequest/responseDelivery`` decides how the body comes back: in memory (the default, a
/// completion-handler task), as a stream with backpressure (``ResponseDelivery/stream``: the load returns when
/// the head arrives; the transfer runs alone in a session the loader keeps for streams, whose connections the
/// next stream reuses; the body pauses the transfer or spills to a temporary file while the consumer lags — see
/// ``HTTPBodyStream``), or written to a file as it arrives (``ResponseDelivery/file(_:resumingAt:)``). A request with
/// a ``HTTPRequest/progressHandler`` gets reports as bytes go out and come in. Every platform takes the same path;
/// the few lines that differ are marked and explained.
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
    /// Why loads cannot be sent, when the loader was given a session it cannot use.
    private let sessionProblem: String?
    /// The server-trust evaluator and client identity for requests that bring none of their own.
    public let tls: TLSSettings
    /// The proxies requests go through, or `nil` for URLSession's own choice (see
    /// ``init(configuration:serverTrustEvaluator:clientIdentity:proxy:)``).
    public let proxy: ProxyConfiguration?
    /// This loader's loads in flight, counted by the base class (see `HTTPLoader.send(_:to:)`).
    private var inFlight: InFlightLoads { participation.inFlight }
    /// Counts cancelling resets, so that a load accepted before one began but started after it is cancelled too.
    private let cancellingResets = Atomic<Int>(0)
    /// The tasks handed to `URLSessionCalls` and not yet made and started, and their transfers (a cancelling reset
    /// cancels them too: their loads return at once, and their tasks are not made).
    private let startingTasks = InFlightLoads()
    private let awaitingTask = Locked<[ObjectIdentifier: TransferContext]>([:])
    /// Where this loader's tasks are made and started: ``URLSessionCalls/shared``, but for tests (set once, in `init`).
    private var calls = URLSessionCalls.shared
    /// The sessions lent to streams and to requests with TLS settings of their own, one transfer at a time.
    private let pool = SessionPool(makeSession: URLSessionLoader.makeSession(configuration:delegate:))
    /// The transfers in the pool's sessions, for a cancelling reset to find.
    private let leased = Locked<[ObjectIdentifier: TransferContext]>([:])

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
    ///   refuses every redirect and declines authentication challenges.
    ///
    /// On Linux two things differ:
    /// - The configuration's `urlCache` is replaced by `nil`: swift-corelibs-foundation can trap when a task is
    ///   cancelled while its response is being written to the cache (swift-corelibs-foundation issues #3292
    ///   and #3296, reproduced here with 6.3.1), and cancellation must never crash.
    /// - The session's delegate queue runs each callback at once on the thread that delivers it, instead of
    ///   handing it to an `OperationQueue` thread: a completed request reaches its caller with one thread hop
    ///   fewer, as `URLSession.data(for:)` does. Nothing the loader runs there waits: a streamed body that the
    ///   consumer lags behind spills to a temporary file (see ``HTTPBodyStream``).
    ///
    /// - Parameters:
    ///   - serverTrustEvaluator: Evaluates servers' certificates, for example ``PublicKeyPinning``, for requests
    ///     whose ``HTTPRequest/serverTrustPolicy`` does not say otherwise. URLSession on Linux cannot evaluate
    ///     server trust: there a request with an evaluator fails with ``HTTPError/Code/insecureConnection``
    ///     before anything is sent, never unpinned.
    ///   - clientIdentity: The certificate to present for mutual TLS, for requests without one of their own
    ///     (Apple platforms; URLSession on Linux cannot present one, and such a request fails the same way).
    ///   - proxy: The proxies to send requests through; `nil` (the default) leaves the choice to URLSession: the
    ///     system's proxy settings on Apple platforms, libcurl's reading of the process environment on Linux. On
    ///     Apple platforms a configuration becomes the session's `connectionProxyDictionary`; requests through a
    ///     proxy that needs credentials are refused there (see the Proxies article). On Linux URLSession cannot be
    ///     told which proxy to use: a request is sent only when the configuration routes it as libcurl will with
    ///     the process environment (as ``ProxyConfiguration/environment`` does, as long as the environment does not
    ///     change), and otherwise fails with ``HTTPError/Code/invalidRequest`` before anything is sent — never
    ///     directly when a proxy was asked for.
    public init(
        configuration: URLSessionConfiguration = URLSessionLoader.defaultConfiguration,
        serverTrustEvaluator: (any ServerTrustEvaluator)? = nil,
        clientIdentity: ClientIdentity? = nil,
        proxy: ProxyConfiguration? = nil
    ) {
        var configuration = configuration
        if let proxy {
            configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration
            configuration.connectionProxyDictionary = URLSessionProxy.dictionary(for: proxy)
        }
        let delegate = SessionDelegate()
        self.delegate = delegate
        self.sessionProblem = nil
        self.proxy = proxy
        self.tls = TLSSettings(serverTrustEvaluator: serverTrustEvaluator, clientIdentity: clientIdentity)
        self.session = Self.makeSession(configuration: configuration, delegate: delegate)
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
    /// The session must use `delegate`: it routes each task's data back to its load and refuses redirects (on
    /// Linux the per-task delegate is ignored, so the loader could neither complete its loads nor keep URLSession
    /// from following redirects). With a session whose delegate is another, every load fails with
    /// ``HTTPError/Code/invalidRequest`` saying so.
    ///
    /// - Parameters:
    ///   - serverTrustEvaluator: As for ``init(configuration:serverTrustEvaluator:clientIdentity:proxy:)``.
    ///   - clientIdentity: As for ``init(configuration:serverTrustEvaluator:clientIdentity:proxy:)``.
    ///   - makeSession: Makes the session from the loader's delegate.
    public init(
        serverTrustEvaluator: (any ServerTrustEvaluator)? = nil,
        clientIdentity: ClientIdentity? = nil,
        makeSession: (any URLSessionDataDelegate) -> URLSession
    ) {
        let delegate = SessionDelegate()
        let session = makeSession(delegate)
        self.delegate = delegate
        self.session = session
        self.proxy = nil
        self.tls = TLSSettings(serverTrustEvaluator: serverTrustEvaluator, clientIdentity: clientIdentity)
        self.sessionProblem =
            session.delegate === delegate
            ? nil
            : "URLSessionLoader(makeSession:) was given a session whose delegate is not the one it handed over, so "
                + "it could neither see its tasks' data nor keep URLSession from following redirects"
    }

    /// As ``init(serverTrustEvaluator:clientIdentity:makeSession:)``, with the loader's tasks made and started on
    /// `calls`' thread: for tests whose session keeps that thread waiting, and must not keep every other load's.
    convenience init(calls: URLSessionCalls, makeSession: (any URLSessionDataDelegate) -> URLSession) {
        self.init(makeSession: makeSession)
        self.calls = calls
    }

    deinit {
        session.finishTasksAndInvalidate()
        pool.close()
    }

    private static func makeSession(configuration: URLSessionConfiguration, delegate: SessionDelegate) -> URLSession {
        #if canImport(FoundationNetworking)
        let configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: ImmediateQueue())
        #else
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        #endif
    }

    /// The session's request timeout and connections per host.
    public override var configurationDescription: String {
        let configuration = session.configuration
        let timeout = Duration(clampingSeconds: configuration.timeoutIntervalForRequest, to: .zero ... .century)
        return
            "timeout: \(timeout.shortDescription), connectionsPerHost: \(configuration.httpMaximumConnectionsPerHost)"
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        // Counted before the reset check (see `HTTPLoader.send(_:to:)`), for a chain that is only this loader.
        inFlight.begin()
        defer { inFlight.end() }
        let epoch = cancellingResets.load(ordering: .sequentiallyConsistent)
        if isResetting, !request.isPartOfReset { return .failure(resetRefusal(of: request)) }
        if let sessionProblem { return .failure(HTTPError(.invalidRequest, request: request, message: sessionProblem)) }
        var prepared: PreparedRequest
        do {
            prepared = try request.preparedForURLSession()
        } catch {
            return .failure(error)
        }
        // A pin or a client certificate this transport cannot honour fails the request here: never sent unpinned.
        let settings = tls.resolved(for: request)
        if let refusal = TransportCapabilities.urlSession.refusal(of: request, with: settings) {
            return .failure(refusal)
        }
        // A proxy this transport cannot honour for this request fails it here: never sent by another route.
        if let proxy, let refusal = URLSessionProxy.refusal(of: request, with: proxy) { return .failure(refusal) }
        prepared.tls = settings
        if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }

        if let source = prepared.spool {
            // URLSession reads a body stream on a queue that must never wait (on Linux one queue serves every
            // session), so a body that an AsyncSequence produces is collected into a temporary file first, and
            // sent from there with its length.
            let file = FileManager.default.temporaryDirectory.appending(path: "http-upload-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            do {
                try await source.spool(to: file)
            } catch {
                if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }
                return .failure(request.bodyEncodingFailure(error))
            }
            prepared.uploadFile = file
            return await send(prepared, request, epoch: epoch)
        }
        return await send(prepared, request, epoch: epoch)
    }

    /// Sends a prepared request and waits for its outcome (or, for a stream, its head).
    private func send(_ prepared: PreparedRequest, _ request: HTTPRequest, epoch: Int) async -> HTTPResult {
        let transfer = TransferContext(request: request, totalBytesToSend: prepared.bodyLength, tls: prepared.tls)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard transfer.install(continuation) else { return }
                transfer.begin()
                guard URLSessionCalls.isolatesCalls else { return startTask(prepared, transfer, epoch: epoch) }
                // The task is made and started on URLSession's own calling thread (see `URLSessionCalls`), while
                // this load waits without holding a thread: its deadline or a cancellation ends it meanwhile.
                let id = ObjectIdentifier(transfer)
                startingTasks.begin()
                awaitingTask.withLock { $0[id] = transfer }
                calls.run { [self] in
                    defer { startingTasks.end() }
                    if transfer.awaitsTask { startTask(prepared, transfer, epoch: epoch) }  // else stopped meanwhile
                    awaitingTask.withLock { _ = $0.removeValue(forKey: id) }
                }
            }
        } onCancel: {
            transfer.cancel()
        }
        return transfer.result(of: outcome)
    }

    /// Makes the task for `prepared`, registers it and starts it; cancels it if a cancelling reset began after the
    /// load did (the reset cancels only the transfers registered when it begins).
    private func startTask(_ prepared: PreparedRequest, _ transfer: TransferContext, epoch: Int) {
        let (task, taskDelegate) = makeTask(for: prepared, transfer: transfer)
        taskDelegate.register(transfer, for: task)
        transfer.start(task)
        if cancellingResets.load(ordering: .sequentiallyConsistent) != epoch { transfer.cancel() }
    }

    /// Phase 2 of a reset: returns once every task this loader handed to `URLSessionCalls` has been made and started,
    /// or skipped because its load had ended — so that none starts after the reset.
    public override func waitUntilIdle() async {
        await startingTasks.waitUntilIdle()
    }

    /// A task for `prepared`, not yet started, and the delegate that routes its callbacks.
    ///
    /// A body in memory with no progress to report goes through a completion-handler task: URLSession then
    /// hands the whole outcome over at once (on Linux a delegate-driven task costs a delegate operation per
    /// chunk). Its session delegate is still asked about redirects and authentication challenges (see
    /// `SessionDelegate`), though a refused redirect's body does not reach such a task on Linux. Everything
    /// else — a stream, a download, progress — is a delegate-driven task. A stream runs alone in a session from
    /// the ``SessionPool``, so that holding its delivery back never holds back another request; so does a
    /// request with a server-trust evaluator or a client identity, in a session kept for its settings, so that it
    /// never reuses a connection whose handshake it did not check. The session goes back to the pool, with its
    /// connections, when the task has ended.
    private func makeTask(for prepared: PreparedRequest, transfer: TransferContext) -> (URLSessionTask, SessionDelegate)
    {
        var session = self.session
        var taskDelegate = delegate
        if transfer.delivery == .stream || !transfer.tls.isDefault {
            let lease = pool.lease(for: transfer.tls, configuration: self.session.configuration)
            taskDelegate = lease.delegate
            session = lease.session
            let id = ObjectIdentifier(transfer)
            leased.withLock { $0[id] = transfer }
            transfer.whenTaskEnds { [leased, pool] in
                leased.withLock { _ = $0.removeValue(forKey: id) }
                pool.giveBack(lease)
            }
        }
        let urlRequest = prepared.urlRequest
        if transfer.isDelegateDriven {
            if let file = prepared.uploadFile {
                return (session.uploadTask(with: urlRequest, fromFile: file), taskDelegate)
            }
            return (session.dataTask(with: urlRequest), taskDelegate)
        }
        // This runs on the session's serial work queue, which every request of the session passes through: it
        // only hands the outcome over, and the load maps it on its own thread.
        let finish: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            transfer.finish(response: response, error: error, body: data)
            // Here rather than after the load returns: a load stopped early returns before its task has ended, or
            // before it was registered at all.
            transfer.registration?.delegate.unregister(transfer)
        }
        if let file = prepared.uploadFile {
            return (session.uploadTask(with: urlRequest, fromFile: file, completionHandler: finish), taskDelegate)
        }
        return (session.dataTask(with: urlRequest, completionHandler: finish), taskDelegate)
    }

    /// The transfers whose tasks URLSession has not reported ended, and those whose tasks are still to be made (for
    /// tests: none is forgotten, none is kept).
    package var transfersUnderWay: Int {
        Set(transfersInFlight.map(ObjectIdentifier.init)).count
    }

    /// The transfers a cancelling reset cancels: those whose tasks are registered with a session's delegate, those in
    /// the pool's sessions, and those whose tasks are still to be made (a transfer can be in two of them at once).
    private var transfersInFlight: [TransferContext] {
        delegate.registeredTransfers() + leased.withLock { Array($0.values) }
            + awaitingTask.withLock { Array($0.values) }
    }

    /// With ``ResetMode/cancel``, cancels the transfers in flight, whose loads complete with
    /// ``HTTPError/Code/cancelled`` at once.
    public override func failHeldLoads(_ mode: ResetMode) {
        guard mode == .cancel else { return }
        cancellingResets.add(1, ordering: .sequentiallyConsistent)
        for transfer in transfersInFlight { transfer.cancel() }
    }
}

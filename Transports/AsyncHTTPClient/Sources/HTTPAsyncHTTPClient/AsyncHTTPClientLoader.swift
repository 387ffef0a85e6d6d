public import AsyncHTTPClient
public import HTTP
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// The terminal loader that sends requests with AsyncHTTPClient: the transport for servers.
///
/// ```swift
/// let transport = AsyncHTTPClientLoader()
/// let chain = ApplyEnvironment(environment: .production) --> Retry() --> transport
/// // …
/// try await transport.shutdown()  // when the service stops
/// ```
///
/// It does what ``URLSessionLoader`` does, over SwiftNIO: it validates each request before sending it (a
/// malformed one fails with `HTTPError.Code.invalidRequest`, nothing sent), maps AsyncHTTPClient's and NIO's
/// errors to the same `HTTPError` codes (could not connect, timed out, TLS → `insecureConnection` with the cause,
/// cancelled, a connection lost after the head keeps the head), and returns every status — `404`, `500` and
/// `3xx` — as a response.
///
/// ## What differs from URLSession
///
/// - **Redirects are not followed.** The client it makes has `redirectConfiguration: .disallow`, so a `3xx`
///   comes back as it is and `FollowRedirects` in the chain follows it, through every loader above.
/// - **No cookies, no cache, no credential storage**: AsyncHTTPClient has none.
/// - **Compression**: responses with `gzip` or `deflate` encoding arrive decoded (``defaultConfiguration``).
/// - **Bodies**: a body in memory goes at once; a `FileBody`, a `StreamBody` or a `MultipartFormBody` with
///   file parts is read as AsyncHTTPClient asks for more, with its length when known (chunked otherwise): a
///   slow server never makes the process read ahead.
/// - **Responses**: buffered (the default), as a stream (`HTTPResponse.bodyStream`, whose backpressure stops
///   reading from the socket while the consumer's buffer is full), or written to a file off the event loop
///   (`ResponseDelivery.file(_:resumingAt:)`, for `download(_:to:resumeAttempts:)`).
/// - **TLS**: a client identity (`ClientIdentity` of the form `certificateChainAndPrivateKey`) is presented
///   through NIOSSL; a request with one gets a connection of its own settings. AsyncHTTPClient cannot call a
///   `ServerTrustEvaluator` (it takes no verification callback), so a request with one — public-key pinning —
///   fails with `HTTPError.Code.insecureConnection` before anything is sent, never unpinned. See
///   ``TransportCapabilities/asyncHTTPClient``.
///
/// ## The client, and shutting it down
///
/// ``init(configuration:eventLoopGroup:serverTrustEvaluator:clientIdentity:tlsConfiguration:)`` makes an
/// `HTTPClient` the loader owns: call ``shutdown()`` when you are done with it (a service's shutdown hook).
/// Should the loader be released without it, its `deinit` starts the client's asynchronous shutdown and returns
/// at once; it never blocks. ``init(client:serverTrustEvaluator:clientIdentity:)`` uses a client you own (Vapor's
/// `app.http.client.shared`, `HTTPClient.shared`): the loader never shuts it down, and ``shutdown()`` does
/// nothing. Configure such a client with `redirectConfiguration: .disallow`: AsyncHTTPClient would otherwise
/// follow redirects inside the transport (it removes `Authorization` and `Cookie` when the host changes).
///
/// ## Cancellation and reset
///
/// Cancelling the task that awaits ``load(_:)`` cancels the AsyncHTTPClient task and returns
/// `HTTPError.Code.cancelled` at once. During a reset the loader refuses loads with `resetInProgress`;
/// `ResetMode.drain` waits until every load in flight has completed, `ResetMode.cancel` cancels them, streams
/// included.
// Safety: configuration is immutable (`let`s of Sendable types); mutable state is behind `state`'s lock.
public final class AsyncHTTPClientLoader: HTTPLoader, @unchecked Sendable {
    /// The client requests are sent with.
    public let client: HTTPClient
    /// The server-trust evaluator and client identity for requests that bring none of their own.
    public let tls: TLSSettings
    /// The TLS configuration a request with a client identity starts from.
    let baseTLSConfiguration: TLSConfiguration
    /// Whether the loader made ``client`` and so shuts it down.
    private let ownsClient: Bool
    private let description: String
    private let state = NIOLockedValueBox(State())

    private struct State {
        var resetsInProgress = 0
        /// Counts cancelling resets, so that a load accepted before one began but started after it is cancelled.
        var cancellingResets = 0
        var loadsInFlight = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// The transfers under way, streams included until their body ends, for a cancelling reset.
        var transfers: [ObjectIdentifier: Transfer] = [:]
        var isShutDown = false
    }

    /// The configuration the loader's own client gets by default: redirects not followed, responses decoded
    /// from `gzip` and `deflate`, connections of 90 s idle time, and AsyncHTTPClient's defaults for the rest
    /// (connect timeout 10 s, no read timeout, HTTP/2 where the server offers it).
    public static var defaultConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, decompression: .enabled(limit: .none))
        configuration.connectionPool.idleTimeout = .seconds(90)
        return configuration
    }

    /// Creates a loader with a client of its own; call ``shutdown()`` when you no longer need it.
    ///
    /// - Parameters:
    ///   - configuration: The client's configuration; ``defaultConfiguration`` by default. Its
    ///     `redirectConfiguration` is replaced by `.disallow`: redirects are followed in the chain.
    ///   - eventLoopGroup: The event loops the client runs on; NIO's shared group by default (pass your
    ///     server's, such as Vapor's `app.eventLoopGroup`, to share its threads).
    ///   - serverTrustEvaluator: An evaluator for every request whose `serverTrustPolicy` does not say otherwise.
    ///     AsyncHTTPClient cannot call one: such requests fail with `insecureConnection`, never sent unpinned.
    ///   - clientIdentity: The client certificate presented for mutual TLS, for requests without their own: a
    ///     `ClientIdentity` of the form `certificateChainAndPrivateKey` (`ClientIdentity(pemEncoded:)`).
    ///   - tlsConfiguration: The TLS configuration a request with a client identity starts from (trust roots,
    ///     TLS versions); the configuration's own `tlsConfiguration`, else NIOSSL's client default.
    public init(
        configuration: HTTPClient.Configuration = AsyncHTTPClientLoader.defaultConfiguration,
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup,
        serverTrustEvaluator: (any ServerTrustEvaluator)? = nil,
        clientIdentity: ClientIdentity? = nil
    ) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        self.client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.ownsClient = true
        self.tls = TLSSettings(serverTrustEvaluator: serverTrustEvaluator, clientIdentity: clientIdentity)
        self.baseTLSConfiguration = configuration.tlsConfiguration ?? .makeClientConfiguration()
        self.description = Self.describe(configuration)
    }

    /// Creates a loader over a client you own and shut down; the loader never shuts it down.
    ///
    /// - Parameters:
    ///   - client: The client. Make it with `redirectConfiguration: .disallow`, or AsyncHTTPClient follows
    ///     redirects before the chain sees them.
    ///   - tlsConfiguration: The TLS configuration a request with a client identity starts from: the one the
    ///     client was made with, if any (a client does not reveal it); NIOSSL's client default otherwise.
    ///   - serverTrustEvaluator: As for ``init(configuration:eventLoopGroup:serverTrustEvaluator:clientIdentity:)``.
    ///   - clientIdentity: As for ``init(configuration:eventLoopGroup:serverTrustEvaluator:clientIdentity:)``.
    public init(
        client: HTTPClient,
        tlsConfiguration: TLSConfiguration? = nil,
        serverTrustEvaluator: (any ServerTrustEvaluator)? = nil,
        clientIdentity: ClientIdentity? = nil
    ) {
        self.client = client
        self.ownsClient = false
        self.tls = TLSSettings(serverTrustEvaluator: serverTrustEvaluator, clientIdentity: clientIdentity)
        self.baseTLSConfiguration = tlsConfiguration ?? .makeClientConfiguration()
        self.description = "client: shared"
    }

    deinit {
        let isShutDown = state.withLockedValue { $0.isShutDown }
        // Never a blocking shutdown here: the client's own asynchronous shutdown, which keeps it alive until done.
        if ownsClient, !isShutDown {
            let client = self.client
            Task { try? await client.shutdown() }
        }
    }

    /// Shuts the loader's own client down, once its requests have completed; afterwards loads fail with
    /// `cannotConnect`. Does nothing for a client the loader was given, which is yours to shut down.
    ///
    /// - Throws: AsyncHTTPClient's error when the shutdown was not clean.
    public func shutdown() async throws {
        let shouldShutDown = state.withLockedValue { state -> Bool in
            defer { state.isShutDown = true }
            return ownsClient && !state.isShutDown
        }
        if shouldShutDown { try await client.shutdown() }
    }

    /// The client's timeouts and connection limits.
    public override var configurationDescription: String { description }

    private static func describe(_ configuration: HTTPClient.Configuration) -> String {
        let connect = configuration.timeout.connect.map(Self.format) ?? "default"
        let read = configuration.timeout.read.map(Self.format) ?? "none"
        return "connectTimeout: \(connect), readTimeout: \(read), "
            + "connectionsPerHost: \(configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit)"
    }

    private static func format(_ amount: TimeAmount) -> String {
        let milliseconds = amount.nanoseconds / 1_000_000
        return milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(milliseconds) ms"
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        let (epoch, refusal) = state.withLockedValue { state -> (Int, String?) in
            if state.isShutDown { return (0, "the loader's HTTPClient was shut down") }
            if state.resetsInProgress > 0, !request.isPartOfReset {
                return (0, "refused by AsyncHTTPClientLoader while the chain resets")
            }
            state.loadsInFlight += 1
            return (state.cancellingResets, nil)
        }
        if let refusal {
            let code: HTTPError.Code = refusal.hasPrefix("refused") ? .resetInProgress : .cannotConnect
            return .failure(HTTPError(code, request: request, message: refusal))
        }
        defer { loadEnded() }
        let prepared: PreparedRequest
        do {
            prepared = try prepare(request)
        } catch {
            return .failure(error)
        }
        if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }
        let transfer = Transfer(request: request, totalBytesToSend: prepared.bodyLength)
        let id = ObjectIdentifier(transfer)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard transfer.install(continuation) else { return }
                let cancelNow = state.withLockedValue { state -> Bool in
                    state.transfers[id] = transfer
                    return state.cancellingResets != epoch
                }
                transfer.start(client: client, request: prepared) { [state] in
                    state.withLockedValue { _ = $0.transfers.removeValue(forKey: id) }
                }
                if cancelNow { transfer.cancel() }
            }
        } onCancel: {
            transfer.cancel()
        }
        return transfer.result(of: outcome)
    }

    private func loadEnded() {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.loadsInFlight -= 1
            guard state.loadsInFlight == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Refuses loads until the reset ends; with `ResetMode.cancel`, cancels the transfers in flight (streams
    /// included), whose loads complete with `cancelled` at once.
    public override func beginReset(_ mode: ResetMode) {
        let transfers = state.withLockedValue { state -> [Transfer] in
            state.resetsInProgress += 1
            guard mode == .cancel else { return [] }
            state.cancellingResets += 1
            return Array(state.transfers.values)
        }
        for transfer in transfers { transfer.cancel() }
    }

    /// Returns once every load in flight has completed.
    public override func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let isIdle = state.withLockedValue { state -> Bool in
                if state.loadsInFlight == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
    }

    public override func endReset() {
        state.withLockedValue { $0.resetsInProgress -= 1 }
    }
}

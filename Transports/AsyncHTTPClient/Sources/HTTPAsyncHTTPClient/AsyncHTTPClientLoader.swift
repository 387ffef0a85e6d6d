public import AsyncHTTPClient
import Foundation
@_spi(Transport) public import HTTP
import NIOConcurrencyHelpers
public import NIOCore
import NIOHTTPCompression
import NIOPosix
public import NIOSSL

/// The terminal loader that sends requests with AsyncHTTPClient: the transport for servers.
///
/// ```swift
/// let transport = AsyncHTTPClientLoader()
/// let chain = ApplyEnvironment(environment: .production) --> Retry() --> transport
/// // …
/// await transport.shutdown()  // when the service stops
/// ```
///
/// It does what `URLSessionLoader` does, over SwiftNIO: it validates each request before sending it (a malformed one
/// fails with `invalidRequest`, nothing sent), maps AsyncHTTPClient's, NIO's and NIOSSL's errors to the same
/// `HTTPError` codes (could not connect, timed out, TLS → `insecureConnection` with the cause, cancelled, a connection
/// lost after the head keeps the head), and returns every status — `404`, `500` and `3xx` — as a response.
///
/// ## What differs from URLSession
///
/// - **Redirects are not followed.** The client it makes has `redirectConfiguration: .disallow`, so a `3xx` comes
///   back as it is, for `FollowRedirects` in the chain to follow through every loader above.
/// - **No retries inside the transport.** A connection that cannot be made fails the request at once
///   (`connectionPool.retryConnectionEstablishment` is off), as it does with URLSession; retrying is `Retry`'s job.
/// - **No cookies, no cache, no credential storage**: AsyncHTTPClient has none.
/// - **Compression**: responses with `gzip` or `deflate` encoding arrive decoded (``defaultConfiguration``).
/// - **Bodies**: a body in memory goes at once; a `FileBody`, a `StreamBody` or a `MultipartFormBody` with file
///   parts is read as AsyncHTTPClient asks for more (with its length when known, chunked otherwise), so a slow server
///   never makes the process read ahead.
/// - **Two of AsyncHTTPClient's APIs**: a buffered load with its body in memory (or none), sent while other loads are
///   in flight, goes through the async API (`execute(_:deadline:)`), in a task of its own that cancellation, a reset
///   and the deadline cancel; the others (a load alone, streams, files, bodies read as they are sent, pinned servers,
///   upload progress part by part) through the response delegate API (`execute(request:delegate:)`). What a load
///   returns is the same either way.
/// - **Responses**: buffered (the default), as a stream (`HTTPResponse.bodyStream`, whose backpressure stops reading
///   from the socket while the consumer's buffer is full), or written to a file off the event loop
///   (`ResponseDelivery.file(_:resumingAt:)`, for `download(_:to:resumeAttempts:)`).
/// - **Timeouts**: `HTTPRequest.timeout` is a deadline for the whole transfer, as on Linux's URLSession.
///
/// ## Trust and client certificates
///
/// The same `ServerTrustEvaluator` (`PublicKeyPinning`) and `ClientIdentity` values as `URLSessionLoader`'s, per
/// loader or per request (`HTTPRequest.serverTrustPolicy`, `HTTPRequest.clientIdentity`), work here on every
/// platform, Linux included:
///
/// - A client identity (the `certificateChainAndPrivateKey` form: `ClientIdentity(pemEncoded:)`) is presented
///   through NIOSSL when the server asks for one; requests with one get connections of their own. A server that
///   requires a certificate and gets none (or one it does not trust) ends the handshake, and the load fails with
///   `insecureConnection` and no response.
/// - A request with a server-trust evaluator is sent over a TLS connection the loader makes itself, with NIOSSL
///   and a verification callback: the platform's evaluation first (RFC 5280 path validation to the trust roots of
///   the client's `TLSConfiguration`, the system's by default, and the host name) unless the evaluator replaces it,
///   then the evaluator with the validated chain. A server it refuses never sees a byte of the request, and the load
///   fails with `insecureConnection` naming the reason. (AsyncHTTPClient takes no verification callback, so
///   AsyncHTTPClient speaks plain HTTP/1.1 to the loader's bridge over a private Unix domain socket, and the bridge
///   relays it over the verified connection.) Plain `http` with an evaluator is refused, as everywhere.
///
/// ## HTTP/2
///
/// Over `https`, the client offers HTTP/2 and HTTP/1.1 (ALPN) and speaks what the server picks
/// (`HTTPClient.Configuration.httpVersion`, `.automatic` by default; `.http1Only` turns HTTP/2 off). Once a
/// connection to an origin speaks HTTP/2, the loads to that origin that follow share it as concurrent streams (up to
/// the server's `SETTINGS_MAX_CONCURRENT_STREAMS`). Cancelling a load, a stream or a download resets its HTTP/2
/// stream only: the other loads on the connection go on. Requests with a server-trust evaluator go through the
/// loader's verified connection, which speaks HTTP/1.1; plain `http` is HTTP/1.1 too (no cleartext HTTP/2).
///
/// ## Proxies
///
/// `init(configuration:eventLoopGroup:serverTrustEvaluator:clientIdentity:proxy:)` takes a `ProxyConfiguration`: a
/// proxy you name (`.server(_:bypassing:)`), the environment's `http_proxy`, `https_proxy` and `no_proxy`
/// (`.environment`, read once, when the loader is made), or none (the default). AsyncHTTPClient sends every request
/// through a `CONNECT` tunnel, `http` ones too, with TLS end to end for `https`; a proxy's credentials go to the proxy
/// only, as `Proxy-Authorization` on the `CONNECT`, never inside the tunnel. AsyncHTTPClient sets its proxy per
/// client, so the loader makes one client for direct requests and one for each proxy, and picks one for each request
/// by `ProxyConfiguration.route(for:)`: a bypassed host is reached over the direct client. A proxy's `407` to the
/// `CONNECT` fails the load with `cannotAuthenticate`, naming the tunnel; another refusal, with `invalidResponse`. Requests with a
/// server-trust evaluator cannot go through a proxy yet (the loader's verified connection is made directly): they
/// fail with `invalidRequest`, never sent around the proxy.
///
/// ## The client, and shutting it down
///
/// ``init(configuration:eventLoopGroup:serverTrustEvaluator:clientIdentity:proxy:)`` makes an `HTTPClient` the loader
/// owns (and one per proxy): call ``shutdown()`` when you are done with it (a service's shutdown hook); loads after it fail with
/// `cannotConnect`, the loads in flight complete first. Should the loader be released without it, its `deinit`
/// starts the client's shutdown and returns at once; it never blocks.
/// ``init(client:tlsConfiguration:serverTrustEvaluator:clientIdentity:)`` borrows a client you own (Vapor's
/// `app.http.client.shared`, `HTTPClient.shared`): the loader never shuts it down. Configure such a client with
/// `redirectConfiguration: .disallow`, or AsyncHTTPClient follows redirects inside the transport.
///
/// ## Cancellation and reset
///
/// Cancelling the task that awaits ``load(_:)`` cancels the AsyncHTTPClient task and returns `cancelled` at once.
/// During a reset the loader refuses loads with `resetInProgress` (except a request marked as part of the reset);
/// `ResetMode.drain` waits until every load in flight has completed, `ResetMode.cancel` cancels them, streams
/// included.
// Safety: configuration is immutable (`let`s of Sendable types); mutable state is behind `state`'s lock.
public final class AsyncHTTPClientLoader: HTTPLoader, @unchecked Sendable {
    /// The client requests are sent with (those reached directly, when there is a proxy).
    public let client: HTTPClient
    /// The proxies requests go through; `.none` for a borrowed client, whose own configuration decides.
    public let proxy: ProxyConfiguration
    /// A client for each proxy of ``proxy``, made and shut down with ``client``.
    private let proxyClients: [ProxyServer: HTTPClient]
    /// The server-trust evaluator and client identity for requests that bring none of their own.
    public let tls: TLSSettings
    /// The TLS configuration that pinned connections and client identities start from.
    let baseTLSConfiguration: TLSConfiguration
    /// Whether the loader made ``client`` and so shuts it down.
    private let ownsClient: Bool
    private let connectTimeout: TimeAmount
    private let configurationText: String
    private let bridges: TLSBridges
    private let state = NIOLockedValueBox(State())

    private struct State {
        /// Counts cancelling resets, so that a load accepted before one began but started after it is cancelled.
        var cancellingResets = 0
        var loadsInFlight = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// The transfers under way, streams included until their body ends, for a cancelling reset.
        var transfers: [ObjectIdentifier: Underway] = [:]
        var isShutDown = false
        /// The TLS configuration presenting each client identity, made once: AsyncHTTPClient pools connections
        /// by configuration.
        var identityConfigurations: [ClientIdentity: TLSConfiguration] = [:]
    }

    /// The configuration the loader's own client gets by default: redirects not followed, no retried connection
    /// attempts, responses decoded from `gzip` and `deflate`, and AsyncHTTPClient's defaults for the rest (connect
    /// timeout 10 s, no read timeout, connections idle for 60 s closed, HTTP/2 where the server offers it).
    public static var defaultConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, decompression: .enabled(limit: .none))
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// Creates a loader with a client of its own; call ``shutdown()`` when you no longer need it.
    ///
    /// - Parameters:
    ///   - configuration: The client's configuration; ``defaultConfiguration`` by default. Its
    ///     `redirectConfiguration` is replaced by `.disallow`: redirects are followed in the chain.
    ///   - eventLoopGroup: The event loops the client runs on; NIO's shared group by default (pass your server's,
    ///     such as Vapor's `app.eventLoopGroup`, to share its threads).
    ///   - serverTrustEvaluator: An evaluator, such as `PublicKeyPinning`, for every request whose
    ///     `serverTrustPolicy` does not say otherwise.
    ///   - clientIdentity: The client certificate presented for mutual TLS, for requests without their own: a
    ///     `ClientIdentity` of the form `certificateChainAndPrivateKey` (`ClientIdentity(pemEncoded:)`).
    ///   - proxy: The proxies to send requests through (`.none`, a server, or `.environment`); `.none` by default.
    ///     It replaces `configuration.proxy`.
    public init(
        configuration: HTTPClient.Configuration = AsyncHTTPClientLoader.defaultConfiguration,
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup,
        serverTrustEvaluator: (any ServerTrustEvaluator)? = nil,
        clientIdentity: ClientIdentity? = nil,
        proxy: ProxyConfiguration = .none
    ) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        configuration.proxy = nil
        self.client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.proxy = proxy
        var proxyClients: [ProxyServer: HTTPClient] = [:]
        for server in [proxy.httpProxy, proxy.httpsProxy].compactMap({ $0 }) where proxyClients[server] == nil {
            var proxied = configuration
            let authorization = server.credentials.map {
                HTTPClient.Authorization.basic(username: $0.username, password: $0.password)
            }
            proxied.proxy = .server(host: server.host, port: server.port, authorization: authorization)
            proxyClients[server] = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: proxied)
        }
        self.proxyClients = proxyClients
        self.ownsClient = true
        self.tls = TLSSettings(serverTrustEvaluator: serverTrustEvaluator, clientIdentity: clientIdentity)
        self.baseTLSConfiguration = configuration.tlsConfiguration ?? .makeClientConfiguration()
        self.connectTimeout = configuration.timeout.connect ?? .seconds(10)
        self.configurationText =
            Self.describe(configuration) + (proxy.isDirect ? "" : ", proxy: \(proxy)")
        self.bridges = TLSBridges()
    }

    /// Creates a loader over a client you own and shut down; the loader never shuts it down.
    ///
    /// - Parameters:
    ///   - client: The client. Make it with `redirectConfiguration: .disallow`, or AsyncHTTPClient follows redirects
    ///     before the chain sees them.
    ///   - tlsConfiguration: The TLS configuration that pinned connections and client identities start from (trust
    ///     roots, TLS versions): the one the client was made with, if any — a client does not reveal it; NIOSSL's
    ///     client default otherwise. Pinned connections are made with a connect timeout of 10 s.
    ///   - serverTrustEvaluator: As for
    ///     ``init(configuration:eventLoopGroup:serverTrustEvaluator:clientIdentity:proxy:)``.
    ///   - clientIdentity: As for ``init(configuration:eventLoopGroup:serverTrustEvaluator:clientIdentity:proxy:)``.
    public init(
        client: HTTPClient,
        tlsConfiguration: TLSConfiguration? = nil,
        serverTrustEvaluator: (any ServerTrustEvaluator)? = nil,
        clientIdentity: ClientIdentity? = nil
    ) {
        self.client = client
        self.proxy = .none
        self.proxyClients = [:]
        self.ownsClient = false
        self.tls = TLSSettings(serverTrustEvaluator: serverTrustEvaluator, clientIdentity: clientIdentity)
        self.baseTLSConfiguration = tlsConfiguration ?? .makeClientConfiguration()
        self.connectTimeout = .seconds(10)
        self.configurationText = "client: borrowed"
        self.bridges = TLSBridges()
    }

    deinit {
        bridges.close()
        // Never a blocking shutdown here: the client's own asynchronous one, which keeps it alive until done.
        if ownsClient, !state.withLockedValue({ $0.isShutDown }) {
            _ = client.shutdown()
            for proxyClient in proxyClients.values { _ = proxyClient.shutdown() }
        }
    }

    /// Shuts the loader down: new loads fail with `cannotConnect` at once; the loads in flight complete (a streamed
    /// body still arriving afterwards is cancelled); then the client the loader made is shut down. A client the
    /// loader was given is left running: it is yours to shut down. Calling it again does nothing.
    public func shutdown() async {
        let shouldShutDown = state.withLockedValue { state -> Bool in
            defer { state.isShutDown = true }
            return !state.isShutDown
        }
        guard shouldShutDown else { return }
        await waitUntilIdle()
        bridges.close()
        if ownsClient {
            try? await client.shutdown()
            for proxyClient in proxyClients.values { try? await proxyClient.shutdown() }
        } else {
            for underway in state.withLockedValue({ Array($0.transfers.values) }) { underway.cancel() }
        }
    }

    /// A load under way: a transfer through the delegate API, or an exchange through the async API.
    private enum Underway: Sendable {
        case transfer(Transfer)
        case exchange(AsyncExchange)

        func cancel() {
            switch self {
            case .transfer(let transfer): transfer.cancel()
            case .exchange(let exchange): exchange.cancel()
            }
        }
    }

    /// The client's timeouts and connection limits.
    public override var configurationDescription: String { configurationText }

    private static func describe(_ configuration: HTTPClient.Configuration) -> String {
        let connect = configuration.timeout.connect.map(Self.format) ?? "10 s"
        let read = configuration.timeout.read.map(Self.format) ?? "none"
        return "connectTimeout: \(connect), readTimeout: \(read), "
            + "connectionsPerHost: \(configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit)"
    }

    private static func format(_ amount: TimeAmount) -> String {
        let milliseconds = amount.nanoseconds / 1_000_000
        return milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(milliseconds) ms"
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        enum Admission {
            case accepted(epoch: Int, othersInFlight: Bool)
            case refused(HTTPError.Code, String)
        }
        let admission = state.withLockedValue { state -> Admission in
            if state.isShutDown { return .refused(.cannotConnect, "AsyncHTTPClientLoader was shut down") }
            // Under the lock `waitUntilIdle` counts loads with: a reset that has begun is seen here, or waits for this
            // load.
            if isResetting, !request.isPartOfReset { return .refused(.resetInProgress, "") }
            state.loadsInFlight += 1
            return .accepted(epoch: state.cancellingResets, othersInFlight: state.loadsInFlight > 1)
        }
        guard case .accepted(let epoch, let othersInFlight) = admission else {
            if case .refused(let code, let message) = admission {
                if code == .resetInProgress { return .failure(resetRefusal(of: request)) }
                return .failure(HTTPError(code, request: request, message: message))
            }
            return .failure(HTTPError(.unknown, request: request))
        }
        defer { loadEnded() }
        let client: HTTPClient
        switch route(for: request) {
        case .success(let chosen): client = chosen
        case .failure(let error): return .failure(error)
        }
        let prepared: PreparedRequest
        do {
            prepared = try await prepare(request)
        } catch {
            return .failure(error)
        }
        if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }
        // Beside other loads, a buffered load with its body in memory (or none) goes through the async API, which
        // runs on the connection's event loop where the delegate API hops to the task's; alone, through the delegate
        // API, which needs no task of its own (whose wake-up costs more than the hops it saves). Never a pinned server,
        // nor a load that wants upload progress part by part (which only the delegate API reports).
        if othersInFlight, prepared.bridge == nil, case .buffered = request.responseDelivery,
            prepared.body.map({ $0.inMemory != nil && request.progressHandler == nil }) ?? true
        {
            return await exchange(request, prepared: prepared, client: client, epoch: epoch)
        }
        let transfer = Transfer(request: request, totalBytesToSend: prepared.bodyLength, bridge: prepared.bridge)
        let ahcRequest: HTTPClient.Request
        do {
            ahcRequest = try makeRequest(prepared, for: transfer)
        } catch {
            return .failure(error)
        }
        let id = ObjectIdentifier(transfer)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelNow = state.withLockedValue { state -> Bool in
                    state.transfers[id] = .transfer(transfer)
                    return state.cancellingResets != epoch
                }
                let onEnd: @Sendable () -> Void = {
                    self.state.withLockedValue { _ = $0.transfers.removeValue(forKey: id) }
                }
                if cancelNow {
                    transfer.cancel()  // a cancelling reset began after admission: nothing is sent
                }
                transfer.begin(
                    continuation, onEnd: onEnd, client: client, request: ahcRequest, deadline: prepared.deadline)
            }
        } onCancel: {
            transfer.cancel()
        }
    }

    /// Sends a buffered load through AsyncHTTPClient's async API, in a task a cancelling reset can cancel.
    private func exchange(
        _ request: HTTPRequest, prepared: PreparedRequest, client: HTTPClient, epoch: Int
    ) async -> HTTPResult {
        let exchange = AsyncExchange(request: request)
        let id = ObjectIdentifier(exchange)
        let cancelNow = state.withLockedValue { state -> Bool in
            state.transfers[id] = .exchange(exchange)
            return state.cancellingResets != epoch
        }
        defer { state.withLockedValue { _ = $0.transfers.removeValue(forKey: id) } }
        // A cancelling reset that began after admission: nothing is sent. (The load's own cancellation was checked
        // just before, and from here on its handler below cancels the exchange.)
        if cancelNow { return .failure(HTTPError(.cancelled, request: request)) }
        if let deadline = prepared.deadline { exchange.startDeadline(deadline, on: client.eventLoopGroup.any()) }
        // Started at once on this thread, up to AsyncHTTPClient's first suspension: a task scheduled elsewhere costs a
        // thread's wake-up before the request even leaves.
        let task: Task<HTTPResult, Never>
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            task = Task.immediate { await exchange.run(prepared, client: client) }
        } else {
            task = Task { await exchange.run(prepared, client: client) }
        }
        exchange.attach(task)
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            exchange.cancel()
        }
    }

    /// The client to send `request` with, by the proxy configuration's route for it; or why it cannot be sent.
    private func route(for request: HTTPRequest) -> Result<HTTPClient, HTTPError> {
        switch proxy.checkedRoute(for: request) {
        case .failure(let error):
            return .failure(error)
        case .success(.direct):
            return .success(client)
        case .success(.refused(let reason)):
            return .failure(
                HTTPError(.invalidRequest, request: request, message: "\(reason); the request was not sent"))
        case .success(.proxy(let server)):
            if Self.isHTTPS(request.scheme), tls.resolved(for: request).serverTrustEvaluator != nil {
                return .failure(
                    HTTPError(
                        .invalidRequest, request: request,
                        message: "the request has a server-trust evaluator and the proxy configuration sends it "
                            + "through \(server), but AsyncHTTPClientLoader's verified TLS connection cannot go "
                            + "through a proxy yet; it was not sent (bypass the proxy for this host, or drop the pins)")
                )
            }
            guard let proxyClient = proxyClients[server] else {
                return .failure(
                    HTTPError(.invalidRequest, request: request, message: "no client for the proxy \(server)"))
            }
            return .success(proxyClient)
        }
    }

    /// The transfers under way, streams whose body is still arriving included: for tests.
    var transfersUnderWay: Int { state.withLockedValue { $0.transfers.count } }

    private func loadEnded() {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.loadsInFlight -= 1
            guard state.loadsInFlight == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The TLS configuration presenting `identity`, made once per identity.
    func tlsConfiguration(presenting identity: ClientIdentity) throws -> TLSConfiguration {
        if let made = state.withLockedValue({ $0.identityConfigurations[identity] }) { return made }
        let made = try Self.tlsConfiguration(presenting: identity, over: baseTLSConfiguration)
        return state.withLockedValue { state in
            if let existing = state.identityConfigurations[identity] { return existing }
            state.identityConfigurations[identity] = made
            return made
        }
    }

    /// The bridge for pinned requests to `host:port` with `settings`, started on first use.
    func bridge(host: String, port: Int, settings: TLSSettings) async throws -> TLSBridge {
        try await bridges.bridge(for: TLSBridges.Key(host: host, port: port, settings: settings)) { path in
            try await TLSBridge.start(
                socketPath: path, host: host, port: port, settings: settings, base: self.baseTLSConfiguration,
                connectTimeout: self.connectTimeout, group: self.client.eventLoopGroup)
        }
    }

    // MARK: - Reset

    /// With `ResetMode.cancel`, cancels the transfers in flight (streams included), whose loads complete with
    /// `cancelled` at once.
    public override func failHeldLoads(_ mode: ResetMode) {
        let transfers = state.withLockedValue { state -> [Underway] in
            guard mode == .cancel else { return [] }
            state.cancellingResets += 1
            return Array(state.transfers.values)
        }
        for transfer in transfers { transfer.cancel() }
    }

    /// Returns once every load in flight has completed (the base class waits for the loads passed to this one; a
    /// chain of this loader alone has nobody to count them).
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
}

extension TransportCapabilities {
    /// AsyncHTTPClient, through ``AsyncHTTPClientLoader``: it calls server-trust evaluators (over a TLS connection
    /// the loader makes with NIOSSL) and presents client identities of the form
    /// `ClientIdentity.Form.certificateChainAndPrivateKey`, on every platform.
    public static let asyncHTTPClient = TransportCapabilities(
        name: "AsyncHTTPClient", canEvaluateServerTrust: true, clientIdentityForms: [.certificateChainAndPrivateKey])
}

/// The loader's TLS bridges, one per server and TLS settings, each with a socket in a folder of the loader's own
/// that only this user can open; removed with the folder when the loader shuts down.
final class TLSBridges: Sendable {
    struct Key: Hashable, Sendable {
        var host: String
        var port: Int
        var settings: TLSSettings
    }

    private enum Entry {
        case starting(Task<TLSBridge, any Error>)
        case running(TLSBridge)
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var folder: URL?
        var socketsMade = 0
        var isClosed = false
    }

    private let state = NIOLockedValueBox(State())

    /// The bridge for `key`, started with `start` (given the socket's path) by the first caller; callers meanwhile
    /// wait for the same start. A bridge that fails to start is not kept: the next caller tries again.
    func bridge(
        for key: Key, start: @escaping @Sendable (String) async throws -> TLSBridge
    ) async throws -> TLSBridge {
        enum Found {
            case bridge(TLSBridge)
            case starting(Task<TLSBridge, any Error>)
            case closed
        }
        let folder = try folder()
        let found = state.withLockedValue { state -> Found in
            if state.isClosed { return .closed }
            switch state.entries[key] {
            case .running(let bridge)?:
                return .bridge(bridge)
            case .starting(let task)?:
                return .starting(task)
            case nil:
                state.socketsMade += 1
                let path = folder.appending(path: "\(state.socketsMade).sock").path
                let task = Task { try await start(path) }
                state.entries[key] = .starting(task)
                return .starting(task)
            }
        }
        switch found {
        case .bridge(let bridge):
            return bridge
        case .closed:
            throw HTTPClientError.alreadyShutdown
        case .starting(let task):
            let bridge: TLSBridge
            do {
                bridge = try await task.value
            } catch {
                state.withLockedValue { state in
                    if case .starting? = state.entries[key] { state.entries[key] = nil }
                }
                throw error
            }
            let isClosed = state.withLockedValue { state -> Bool in
                if state.isClosed { return true }
                state.entries[key] = .running(bridge)
                return false
            }
            if isClosed {
                bridge.close()
                throw HTTPClientError.alreadyShutdown
            }
            return bridge
        }
    }

    /// The folder of this loader's sockets, made on first use with owner-only permissions.
    private func folder() throws -> URL {
        if let folder = state.withLockedValue({ $0.folder }) { return folder }
        let folder = FileManager.default.temporaryDirectory.appending(path: "http-ahc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return state.withLockedValue { state in
            if let existing = state.folder {
                try? FileManager.default.removeItem(at: folder)
                return existing
            }
            state.folder = folder
            return folder
        }
    }

    /// Closes every bridge and removes the sockets' folder.
    func close() {
        let (bridges, folder) = state.withLockedValue { state -> ([TLSBridge], URL?) in
            state.isClosed = true
            defer { state.entries = [:] }
            return (
                state.entries.values.compactMap { if case .running(let bridge) = $0 { bridge } else { nil } },
                state.folder
            )
        }
        for bridge in bridges { bridge.close() }
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }
}

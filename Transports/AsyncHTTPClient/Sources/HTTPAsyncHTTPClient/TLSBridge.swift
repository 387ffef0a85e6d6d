import Foundation
import HTTP
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// The TLS connections of requests with a server-trust evaluator (pinning), made by the loader itself.
///
/// AsyncHTTPClient builds its TLS handlers itself and takes no verification callback; NIOSSL takes one only on a
/// handler. So a request with an evaluator does not go to the server directly: AsyncHTTPClient sends it as plain
/// HTTP/1.1 over a Unix domain socket, in a folder only this user can open, to the bridge, which makes the TLS
/// connection to the server with NIOSSL and a verification callback (``ServerTrustVerification``) and then relays the
/// bytes both ways, with backpressure. The bridge does not read a byte of the request before the server has been
/// trusted: a refused server never sees it.
///
/// One bridge serves one server (host and port) with one set of ``HTTP/TLSSettings``, so AsyncHTTPClient's pool, which
/// keys connections by socket, never lets a connection made for one set of settings carry a request of another.
/// Connections are HTTP/1.1 (AsyncHTTPClient speaks plain HTTP/1.1 to a socket; the bridge offers only `http/1.1`
/// in ALPN).
final class TLSBridge: Sendable {
    /// The Unix domain socket AsyncHTTPClient connects to.
    let socketPath: String
    let host: String
    let port: Int
    private let serverChannel: any Channel
    /// How many connections failed to reach a trusted server, and the last reason.
    private let failures = NIOLockedValueBox<(count: Int, last: (any Error & Sendable)?)>((0, nil))

    private init(socketPath: String, host: String, port: Int, serverChannel: any Channel) {
        self.socketPath = socketPath
        self.host = host
        self.port = port
        self.serverChannel = serverChannel
    }

    /// Starts a bridge listening on `socketPath`.
    static func start(
        socketPath: String, host: String, port: Int, settings: TLSSettings, base: TLSConfiguration,
        connectTimeout: TimeAmount, group: any EventLoopGroup
    ) async throws -> TLSBridge {
        guard let evaluator = settings.serverTrustEvaluator else {
            throw TLSConfigurationError(message: "a TLS bridge needs a server-trust evaluator")
        }
        var configuration = base
        configuration.applicationProtocols = ["http/1.1"]
        configuration.certificateVerification =
            evaluator.defaultEvaluation == .required ? .fullVerification : .noHostnameVerification
        if let identity = settings.clientIdentity {
            configuration = try AsyncHTTPClientLoader.tlsConfiguration(presenting: identity, over: configuration)
        }
        let context = try NIOSSLContext(configuration: configuration)
        let verification = ServerTrustVerification(
            evaluator: evaluator, host: host, port: port,
            roots: evaluator.defaultEvaluation == .required
                ? try ServerTrustVerification.roots(of: base) : ServerTrustVerification.noRoots)
        let box = NIOLockedValueBox<TLSBridge?>(nil)
        let address = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let serverHostname = Self.isAddress(address) ? nil : address
        let serverChannel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.autoRead, value: false)  // nothing of the request is read before the server is trusted
            .childChannelInitializer { inbound in
                let connected = Self.connect(
                    to: address, port: port, context: context, serverHostname: serverHostname,
                    verification: verification, connectTimeout: connectTimeout, on: inbound.eventLoop)
                connected.whenComplete { result in
                    switch result {
                    case .success(let outbound):
                        // A TLS error after the handshake (a server that refuses the client's certificate says so
                        // with an alert once it has checked it) is why the relayed connection closes.
                        Self.glue(inbound, outbound) { box.withLockedValue { $0 }?.recordFailure($0) }
                    case .failure(let error):
                        box.withLockedValue { $0 }?.recordFailure(error)
                        inbound.close(promise: nil)
                    }
                }
                return inbound.eventLoop.makeSucceededVoidFuture()
            }
            .bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true)
            .get()
        let bridge = TLSBridge(socketPath: socketPath, host: host, port: port, serverChannel: serverChannel)
        box.withLockedValue { $0 = bridge }
        return bridge
    }

    /// Stops accepting connections; the relayed ones end with their own.
    func close() {
        serverChannel.close(promise: nil)
    }

    /// How many connections have failed so far.
    var failureCount: Int { failures.withLockedValue { $0.count } }

    /// Why the last connection failed, if one failed after `count` had failed.
    func failure(since count: Int) -> (any Error & Sendable)? {
        failures.withLockedValue { $0.count > count ? $0.last : nil }
    }

    private func recordFailure(_ error: any Error) {
        let sendable: any Error & Sendable
        if let error = error as? ServerTrustRejection {
            sendable = error
        } else if let error = error as? NIOSSLError {
            sendable = error
        } else if let error = error as? NIOSSLExtraError {
            sendable = error
        } else if let error = error as? BoringSSLError {
            sendable = error
        } else if let error = error as? IOError {
            sendable = error
        } else if let error = error as? NIOConnectionError {
            sendable = error
        } else if let error = error as? ChannelError {
            sendable = error
        } else {
            sendable = SendableError(error)
        }
        failures.withLockedValue { $0 = ($0.count + 1, sendable) }
    }

    private static func isAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    /// A TLS connection to the server whose handshake has completed with the server trusted.
    private static func connect(
        to host: String, port: Int, context: NIOSSLContext, serverHostname: String?,
        verification: ServerTrustVerification, connectTimeout: TimeAmount, on eventLoop: any EventLoop
    ) -> EventLoopFuture<any Channel> {
        let handshake = eventLoop.makePromise(of: Void.self)
        let rejection = NIOLockedValueBox<ServerTrustRejection?>(nil)
        let connected = ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try NIOSSLClientHandler(
                        context: context, serverHostname: serverHostname,
                        customVerificationCallbackWithMetadata: { presented, promise in
                            Task {
                                switch await verification.verify(presented: presented) {
                                case .success(let chain):
                                    do {
                                        let certificates = try chain.map {
                                            try NIOSSLCertificate(bytes: [UInt8]($0), format: .der)
                                        }
                                        promise.succeed(
                                            .certificateVerified(
                                                VerificationMetadata(NIOSSL.ValidatedCertificateChain(certificates))))
                                    } catch {
                                        promise.succeed(.failed)
                                    }
                                case .failure(let refusal):
                                    rejection.withLockedValue { $0 = refusal }
                                    promise.succeed(.failed)
                                }
                            }
                        })
                    try channel.pipeline.syncOperations.addHandler(tls)
                    try channel.pipeline.syncOperations.addHandler(HandshakeWaiter(promise: handshake))
                }
            }
            .connect(host: host, port: port)
        connected.whenFailure { handshake.fail($0) }
        return connected.flatMap { channel in
            handshake.futureResult.map { channel }
        }.flatMapErrorThrowing { error in
            throw rejection.withLockedValue { $0 } ?? error
        }
    }

    /// Joins the two channels: each relays what it reads to the other; the request starts to flow.
    private static func glue(
        _ inbound: any Channel, _ outbound: any Channel, onTLSError: @escaping @Sendable (any Error) -> Void
    ) {
        inbound.eventLoop.execute {
            let (one, other) = GlueHandler.matchedPair()
            other.onTLSError = onTLSError
            do {
                try inbound.pipeline.syncOperations.addHandler(one)
                try outbound.pipeline.syncOperations.addHandler(other)
                inbound.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in inbound.close(promise: nil) }
            } catch {
                inbound.close(promise: nil)
                outbound.close(promise: nil)
            }
        }
    }
}

/// Completes a promise when the TLS handshake has completed, or fails it with the first error.
private final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private var promise: EventLoopPromise<Void>?

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            promise?.succeed()
            promise = nil
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise?.fail(error)
        promise = nil
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.eof)
        promise = nil
        context.fireChannelInactive()
    }
}

/// One end of a relay between two channels on one event loop (SwiftNIO's "glue" pattern): what one reads the other
/// writes; a channel reads only while its partner can write, so a slow side holds the fast one back.
private final class GlueHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false
    /// Told of NIOSSL's errors on this end's channel, before the partner is closed.
    var onTLSError: (@Sendable (any Error) -> Void)?

    static func matchedPair() -> (GlueHandler, GlueHandler) {
        let first = GlueHandler()
        let second = GlueHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    private func partnerWrite(_ data: NIOAny) {
        context?.write(data, promise: nil)
    }

    private func partnerFlush() {
        context?.flush()
    }

    private func partnerClose() {
        context?.close(promise: nil)
    }

    private func partnerBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }

    private var isWritable: Bool {
        context?.channel.isWritable ?? false
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.partnerWrite(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.partnerFlush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.partnerClose()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError { onTLSError?(error) }
        partner?.partnerClose()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
    }

    func read(context: ChannelHandlerContext) {
        if partner?.isWritable ?? false {
            context.read()
        } else {
            pendingRead = true
        }
    }
}

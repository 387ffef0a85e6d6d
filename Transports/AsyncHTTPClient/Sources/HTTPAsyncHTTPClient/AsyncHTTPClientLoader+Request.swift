import AsyncHTTPClient
import Foundation
@_spi(Transport) import HTTP
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

/// A request checked and ready for AsyncHTTPClient, and what its transfer needs to know about it.
struct PreparedRequest: Sendable {
    /// Where AsyncHTTPClient sends it, as text that it parses once: the request's URL, every part checked, or the
    /// bridge's socket for a pinned request.
    var url: String
    var method: NIOHTTP1.HTTPMethod
    var headers: NIOHTTP1.HTTPHeaders
    /// Where the body's bytes come from, or `nil` when it is empty.
    var body: HTTPBodySource?
    var bodyLength: Int64?
    /// The point by which the whole transfer must be done.
    var deadline: NIODeadline?
    /// The TLS configuration of a request that presents a client identity (and has no evaluator).
    var tlsConfiguration: TLSConfiguration?
    /// The bridge a request with a server-trust evaluator goes through.
    var bridge: TLSBridge?
}

/// A request body that failed to produce its bytes while it was being sent.
struct BodyReadError: Error, CustomStringConvertible {
    var bodyType: String
    var underlyingError: SendableError

    var description: String { "the body (\(bodyType)) could not be read: \(underlyingError)" }
}

extension AsyncHTTPClientLoader {
    /// Validates `request` and works out how AsyncHTTPClient sends it: the URL, the header fields (the request's own,
    /// then its body's), the body, the TLS settings and the deadline.
    ///
    /// - Throws: `invalidRequest` for a malformed request or a body that cannot be encoded; `insecureConnection` for
    ///   TLS settings this transport cannot honour (a pin on plain `http`, an identity it cannot present) or a
    ///   client identity NIOSSL cannot load.
    func prepare(_ request: HTTPRequest) async throws(HTTPError) -> PreparedRequest {
        let url = try request.validatedURLStringForSending()
        let settings = tls.resolved(for: request)
        if let refusal = TransportCapabilities.asyncHTTPClient.refusal(of: request, with: settings) { throw refusal }

        var headers = NIOHTTP1.HTTPHeaders()
        for field in request.headersIncludingBody { headers.add(name: field.name, value: field.value) }

        let source = try request.bodySource()
        var prepared = PreparedRequest(
            url: url, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue), headers: headers,
            body: source,
            bodyLength: source?.length, deadline: request.timeout.map(Self.deadline(after:)))

        guard Self.isHTTPS(request.scheme) else { return prepared }
        if settings.serverTrustEvaluator != nil {
            try await routeThroughBridge(&prepared, request: request, settings: settings)
        } else if let identity = settings.clientIdentity {
            do {
                prepared.tlsConfiguration = try tlsConfiguration(presenting: identity)
            } catch {
                throw HTTPError(
                    .insecureConnection, request: request,
                    message: "the client identity cannot be used with NIOSSL: \(error)", underlyingError: error)
            }
        }
        return prepared
    }

    /// Sends a request with a server-trust evaluator to the bridge for its server and settings: its URL becomes the
    /// bridge's socket with the request's path and query, and `Host` names the server.
    private func routeThroughBridge(
        _ prepared: inout PreparedRequest, request: HTTPRequest, settings: TLSSettings
    ) async throws(HTTPError) {
        guard let host = request.host, !host.isEmpty else {
            throw HTTPError(.invalidRequest, request: request, message: "the request has no host")
        }
        let port = request.port ?? 443
        do {
            prepared.bridge = try await bridge(host: host, port: port, settings: settings)
        } catch {
            throw HTTPError(
                .insecureConnection, request: request,
                message: "could not prepare the verified TLS connection to \(HTTPError.target(of: request)): \(error)",
                underlyingError: error)
        }
        var target = request.percentEncodedPath.isEmpty ? "/" : request.percentEncodedPath
        if let query = request.percentEncodedQuery { target += "?" + query }
        guard let bridge = prepared.bridge, let url = URL(httpURLWithSocketPath: bridge.socketPath, uri: target) else {
            throw HTTPError(.invalidRequest, request: request, message: "the request's path cannot be sent")
        }
        prepared.url = url.absoluteString
        if !prepared.headers.contains(name: "Host") {
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            prepared.headers.add(name: "Host", value: request.port.map { "\(bracketed):\($0)" } ?? bracketed)
        }
    }

    /// AsyncHTTPClient's request for `prepared`, its body read for `transfer`: bytes in memory go at once; anything
    /// else is read a chunk at a time as AsyncHTTPClient writes them (each chunk waits until the previous one is
    /// written), by a task the transfer cancels when it ends.
    func makeRequest(_ prepared: PreparedRequest, for transfer: Transfer) throws(HTTPError) -> HTTPClient.Request {
        var body: HTTPClient.Body?
        if let source = prepared.body {
            if let data = source.inMemory {
                body = .byteBuffer(ByteBuffer(data: data))
            } else {
                let eventLoop = client.eventLoopGroup.any()
                let bodyType = "\(type(of: transfer.request.body))"
                body = .stream(contentLength: source.length) { [weak transfer] writer in
                    let done = eventLoop.makePromise(of: Void.self)
                    let task = Task {
                        do {
                            for try await chunk in source.chunks(ofSize: 64 * 1024) {
                                try await writer.write(.byteBuffer(ByteBuffer(data: chunk))).get()
                            }
                            try Task.checkCancellation()
                            done.succeed()
                        } catch is CancellationError {
                            done.fail(HTTPClientError.cancelled)
                        } catch let error as HTTPClientError {
                            done.fail(error)
                        } catch {
                            done.fail(BodyReadError(bodyType: bodyType, underlyingError: SendableError(error)))
                        }
                    }
                    if let transfer { transfer.own(bodyWriter: task) } else { task.cancel() }
                    return done.futureResult
                }
            }
        }
        do {
            return try HTTPClient.Request(
                url: prepared.url, method: prepared.method, headers: prepared.headers, body: body,
                tlsConfiguration: prepared.tlsConfiguration)
        } catch {
            throw HTTPError(
                .invalidRequest, request: transfer.request, message: "AsyncHTTPClient refused the request: \(error)",
                underlyingError: error)
        }
    }

    /// Whether `scheme` is `https`, in any case: a comparison before a lowercased copy, which nearly every request skips.
    static func isHTTPS(_ scheme: String) -> Bool {
        scheme == "https" || (scheme.utf8.count == 5 && scheme.lowercased() == "https")
    }

    /// The deadline `timeout` from now; a week at most, which is forever to HTTP, and never in the past.
    static func deadline(after timeout: Duration) -> NIODeadline {
        let (seconds, attoseconds) = timeout.components
        let week: Int64 = 7 * 24 * 3_600
        let nanoseconds: Int64 =
            if seconds >= week {
                week * 1_000_000_000
            } else if seconds < 0 {
                1
            } else {
                max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            }
        return .now() + .nanoseconds(nanoseconds)
    }

    /// `base` presenting `identity`'s certificate chain and private key.
    static func tlsConfiguration(
        presenting identity: ClientIdentity, over base: TLSConfiguration
    ) throws -> TLSConfiguration {
        guard let key = identity.privateKey else {
            throw TLSConfigurationError(message: "a \(identity.form) identity has no key NIOSSL can use")
        }
        var configuration = base
        configuration.certificateChain = try identity.certificateChain.map {
            .certificate(try NIOSSLCertificate(bytes: [UInt8]($0), format: .der))
        }
        configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: [UInt8](key), format: .der))
        return configuration
    }
}

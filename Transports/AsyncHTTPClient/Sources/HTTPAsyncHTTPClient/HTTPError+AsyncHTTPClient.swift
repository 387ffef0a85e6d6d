import AsyncHTTPClient
import HTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

extension HTTPError {
    /// Maps an error from AsyncHTTPClient, SwiftNIO or NIOSSL to an ``HTTPError`` with the code
    /// ``URLSessionLoader`` uses for the same failure, keeping the original as the underlying error.
    ///
    /// - A refused or unreachable connection, or one lost before the response was complete: `cannotConnect`.
    /// - A connect timeout, a TLS handshake timeout or the request's deadline: `timedOut`.
    /// - A TLS failure (the handshake, a certificate the platform or an evaluator refused, a wrong name):
    ///   `insecureConnection`, with NIOSSL's text or the evaluator's reason.
    /// - A proxy's `407 Proxy Authentication Required` to the `CONNECT` of an `https` request: `cannotAuthenticate`.
    /// - Cancellation: `cancelled`. A response that is not valid HTTP, or a body that fails to decompress:
    ///   `invalidResponse`. A request AsyncHTTPClient refuses to send: `invalidRequest`.
    ///
    /// The message names the server (`host:port`) and the cause; it quotes none of the request's header values or
    /// query.
    ///
    /// - Parameters:
    ///   - request: The request that failed.
    ///   - error: What AsyncHTTPClient reported.
    init(request: HTTPRequest, asyncHTTPClientError error: any Error) {
        let target = Self.target(of: request)
        if let rejection = error as? ServerTrustRejection {
            self.init(
                .insecureConnection, request: request, message: "no secure connection to \(target): \(rejection)",
                underlyingError: rejection.underlyingError ?? rejection)
            return
        }
        if let bodyError = error as? BodyReadError {
            self.init(.invalidRequest, request: request, message: "\(bodyError)", underlyingError: bodyError)
            return
        }
        let (code, phrase) = Self.classify(error, target: target)
        var cause = "\(error)"
        if cause.count > 300 { cause = cause.prefix(299) + "…" }
        self.init(code, request: request, message: "\(phrase): \(cause)", underlyingError: error)
    }

    private static func classify(_ error: any Error, target: String) -> (Code, String) {
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled:
                return (.cancelled, "the request was cancelled")
            case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout, .socksHandshakeTimeout,
                .httpProxyHandshakeTimeout:
                return (.timedOut, "could not connect to \(target) in time")
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return (.timedOut, "\(target) did not answer in time")
            case .remoteConnectionClosed:
                return (.cannotConnect, "the connection to \(target) was lost before the response was complete")
            case .alreadyShutdown:
                return (.cannotConnect, "the HTTPClient was shut down")
            case .invalidURL, .emptyHost, .emptyScheme, .traceRequestWithBody, .bodyLengthMismatch,
                .identityCodingIncorrectlyPresent, .missingSocketPath, .invalidLocalAddress, .writeAfterRequestSent,
                .requestStreamCancelled:
                return (.invalidRequest, "AsyncHTTPClient refused to send the request")
            case .proxyAuthenticationRequired:
                return (
                    .cannotAuthenticate,
                    "the proxy refused to open a tunnel to \(target) (407 Proxy Authentication Required): the "
                        + "ProxyServer's credentials are missing or wrong"
                )
            case .invalidProxyResponse, .contentLengthMissing:
                return (.invalidResponse, "the response from \(target) could not be used")
            default:
                if "\(error)".contains("unsupportedScheme") || "\(error)".contains("invalidHeader") {
                    return (.invalidRequest, "AsyncHTTPClient refused to send the request")
                }
                return (.unknown, "AsyncHTTPClient failed")
            }
        }
        if error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError {
            return (.insecureConnection, "no secure connection to \(target)")
        }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return (.timedOut, "could not connect to \(target) in time")
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed:
                return (.cannotConnect, "the connection to \(target) was lost before the response was complete")
            default: return (.cannotConnect, "could not reach \(target)")
            }
        }
        if error is NIOConnectionError || error is IOError || error is SocketAddressError {
            return (.cannotConnect, "could not reach \(target)")
        }
        if error is HTTPParserError {
            return (.invalidResponse, "the response from \(target) is not valid HTTP")
        }
        if String(reflecting: type(of: error)).contains("Decompression") {
            return (.invalidResponse, "the response from \(target) could not be decoded")
        }
        return (.unknown, "the transport failed")
    }

    /// `host:port` of the request, for messages.
    static func target(of request: HTTPRequest) -> String {
        guard let host = request.host else { return "the server" }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return bracketed + (request.port.map { ":\($0)" } ?? "")
    }
}

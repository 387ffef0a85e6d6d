import AsyncHTTPClient
import Foundation
public import HTTP
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

/// A request ready for AsyncHTTPClient, and what its transfer needs to know about it.
struct PreparedRequest: Sendable {
    var request: HTTPClient.Request
    /// The body's length, when known.
    var bodyLength: Int64?
    /// The point by which the whole transfer must be done.
    var deadline: NIODeadline?
    /// Where the body's bytes come from, when it streams; read as AsyncHTTPClient asks for them.
    var streamedBody: HTTPBodySource?
}

extension TransportCapabilities {
    /// AsyncHTTPClient: presents client identities of the form `ClientIdentity.Form.certificateChainAndPrivateKey`
    /// through NIOSSL, and cannot call a `ServerTrustEvaluator` — AsyncHTTPClient 1.x takes no certificate
    /// verification callback — so a request with one is refused before it is sent, never unpinned.
    public static let asyncHTTPClient = TransportCapabilities(
        name: "AsyncHTTPClient", canEvaluateServerTrust: false, clientIdentityForms: [.certificateChainAndPrivateKey])
}

extension AsyncHTTPClientLoader {
    /// Validates `request` and builds what AsyncHTTPClient sends: the URL, the header fields (the request's
    /// own, then its body's), the body, the TLS configuration and the deadline.
    ///
    /// - Throws: `invalidRequest` for a malformed request or a body that cannot be read; `insecureConnection`
    ///   for TLS settings this transport cannot honour.
    func prepare(_ request: HTTPRequest) throws(HTTPError) -> PreparedRequest {
        let url = try request.validatedURLForSending()
        let settings = tls.resolved(for: request)
        if let refusal = TransportCapabilities.asyncHTTPClient.refusal(of: request, with: settings) { throw refusal }

        var headers = NIOHTTP1.HTTPHeaders()
        for field in request.headersIncludingBody { headers.add(name: field.name, value: field.value) }

        var source: HTTPBodySource?
        if !request.body.isEmpty {
            do {
                source = try request.body.makeSource()
            } catch {
                throw HTTPError(
                    .invalidRequest, request: request,
                    message: "the body (\(type(of: request.body))) could not be encoded", underlyingError: error)
            }
        }
        let length = source?.length
        var body: HTTPClient.Body?
        var streamedBody: HTTPBodySource?
        if let source {
            if let data = source.inMemory, request.progressHandler == nil {
                body = .byteBuffer(ByteBuffer(data: data))
            } else {
                streamedBody = source  // the transfer writes it as AsyncHTTPClient asks for more
            }
        }

        var tlsConfiguration: TLSConfiguration?
        if let identity = settings.clientIdentity, url.scheme?.lowercased() == "https" {
            do {
                tlsConfiguration = try Self.tlsConfiguration(presenting: identity, over: baseTLSConfiguration)
            } catch {
                throw HTTPError(
                    .insecureConnection, request: request,
                    message: "the client identity cannot be used with NIOSSL: \(error)", underlyingError: error)
            }
        }

        let ahcRequest: HTTPClient.Request
        do {
            ahcRequest = try HTTPClient.Request(
                url: url, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue), headers: headers, body: body,
                tlsConfiguration: tlsConfiguration)
        } catch {
            throw HTTPError(
                .invalidRequest, request: request, message: "AsyncHTTPClient rejected the request: \(error)",
                underlyingError: error)
        }
        return PreparedRequest(
            request: ahcRequest, bodyLength: length, deadline: request.timeout.map(Self.deadline(after:)),
            streamedBody: streamedBody)
    }

    /// The deadline `timeout` from now; a week at most, which is forever to HTTP, and never in the past.
    static func deadline(after timeout: Duration) -> NIODeadline {
        let (seconds, attoseconds) = timeout.components
        let week: Int64 = 7 * 24 * 3_600
        let nanoseconds: Int64 =
            seconds >= week ? week * 1_000_000_000 : max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
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

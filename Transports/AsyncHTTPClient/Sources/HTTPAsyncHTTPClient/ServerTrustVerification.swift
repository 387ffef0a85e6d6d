import Foundation
import HTTP
import NIOSSL
import SwiftASN1
import X509

/// Why a server was refused during the handshake: the platform's evaluation failed, or the evaluator threw. The
/// load fails with ``HTTP/HTTPError/Code/insecureConnection`` and this as the cause.
struct ServerTrustRejection: Error, CustomStringConvertible {
    /// What happened, naming the evaluator: "server trust refused by PublicKeyPinning: …".
    var description: String
    /// The evaluator's error, or the platform evaluation's failure.
    var underlyingError: (any Error & Sendable)?
}

/// The server-trust evaluation of a request's connection, as the TLS handshake runs it: the platform's evaluation
/// first (unless the evaluator replaces it), then the evaluator with the validated chain.
///
/// The platform's evaluation is RFC 5280 path validation (swift-certificates' `Verifier`): a chain from the leaf
/// to one of the trust roots of the loader's `TLSConfiguration` (the system's by default), every certificate
/// within its dates, and the leaf for the host (its DNS name or IP address). The evaluator then sees that chain,
/// leaf to anchor, as ``HTTP/ServerTrust/certificateChain`` — so pinning an intermediate's or the root's key pins
/// what the chain depends on, not whatever the server appends.
struct ServerTrustVerification: Sendable {
    let evaluator: any ServerTrustEvaluator
    let host: String
    let port: Int
    let roots: CertificateStore

    /// The verdict on the chain a server presented, leaf first: the validated chain (DER), or why it is refused.
    func verify(presented: [NIOSSLCertificate]) async -> Result<[Data], ServerTrustRejection> {
        let chain: [Data]
        do {
            chain = try presented.map { Data(try $0.toDERBytes()) }
        } catch {
            return .failure(
                ServerTrustRejection(
                    description: "the server's certificates could not be read: \(error)", underlyingError: error))
        }
        guard !chain.isEmpty else {
            return .failure(ServerTrustRejection(description: "the server presented no certificate"))
        }
        var trusted = chain
        if evaluator.defaultEvaluation == .required {
            switch await platformEvaluation(of: chain) {
            case .success(let validated): trusted = validated
            case .failure(let rejection): return .failure(rejection)
            }
        }
        do {
            try evaluator.evaluate(ServerTrust(host: host, port: port, certificateChain: trusted))
        } catch {
            return .failure(
                ServerTrustRejection(
                    description: "server trust refused by \(type(of: evaluator)): \(error)",
                    underlyingError: (error as? PublicKeyPinning.Failure) ?? SendableError(error)))
        }
        return .success(trusted)
    }

    /// RFC 5280 validation of `chain` (leaf first) to the roots, for the host: the validated chain, leaf to anchor.
    private func platformEvaluation(of chain: [Data]) async -> Result<[Data], ServerTrustRejection> {
        let certificates: [Certificate]
        do {
            certificates = try chain.map { try Certificate(derEncoded: [UInt8]($0)) }
        } catch {
            return .failure(
                ServerTrustRejection(
                    description: "the platform's trust evaluation failed: a certificate could not be read: \(error)",
                    underlyingError: SendableError(error)))
        }
        let isAddress = IPv4Address(host) != nil || host.contains(":")
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isAddress ? nil : name, serverIP: isAddress ? name : nil)
        }
        let result = await verifier.validate(
            leaf: certificates[0], intermediates: CertificateStore(certificates.dropFirst()))
        switch result {
        case .validCertificate(let validated):
            do {
                return .success(
                    try validated.map { certificate in
                        var serializer = DER.Serializer()
                        try serializer.serialize(certificate)
                        return Data(serializer.serializedBytes)
                    })
            } catch {
                return .failure(
                    ServerTrustRejection(
                        description: "the platform's trust evaluation failed: \(error)",
                        underlyingError: SendableError(error)))
            }
        case .couldNotValidate(let failures):
            let reasons = Set(failures.map { "\($0.policyFailureReason)" }).sorted()
            let text = reasons.isEmpty ? "no chain to a trusted root" : reasons.joined(separator: "; ")
            return .failure(
                ServerTrustRejection(
                    description: "the platform's trust evaluation failed: \(text.prefix(400))", underlyingError: nil))
        }
    }

    /// No roots: for an evaluator that replaces the platform's evaluation.
    static let noRoots = CertificateStore()

    /// The trust roots of `configuration`: its `trustRoots` (the system's by default) and `additionalTrustRoots`.
    static func roots(of configuration: TLSConfiguration) throws -> CertificateStore {
        var store: CertificateStore
        switch configuration.trustRoots {
        case nil, .default?:
            store = CertificateStore.systemTrustRoots
        case .file(let path)?:
            store = CertificateStore(try certificates(NIOSSLCertificate.fromPEMFile(path)))
        case .certificates(let certificates)?:
            store = CertificateStore(try self.certificates(certificates))
        }
        for additional in configuration.additionalTrustRoots {
            switch additional {
            case .file(let path): store.append(contentsOf: try certificates(NIOSSLCertificate.fromPEMFile(path)))
            case .certificates(let certificates): store.append(contentsOf: try self.certificates(certificates))
            }
        }
        return store
    }

    private static func certificates(_ certificates: [NIOSSLCertificate]) throws -> [Certificate] {
        try certificates.map { try Certificate(derEncoded: try $0.toDERBytes()) }
    }
}

/// An error of any type, made `Sendable` by keeping its description: for an evaluator's error, which the protocol
/// does not require to be `Sendable` (``HTTP/PublicKeyPinning/Failure`` is kept as it is).
struct SendableError: Error, CustomStringConvertible {
    let description: String
    let typeName: String

    init(_ error: any Error) {
        description = "\(error)"
        typeName = String(reflecting: type(of: error))
    }
}

/// An IPv4 address literal, only to tell one from a host name.
private struct IPv4Address {
    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return nil }
    }
}

// What Apple's Foundation declares in terms of Security types (NSURLProtectionSpace.h, NSURLCredential.h,
// NSURLAuthenticationChallenge's method constants). swift-corelibs-foundation marks these unavailable ("does not
// support methods of authentication that rely on the Darwin Security framework"), so they are declared here, beside
// the types they use, as Apple's SDK documents them. The product's files that use them import Security; a
// declaration here is preferred to the unavailable one of the same name.

import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension URLProtectionSpace {
    /// A representation of the server's SSL transaction state.
    public var serverTrust: SecTrust? { fatalError("declaration only") }
}

extension URLCredential {
    /// Creates a URL credential instance for server trust authentication, initialized with an accepted trust.
    public convenience init(trust: SecTrust) { fatalError("declaration only") }

    /// Creates a URL credential instance for resolving a client certificate authentication challenge.
    public convenience init(
        identity: SecIdentity, certificates certArray: [Any]?, persistence: URLCredential.Persistence
    ) {
        fatalError("declaration only")
    }
}

/// The authentication method for server trust authentication.
public let NSURLAuthenticationMethodServerTrust: String = "NSURLAuthenticationMethodServerTrust"
/// The authentication method for client certificate authentication.
public let NSURLAuthenticationMethodClientCertificate: String = "NSURLAuthenticationMethodClientCertificate"

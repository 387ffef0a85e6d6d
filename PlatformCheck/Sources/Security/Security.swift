// The part of Apple's Security framework that the product uses, declared as the SDK documents it. Declarations
// only: every function traps, because nothing here runs; the package type-checks the product's calls against
// these signatures. Constants carry the values Apple's headers give them.

public import Foundation

// MARK: - Core Foundation

// Security re-exports Core Foundation, whose types swift-corelibs-foundation does not offer. Each is declared here
// as the Foundation class it is toll-free bridged to, so that the product's bridging casts (`query as
// CFDictionary`, `kSecClass as String`, `data as Data`) type-check as they do on Apple platforms.

/// An untyped reference to any Core Foundation object.
public typealias CFTypeRef = AnyObject
/// A Core Foundation string (toll-free bridged to `NSString`).
public typealias CFString = NSString
/// A Core Foundation dictionary (toll-free bridged to `NSDictionary`).
public typealias CFDictionary = NSDictionary
/// A Core Foundation array (toll-free bridged to `NSArray`).
public typealias CFArray = NSArray
/// A Core Foundation data object (toll-free bridged to `NSData`).
public typealias CFData = NSData
/// A Core Foundation error (toll-free bridged to `NSError`).
public typealias CFError = NSError

// MARK: - Result codes (SecBase.h)

/// The result code of a Security function.
public typealias OSStatus = Int32

/// No error.
public var errSecSuccess: OSStatus { 0 }
/// The specified item already exists in the keychain.
public var errSecDuplicateItem: OSStatus { -25299 }
/// The specified item could not be found in the keychain.
public var errSecItemNotFound: OSStatus { -25300 }

/// Returns a string explaining the meaning of a security result code.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    fatalError("declaration only")
}

// MARK: - Keychain items (SecItem.h)

/// Adds one or more items to a keychain.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("declaration only")
}

/// Returns one or more keychain items that match a search query, or copies attributes of specific keychain items.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("declaration only")
}

/// Modifies items that match a search query.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    fatalError("declaration only")
}

/// Deletes items that match a search query.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    fatalError("declaration only")
}

// Item attribute keys and values. Apple's SDK imports them as `let` constants of type `CFString`.
nonisolated(unsafe) public let kSecClass: CFString = "class"
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"

// MARK: - Certificates, identities and trust (SecBase.h, SecCertificate.h, SecTrust.h)

/// An abstract Core Foundation-type object representing an X.509 certificate.
public final class SecCertificate {
    private init() {}
}

/// An abstract Core Foundation-type object representing an identity: a certificate and its private key.
public final class SecIdentity {
    private init() {}
}

/// An object used to evaluate trust.
public final class SecTrust {
    private init() {}
}

/// Returns a DER representation of a certificate given a certificate object.
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    fatalError("declaration only")
}

/// Evaluates trust for the specified certificate and policies.
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    fatalError("declaration only")
}

/// Returns the certificate trust chain.
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    fatalError("declaration only")
}

// The part of Apple's CryptoKit that the product uses (Sources/HTTP/Crypto/SHA256.swift), declared as the SDK
// documents it. Declarations only: every body traps, because nothing here runs; the package type-checks the
// product's calls against these signatures.

public import Foundation

/// A type that performs cryptographically secure hashing.
public protocol HashFunction {
    associatedtype Digest: CryptoKit.Digest
    static var blockByteCount: Int { get }
    init()
    mutating func update(bufferPointer: UnsafeRawBufferPointer)
    func finalize() -> Self.Digest
}

extension HashFunction {
    /// Incrementally updates the hash function with the given data.
    public mutating func update<D: DataProtocol>(data: D) { fatalError("declaration only") }

    /// Computes a digest of the data.
    public static func hash<D: DataProtocol>(data: D) -> Self.Digest { fatalError("declaration only") }
}

/// A type that represents the output of a hash.
public protocol Digest: ContiguousBytes, CustomStringConvertible, Hashable, Sequence where Element == UInt8 {
    static var byteCount: Int { get }
}

/// An implementation of Secure Hashing Algorithm 2 (SHA-2) hashing with a 256-bit digest.
public struct SHA256: HashFunction {
    public typealias Digest = SHA256Digest
    public static var byteCount: Int { fatalError("declaration only") }
    public static var blockByteCount: Int { fatalError("declaration only") }
    public init() { fatalError("declaration only") }
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { fatalError("declaration only") }
    public func finalize() -> SHA256.Digest { fatalError("declaration only") }
}

/// The output of a SHA256 hash.
public struct SHA256Digest: Digest {
    public static var byteCount: Int { fatalError("declaration only") }
    public var description: String { fatalError("declaration only") }
    public func makeIterator() -> Array<UInt8>.Iterator { fatalError("declaration only") }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        fatalError("declaration only")
    }
}

import Foundation
import HTTP

/// A ``CredentialStore`` that keeps values in memory, for tests and for sessions that must end with the
/// process.
///
/// Values are stored encoded, as the persistent stores keep them, so a value that would not survive a
/// ``FileCredentialStore`` or `KeychainCredentialStore` round trip fails here too.
///
/// ```swift
/// let store = InMemoryCredentialStore()
/// try await store.save(tokens, for: "tokens")
/// #expect(try await store.load(TokenBundle.self, for: "tokens") == tokens)
/// ```
public final class InMemoryCredentialStore: CredentialStore {
    private let values = Locked<[String: Data]>([:])

    /// Creates an empty store.
    public init() {}

    public func load<Value: Decodable>(_ type: Value.Type, for key: String) async throws -> Value? {
        guard let data = values.withLock({ $0[key] }) else { return nil }
        return try CredentialCoding.decode(type, from: data, for: key)
    }

    public func save<Value: Encodable & Sendable>(_ value: Value, for key: String) async throws {
        let data = try CredentialCoding.encode(value, for: key)
        values.withLock { $0[key] = data }
    }

    public func delete(for key: String) async throws {
        values.withLock { _ = $0.removeValue(forKey: key) }
    }
}

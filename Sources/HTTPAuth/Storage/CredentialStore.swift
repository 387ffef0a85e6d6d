/// Somewhere to keep credentials between launches: one `Codable` value under each key.
///
/// Tokens, passwords and other secrets are persisted only through a credential store, never in
/// `UserDefaults`, a plain file or a log. The package comes with three:
///
/// - `KeychainCredentialStore`: generic-password items in the Keychain, on Apple platforms.
/// - ``FileCredentialStore``: one owner-only (`0600`) JSON file per key in an owner-only directory, for
///   Linux and anywhere else without a Keychain.
/// - ``InMemoryCredentialStore``: a dictionary, for tests and sessions that must not outlive the process.
///
/// ## Keeping a token bundle
///
/// ```swift
/// struct TokenBundle: Codable, Sendable {
///     var accessToken: String
///     var refreshToken: String
///     var expiresAt: Date
/// }
///
/// #if canImport(Security)
/// let store: any CredentialStore = KeychainCredentialStore(service: "com.example.app")
/// #else
/// let store: any CredentialStore = FileCredentialStore(directory: credentialsDirectory)
/// #endif
///
/// try await store.save(TokenBundle(accessToken: "a", refreshToken: "r", expiresAt: expiry), for: "tokens")
/// if let tokens = try await store.load(TokenBundle.self, for: "tokens") {
///     print(tokens.expiresAt)  // never the tokens themselves
/// }
/// try await store.delete(for: "tokens")  // on logout
/// ```
///
/// ## Writing a store
///
/// A store keeps these promises, which callers rely on:
///
/// - ``load(_:for:)`` returns `nil` when nothing is stored under the key, and throws when something is
///   stored but cannot be read or decoded — a damaged credential is an error, not a logout.
/// - ``save(_:for:)`` replaces the value as a whole: a concurrent or later ``load(_:for:)`` sees the old
///   value or the new one, never a mixture or a partial write, also when the save fails.
/// - ``delete(for:)`` succeeds when nothing is stored under the key.
/// - Any number of tasks may call a store at once.
///
/// Errors are ``CredentialStoreError``s that name the key and say what went wrong, and never contain the
/// secret.
public protocol CredentialStore: Sendable {
    /// Reads the value stored under a key.
    ///
    /// - Parameters:
    ///   - type: The type the value was saved as.
    ///   - key: The key it was saved under.
    /// - Returns: The value, or `nil` when nothing is stored under `key`.
    /// - Throws: A ``CredentialStoreError``, for instance ``CredentialStoreError/corrupted(key:path:underlying:)``
    ///   when the stored data is not a `type`.
    func load<Value: Decodable>(_ type: Value.Type, for key: String) async throws -> Value?

    /// Stores a value under a key, replacing whatever was stored there.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    /// - Throws: A ``CredentialStoreError``; the previous value is then left as it was.
    func save<Value: Encodable & Sendable>(_ value: Value, for key: String) async throws

    /// Removes the value stored under a key; does nothing when there is none.
    ///
    /// - Parameter key: The key to clear.
    /// - Throws: A ``CredentialStoreError`` when the value exists and could not be removed.
    func delete(for key: String) async throws
}

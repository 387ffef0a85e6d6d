#if canImport(Security)
import Foundation
import Security

/// A ``CredentialStore`` that keeps each value as a generic-password item in the Keychain, on Apple
/// platforms.
///
/// Each key is one `kSecClassGenericPassword` item: its service is the store's ``service``, its account
/// the key, and its data the value encoded as JSON.
///
/// ```swift
/// let store = KeychainCredentialStore(service: "com.example.app.credentials")
/// try await store.save(tokens, for: "tokens")
/// let restored = try await store.load(TokenBundle.self, for: "tokens")
/// ```
///
/// A save updates the item when it exists and adds it otherwise, so the old value stays until the new one
/// replaces it. ``accessibility`` applies when an item is added; an item keeps it across later saves. On
/// macOS, items go to the default (login) keychain. Keychain calls block the calling task's thread until
/// they return. Failures throw ``CredentialStoreError/keychain(key:operation:status:)`` with the `OSStatus`.
public final class KeychainCredentialStore: CredentialStore {
    /// When the system lets an item be read: its `kSecAttrAccessible` value.
    public struct Accessibility: Sendable, Hashable {
        let rawValue: String

        /// While the device is unlocked (`kSecAttrAccessibleWhenUnlocked`).
        public static var whenUnlocked: Self { Self(rawValue: kSecAttrAccessibleWhenUnlocked as String) }
        /// While the device is unlocked, and never restored to another device
        /// (`kSecAttrAccessibleWhenUnlockedThisDeviceOnly`).
        public static var whenUnlockedThisDeviceOnly: Self {
            Self(rawValue: kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String)
        }
        /// Once the device has been unlocked after a restart, so background refreshes can read it
        /// (`kSecAttrAccessibleAfterFirstUnlock`); the default.
        public static var afterFirstUnlock: Self { Self(rawValue: kSecAttrAccessibleAfterFirstUnlock as String) }
        /// As ``afterFirstUnlock``, and never restored to another device
        /// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
        public static var afterFirstUnlockThisDeviceOnly: Self {
            Self(rawValue: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String)
        }
        /// While the device is unlocked and has a passcode; removed when the passcode is
        /// (`kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`).
        public static var whenPasscodeSetThisDeviceOnly: Self {
            Self(rawValue: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as String)
        }
    }

    /// The service of every item this store reads and writes (`kSecAttrService`).
    public let service: String
    /// When the items this store adds can be read.
    public let accessibility: Accessibility
    /// The keychain access group shared with other apps (`kSecAttrAccessGroup`), or `nil` for the app's
    /// default group.
    public let accessGroup: String?

    /// Creates a store for the items of one service.
    ///
    /// - Parameters:
    ///   - service: A name for this app's credentials, such as `"com.example.app.credentials"`.
    ///   - accessibility: When the items it adds can be read; ``Accessibility/afterFirstUnlock`` by default.
    ///   - accessGroup: A keychain access group to share the items in, or `nil`.
    public init(service: String, accessibility: Accessibility = .afterFirstUnlock, accessGroup: String? = nil) {
        self.service = service
        self.accessibility = accessibility
        self.accessGroup = accessGroup
    }

    public func load<Value: Decodable>(_ type: Value.Type, for key: String) async throws -> Value? {
        var query = itemQuery(for: key)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else {
            throw CredentialStoreError.keychain(key: key, operation: "SecItemCopyMatching", status: status)
        }
        guard let data = result as? Data else {
            throw CredentialStoreError.corrupted(key: key, path: nil, underlying: MissingItemData())
        }
        return try CredentialCoding.decode(type, from: data, for: key)
    }

    public func save<Value: Encodable & Sendable>(_ value: Value, for key: String) async throws {
        let data = try CredentialCoding.encode(value, for: key)
        let query = itemQuery(for: key)
        let changes = [kSecValueData as String: data] as CFDictionary
        var status = SecItemUpdate(query as CFDictionary, changes)
        var operation = "SecItemUpdate"
        if status == errSecItemNotFound {
            var item = query
            item[kSecValueData as String] = data
            item[kSecAttrAccessible as String] = accessibility.rawValue
            status = SecItemAdd(item as CFDictionary, nil)
            operation = "SecItemAdd"
            if status == errSecDuplicateItem {  // another save added it first
                status = SecItemUpdate(query as CFDictionary, changes)
                operation = "SecItemUpdate"
            }
        }
        guard status == errSecSuccess else {
            throw CredentialStoreError.keychain(key: key, operation: operation, status: status)
        }
    }

    public func delete(for key: String) async throws {
        let status = SecItemDelete(itemQuery(for: key) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw CredentialStoreError.keychain(key: key, operation: "SecItemDelete", status: status)
        }
    }

    /// The attributes that identify the item for `key`.
    private func itemQuery(for key: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }
}

/// `SecItemCopyMatching` succeeded but returned no data.
private struct MissingItemData: Error, CustomStringConvertible {
    var description: String { "the keychain item has no data" }
}
#endif

public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

#if canImport(Security)
import Security
#endif

/// Why a ``CredentialStore`` could not load, save or delete a value.
///
/// Every case names the key it concerns (where there is one) and, for files, the path, so the
/// ``description`` says which credential failed and why. No case carries the stored value.
///
/// ```swift
/// do {
///     tokens = try await store.load(TokenBundle.self, for: "tokens")
/// } catch CredentialStoreError.corrupted(let key, _, _) {
///     try await store.delete(for: key)  // unreadable: sign in again
/// }
/// ```
public enum CredentialStoreError: Error, Sendable {
    /// The key cannot be used with this store, for instance because it is empty or too long.
    case invalidKey(String, reason: String)
    /// The value could not be encoded; nothing was stored.
    case encodingFailed(key: String, underlying: any Error)
    /// Something is stored under the key but it could not be decoded as the requested type.
    ///
    /// `path` is the file it was read from, or `nil` for stores without files.
    case corrupted(key: String, path: String?, underlying: any Error)
    /// A file or directory is open to other users — readable or writable by group or others, owned by
    /// another user, or not a plain file — so the store refuses to trust it.
    ///
    /// `key` is `nil` when the problem is the store's directory.
    case insecurePermissions(key: String?, path: String, reason: String)
    /// A file system call failed.
    ///
    /// - `operation`: the call, such as `"open"`, `"write"` or `"rename"`.
    /// - `errno`: the POSIX error number it set.
    case io(key: String, path: String, operation: String, errno: Int32)
    /// A Keychain call (`SecItemCopyMatching`, `SecItemAdd`, `SecItemUpdate`, `SecItemDelete`) failed with
    /// the `OSStatus` `status`.
    case keychain(key: String, operation: String, status: Int32)
}

extension CredentialStoreError: CustomStringConvertible, LocalizedError {
    /// What failed, for which key and file, and why, in one line.
    public var description: String {
        switch self {
        case .invalidKey(let key, let reason):
            return "credential key \(quoted(key)) cannot be used: \(reason)"
        case .encodingFailed(let key, let underlying):
            return "could not encode the credential for key \(quoted(key)): \(underlying)"
        case .corrupted(let key, let path, let underlying):
            let location = path.map { " in \($0)" } ?? ""
            return "the credential stored for key \(quoted(key))\(location) is corrupted and could not be decoded: "
                + "\(underlying)"
        case .insecurePermissions(let key, let path, let reason):
            let subject = key.map { "the credential file for key \(quoted($0))" } ?? "the credential directory"
            return "refusing to use \(subject), \(path): \(reason)"
        case .io(let key, let path, let operation, let code):
            return "\(operation) failed for key \(quoted(key)) at \(path): \(Self.describe(errno: code))"
        case .keychain(let key, let operation, let status):
            return "\(operation) failed for key \(quoted(key)): \(Self.describe(status: status))"
        }
    }

    public var errorDescription: String? { description }

    private func quoted(_ key: String) -> String {
        "\"\(key)\""
    }

    private static func describe(errno code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    private static func describe(status: Int32) -> String {
        #if canImport(Security)
        if let message = SecCopyErrorMessageString(status, nil) as String? {
            return "\(message) (OSStatus \(status))"
        }
        #endif
        return "OSStatus \(status)"
    }
}

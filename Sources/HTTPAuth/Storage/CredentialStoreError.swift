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
/// Every error names the key it concerns (where there is one) and, for files, the path, so the
/// ``description`` says which credential failed and why. No error carries the stored value. Branch on its
/// ``code``:
///
/// ```swift
/// do {
///     tokens = try await store.load(TokenBundle.self, for: "tokens")
/// } catch let error as CredentialStoreError where error.code == .corrupted {
///     try await store.delete(for: "tokens")  // unreadable: sign in again
/// }
/// ```
///
/// Codes are open-ended, as `HTTPError.Code` is: a later version may add one, so a `switch` over them has a
/// `default`.
public struct CredentialStoreError: Error, Sendable {
    /// A category of credential-store failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The key cannot be used with this store, for instance because it is empty or too long.
        public static let invalidKey = Code(rawValue: "invalidKey")
        /// The value could not be encoded; nothing was stored. ``CredentialStoreError/underlyingError`` says why.
        public static let encodingFailed = Code(rawValue: "encodingFailed")
        /// Something is stored under the key but it could not be decoded as the requested type.
        /// ``CredentialStoreError/path`` is the file it was read from, or `nil` for stores without files.
        public static let corrupted = Code(rawValue: "corrupted")
        /// A file or directory is open to other users — readable or writable by group or others, owned by
        /// another user, or not a plain file — so the store refuses to trust it. ``CredentialStoreError/key`` is
        /// `nil` when the problem is the store's directory.
        public static let insecurePermissions = Code(rawValue: "insecurePermissions")
        /// A file system call (``CredentialStoreError/operation``, such as `"open"`, `"write"` or `"rename"`)
        /// failed with the POSIX error number ``CredentialStoreError/errno``.
        public static let io = Code(rawValue: "io")
        /// A Keychain call (``CredentialStoreError/operation``: `SecItemCopyMatching`, `SecItemAdd`,
        /// `SecItemUpdate`, `SecItemDelete`) failed with the `OSStatus` ``CredentialStoreError/status``.
        public static let keychain = Code(rawValue: "keychain")
    }

    /// The category of failure.
    public var code: Code
    /// The key the failure concerns; `nil` when it concerns the store itself (its directory).
    public var key: String?
    /// The file or directory the failure concerns, for stores that keep files.
    public var path: String?
    /// Why the store refused, in words: for ``Code/invalidKey`` and ``Code/insecurePermissions``.
    public var reason: String?
    /// The system call that failed: for ``Code/io`` and ``Code/keychain``.
    public var operation: String?
    /// The POSIX error number the call set, for ``Code/io``.
    public var errno: Int32?
    /// The `OSStatus` the Keychain returned, for ``Code/keychain``.
    public var status: Int32?
    /// The error that caused this one: the encoder's or the decoder's.
    public var underlyingError: (any Error)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The category.
    ///   - key: The key concerned.
    ///   - path: The file or directory concerned.
    ///   - reason: Why, in words.
    ///   - operation: The system call that failed.
    ///   - errno: The POSIX error number.
    ///   - status: The Keychain's `OSStatus`.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code,
        key: String?,
        path: String? = nil,
        reason: String? = nil,
        operation: String? = nil,
        errno: Int32? = nil,
        status: Int32? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.key = key
        self.path = path
        self.reason = reason
        self.operation = operation
        self.errno = errno
        self.status = status
        self.underlyingError = underlyingError
    }
}

extension CredentialStoreError {
    /// The key cannot be used with this store.
    public static func invalidKey(_ key: String, reason: String) -> CredentialStoreError {
        CredentialStoreError(.invalidKey, key: key, reason: reason)
    }

    /// The value for `key` could not be encoded.
    public static func encodingFailed(key: String, underlying: any Error) -> CredentialStoreError {
        CredentialStoreError(.encodingFailed, key: key, underlyingError: underlying)
    }

    /// The value stored for `key` (in the file at `path`, if any) could not be decoded.
    public static func corrupted(key: String, path: String?, underlying: any Error) -> CredentialStoreError {
        CredentialStoreError(.corrupted, key: key, path: path, underlyingError: underlying)
    }

    /// The file at `path` (or the store's directory, when `key` is `nil`) is open to other users.
    public static func insecurePermissions(key: String?, path: String, reason: String) -> CredentialStoreError {
        CredentialStoreError(.insecurePermissions, key: key, path: path, reason: reason)
    }

    /// The file system call `operation` failed with `errno` for `key` at `path`.
    public static func io(key: String, path: String, operation: String, errno: Int32) -> CredentialStoreError {
        CredentialStoreError(.io, key: key, path: path, operation: operation, errno: errno)
    }

    /// The Keychain call `operation` failed with the `OSStatus` `status` for `key`.
    public static func keychain(key: String, operation: String, status: Int32) -> CredentialStoreError {
        CredentialStoreError(.keychain, key: key, operation: operation, status: status)
    }
}

extension CredentialStoreError: CustomStringConvertible, LocalizedError {
    /// What failed, for which key and file, and why, in one line.
    public var description: String {
        let key = key.map(quoted) ?? "(none)"
        let location = path.map { " in \($0)" } ?? ""
        let cause = underlyingError.map { "\($0)" } ?? "unknown"
        switch code {
        case .invalidKey:
            return "credential key \(key) cannot be used: \(reason ?? "unknown reason")"
        case .encodingFailed:
            return "could not encode the credential for key \(key): \(cause)"
        case .corrupted:
            return "the credential stored for key \(key)\(location) is corrupted and could not be decoded: \(cause)"
        case .insecurePermissions:
            let subject = self.key.map { "the credential file for key \(quoted($0))" } ?? "the credential directory"
            return "refusing to use \(subject), \(path ?? "?"): \(reason ?? "unknown reason")"
        case .io:
            return "\(operation ?? "a file operation") failed for key \(key) at \(path ?? "?"): "
                + (errno.map(Self.describe(errno:)) ?? "unknown error")
        case .keychain:
            return "\(operation ?? "a Keychain call") failed for key \(key): "
                + (status.map(Self.describe(status:)) ?? "unknown status")
        default:
            var text = "\(code) for key \(key)\(location)"
            if let reason { text += ": \(reason)" }
            if let underlyingError { text += " (underlying: \(underlyingError))" }
            return text
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

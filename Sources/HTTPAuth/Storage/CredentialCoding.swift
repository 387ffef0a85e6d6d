import Foundation

/// The one encoding every credential store uses: JSON, with `Date`s in their exact default form, so a
/// value loads back equal to what was saved.
enum CredentialCoding {
    /// Encodes `value`, or throws ``CredentialStoreError/encodingFailed(key:underlying:)``.
    static func encode<Value: Encodable>(_ value: Value, for key: String) throws -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw CredentialStoreError.encodingFailed(key: key, underlying: error)
        }
    }

    /// Decodes `data` as a `type`, or throws ``CredentialStoreError/corrupted(key:path:underlying:)``.
    static func decode<Value: Decodable>(
        _ type: Value.Type,
        from data: Data,
        for key: String,
        path: String? = nil
    ) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw CredentialStoreError.corrupted(key: key, path: path, underlying: error)
        }
    }
}

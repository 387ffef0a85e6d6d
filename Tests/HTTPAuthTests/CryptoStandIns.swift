import Foundation
import HTTP

// Stand-ins for the CryptoKit (swift-crypto on Linux) names CustomCredentialSchemes.md's signer uses — `HMAC<SHA256>`,
// `SymmetricKey`, `SHA256.hash(data:)` — so that the sample compiles and runs here as it is written; the product has
// no dependency to take them from. `SHA256` is the package's own; HMAC is RFC 2104's construction over it.

struct SymmetricKey {
    let data: Data

    init(data: Data) { self.data = data }
}

enum HMAC<Hash> {
    /// HMAC-SHA256 (RFC 2104) of `message` under `key`.
    static func authenticationCode(for message: Data, using key: SymmetricKey) -> [UInt8] {
        let blockSize = 64
        var block = key.data.count > blockSize ? SHA256.hash(key.data) : Array(key.data)
        block += Array(repeating: 0, count: blockSize - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + Array(message))
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner)
    }
}

extension SHA256 {
    static func hash(data: Data) -> [UInt8] { hash(Array(data)) }
}

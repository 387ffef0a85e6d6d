package import Foundation

#if canImport(CryptoKit)
import CryptoKit
#endif

/// The SHA-256 hash function (FIPS 180-4), for public-key pins, PKCE challenges and token checks.
///
/// Where CryptoKit exists, `hash(_:)` uses it; elsewhere (Linux) it uses `PortableHasher`, a pure-Swift
/// implementation that is compiled and tested on every platform.
///
/// ```swift
/// let digest = SHA256.hash(Array("abc".utf8))  // 32 bytes: ba 78 16 bf …
/// ```
package enum SHA256 {
    /// The length of a SHA-256 digest in bytes.
    package static let digestByteCount = 32

    /// Hashes a sequence of bytes.
    ///
    /// Contiguous collections (`[UInt8]`, `Data`, a native `String.UTF8View`) are hashed in place; other
    /// sequences are read in a single pass, so a large input is never copied whole.
    ///
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 32-byte digest.
    package static func hash(_ data: some Sequence<UInt8>) -> [UInt8] {
        #if canImport(CryptoKit)
        var hasher = CryptoKit.SHA256()
        let hashedInPlace: Void? = data.withContiguousStorageIfAvailable { buffer in
            hasher.update(bufferPointer: UnsafeRawBufferPointer(buffer))
        }
        if hashedInPlace == nil {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(4096)
            for byte in data {
                chunk.append(byte)
                if chunk.count == 4096 {
                    hasher.update(data: chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            hasher.update(data: chunk)
        }
        return Array(hasher.finalize())
        #else
        var hasher = PortableHasher()
        hasher.update(data)
        return hasher.finalize()
        #endif
    }

    /// Hashes `Data`.
    ///
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 32-byte digest.
    package static func hash(_ data: Data) -> Data {
        let digest: [UInt8] = hash(data)
        return Data(digest)
    }
}

// MARK: - Portable implementation

extension SHA256 {
    /// A streaming pure-Swift SHA-256 (FIPS 180-4), used where CryptoKit is not available.
    ///
    /// Feed it bytes in as many pieces as convenient, then take the digest:
    ///
    /// ```swift
    /// var hasher = SHA256.PortableHasher()
    /// hasher.update(Array("ab".utf8))
    /// hasher.update(Array("c".utf8))
    /// let digest = hasher.finalize()
    /// ```
    ///
    /// It holds one 64-byte block and the eight-word state; whole blocks of contiguous input are compressed
    /// where they lie, without copying.
    package struct PortableHasher {
        /// The intermediate hash value H(i), FIPS 180-4 §6.2.2.
        private var state: [UInt32] = SHA256.initialHashValue
        /// Input not yet compressed: the first `bufferedCount` bytes of a 64-byte block.
        private var block = [UInt8](repeating: 0, count: SHA256.blockByteCount)
        private var bufferedCount = 0
        /// The total message length in bytes; the padding records it in bits, modulo 2^64.
        private var messageByteCount: UInt64 = 0

        /// Creates a hasher for an empty message.
        package init() {}

        /// Appends bytes to the message.
        ///
        /// - Parameter bytes: The next bytes of the message.
        package mutating func update(_ bytes: some Sequence<UInt8>) {
            let updatedInPlace: Void? = bytes.withContiguousStorageIfAvailable { buffer in
                update(bufferPointer: UnsafeRawBufferPointer(buffer))
            }
            guard updatedInPlace == nil else { return }
            for byte in bytes {
                block[bufferedCount] = byte
                bufferedCount += 1
                messageByteCount &+= 1
                if bufferedCount == SHA256.blockByteCount {
                    compressBufferedBlock()
                }
            }
        }

        /// Appends the bytes of a buffer to the message.
        ///
        /// - Parameter bytes: The next bytes of the message.
        package mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
            messageByteCount &+= UInt64(bytes.count)
            var remaining = bytes[...]

            // Top up a partly filled block first.
            if bufferedCount > 0 {
                let count = min(SHA256.blockByteCount - bufferedCount, remaining.count)
                for (offset, byte) in remaining.prefix(count).enumerated() {
                    block[bufferedCount + offset] = byte
                }
                bufferedCount += count
                remaining = remaining.dropFirst(count)
                guard bufferedCount == SHA256.blockByteCount else { return }
                compressBufferedBlock()
            }

            // Compress whole blocks where they lie.
            while remaining.count >= SHA256.blockByteCount {
                SHA256.compress(UnsafeRawBufferPointer(rebasing: remaining.prefix(SHA256.blockByteCount)), into: &state)
                remaining = remaining.dropFirst(SHA256.blockByteCount)
            }

            // Keep the tail for later.
            for byte in remaining {
                block[bufferedCount] = byte
                bufferedCount += 1
            }
        }

        /// Pads the message and returns its digest.
        ///
        /// Padding (FIPS 180-4 §5.1.1): a `1` bit, then `0` bits up to 56 bytes into a block, then the message
        /// length in bits as a 64-bit big-endian integer.
        ///
        /// - Returns: The 32-byte digest.
        package consuming func finalize() -> [UInt8] {
            let bitCount = messageByteCount &<< 3

            block[bufferedCount] = 0x80
            bufferedCount += 1
            if bufferedCount > SHA256.blockByteCount - 8 {
                // No room for the length: finish this block and put the length in one more.
                zeroBlock(from: bufferedCount)
                compressBufferedBlock()
            }
            zeroBlock(from: bufferedCount)
            for index in 0..<8 {
                block[SHA256.blockByteCount - 8 + index] = UInt8(truncatingIfNeeded: bitCount >> (56 - 8 * index))
            }
            compressBufferedBlock()

            var digest: [UInt8] = []
            digest.reserveCapacity(SHA256.digestByteCount)
            for word in state {
                for shift in stride(from: 24, through: 0, by: -8) {
                    digest.append(UInt8(truncatingIfNeeded: word >> shift))
                }
            }
            return digest
        }

        private mutating func zeroBlock(from start: Int) {
            for index in start..<SHA256.blockByteCount {
                block[index] = 0
            }
        }

        private mutating func compressBufferedBlock() {
            block.withUnsafeBytes { SHA256.compress($0, into: &state) }
            bufferedCount = 0
        }
    }

    /// The length of a message block in bytes.
    fileprivate static let blockByteCount = 64

    /// H(0): the first 32 bits of the fractional parts of the square roots of the first eight primes,
    /// FIPS 180-4 §5.3.3.
    fileprivate static let initialHashValue: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]

    /// K: the first 32 bits of the fractional parts of the cube roots of the first 64 primes,
    /// FIPS 180-4 §4.2.2.
    fileprivate static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// Compresses one 64-byte block into the intermediate hash value, FIPS 180-4 §6.2.2.
    fileprivate static func compress(_ block: UnsafeRawBufferPointer, into state: inout [UInt32]) {
        assert(block.count == blockByteCount)
        let k = roundConstants
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            // 1. The message schedule W0…W63 (§6.2.2 step 1; σ0 and σ1 from §4.1.2).
            for t in 0..<16 {
                w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * t, as: UInt32.self))
            }
            for t in 16..<64 {
                let s0 = rotateRight(w[t - 15], 7) ^ rotateRight(w[t - 15], 18) ^ (w[t - 15] >> 3)
                let s1 = rotateRight(w[t - 2], 17) ^ rotateRight(w[t - 2], 19) ^ (w[t - 2] >> 10)
                w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
            }

            // 2. The working variables a…h.
            var a = state[0]
            var b = state[1]
            var c = state[2]
            var d = state[3]
            var e = state[4]
            var f = state[5]
            var g = state[6]
            var h = state[7]

            // 3. Sixty-four rounds (Σ0, Σ1, Ch and Maj from §4.1.2).
            for t in 0..<64 {
                let sigma1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
                let choice = (e & f) ^ (~e & g)
                let t1 = h &+ sigma1 &+ choice &+ k[t] &+ w[t]
                let sigma0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let t2 = sigma0 &+ majority
                h = g
                g = f
                f = e
                e = d &+ t1
                d = c
                c = b
                b = a
                a = t1 &+ t2
            }

            // 4. The next intermediate hash value.
            state[0] &+= a
            state[1] &+= b
            state[2] &+= c
            state[3] &+= d
            state[4] &+= e
            state[5] &+= f
            state[6] &+= g
            state[7] &+= h
        }
    }

    /// ROTR^n(x), FIPS 180-4 §3.2.
    /// Inlined always: called six times in each of a block's 64 rounds, where a call would cost more than the shift.
    @inline(__always)
    private static func rotateRight(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x >> n) | (x << (32 - n))
    }
}

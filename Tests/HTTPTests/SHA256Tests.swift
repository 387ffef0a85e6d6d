import Foundation
import HTTP
import Testing

@Suite(.noHang) struct SHA256Tests {
    /// A message and its SHA-256 digest in lowercase hex.
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let message: [UInt8]
        let digest: String

        init(_ name: String, _ message: [UInt8], _ digest: String) {
            self.name = name
            self.message = message
            self.digest = digest
        }

        init(_ message: String, _ digest: String) {
            self.init("\"\(message)\"", Array(message.utf8), digest)
        }

        var testDescription: String { name }

        /// FIPS 180-4 examples (NIST CSRC "Examples with Intermediate Values"; FIPS 180-2 Appendix B) and messages
        /// at the padding boundaries, whose digests come from Python's `hashlib.sha256`.
        static let all: [Vector] = [
            Vector("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            Vector("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            Vector(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            Vector(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
                    + "nopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
            // Many blocks (FIPS's one million "a" is hashed once, on the fast path, in `oneMillionA`: each slow
            // path below would keep a thread of the shared pool busy for seconds under ThreadSanitizer).
            repeatedA(1_000, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
            // 55 bytes: the padding and length just fit in the last block.
            repeatedA(55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            // 56…63 bytes: the length spills into one more block.
            repeatedA(56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
            repeatedA(63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
            // 64 bytes: a whole block, then a block of padding alone.
            repeatedA(64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
            repeatedA(65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
            // The same boundaries one block later.
            repeatedA(119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
            repeatedA(120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
            repeatedA(128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"),
        ]

        private static func repeatedA(_ count: Int, _ digest: String) -> Vector {
            Vector("\(count) × \"a\"", [UInt8](repeating: UInt8(ascii: "a"), count: count), digest)
        }
    }

    @Test(arguments: Vector.all)
    func hashMatchesKnownDigest(_ vector: Vector) {
        let digest = SHA256.hash(vector.message)
        #expect(digest.count == SHA256.digestByteCount)
        #expect(hex(digest) == vector.digest)
    }

    // On Apple platforms `SHA256.hash` uses CryptoKit; this keeps the portable implementation covered there too.
    @Test(arguments: Vector.all)
    func portableHasherMatchesKnownDigest(_ vector: Vector) {
        var hasher = SHA256.PortableHasher()
        hasher.update(vector.message)
        #expect(hex(hasher.finalize()) == vector.digest)
    }

    @Test(arguments: Vector.all)
    func nonContiguousSequenceMatchesKnownDigest(_ vector: Vector) {
        // A lazy map has no contiguous storage, so the bytes arrive one at a time.
        let bytes = vector.message.lazy.map { $0 }
        #expect(hex(SHA256.hash(bytes)) == vector.digest)

        var hasher = SHA256.PortableHasher()
        hasher.update(bytes)
        #expect(hex(hasher.finalize()) == vector.digest)
    }

    @Test func oneMillionA() {
        // FIPS 180-2 Appendix B.3, through the contiguous (fast) path.
        let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(hex(SHA256.hash(bytes)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func repeatedBytesHashWithoutAnArray() {
        let bytes = repeatElement(UInt8(ascii: "a"), count: 1_000)
        #expect(hex(SHA256.hash(bytes)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func dataOverloadReturnsDigestAsData() {
        let digest: Data = SHA256.hash(Data("abc".utf8))
        #expect(digest.count == 32)
        #expect(hex(digest) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func stringUTF8ViewHashesLikeItsBytes() {
        #expect(hex(SHA256.hash("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// Digest of the 200 bytes `i % 251` for `i` in `0..<200`, from Python's `hashlib.sha256`.
    private static let twoHundredBytes = (0..<200).map { UInt8($0 % 251) }
    private static let twoHundredBytesDigest = "1901da1c9f699b48f6b2636e65cbf73abf99d0441ef67f5c540a42f7051dec6f"

    @Test(arguments: [1, 2, 3, 7, 55, 56, 63, 64, 65, 127, 128, 129, 199, 200])
    func piecesOfAnySizeGiveTheSameDigest(pieceSize: Int) {
        let message = Self.twoHundredBytes

        // Given the message fed in pieces, alternately contiguous and byte by byte
        var hasher = SHA256.PortableHasher()
        for (index, start) in stride(from: 0, to: message.count, by: pieceSize).enumerated() {
            let piece = message[start..<min(start + pieceSize, message.count)]
            if index.isMultiple(of: 2) {
                hasher.update(piece)
            } else {
                hasher.update(piece.lazy.map { $0 })
            }
        }

        // Then the digest is that of the whole message
        #expect(hex(hasher.finalize()) == Self.twoHundredBytesDigest)
    }

    @Test func emptyUpdatesChangeNothing() {
        var hasher = SHA256.PortableHasher()
        hasher.update([UInt8]())
        hasher.update(Array("ab".utf8))
        hasher.update(EmptyCollection<UInt8>())
        hasher.update(Array("c".utf8))
        hasher.update([UInt8]())
        #expect(hex(hasher.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

/// Lowercase hex, two digits a byte.
private func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] })
}

/// Percent-encoding (RFC 3986 §2.1) over UTF-8 bytes, with a byte table instead of `CharacterSet`: building
/// requests encodes a path on every load, and Foundation's `CharacterSet` is slow on Linux.
enum PercentEncoding {
    /// The bytes that stay as they are, as a 128-bit table of ASCII.
    struct AllowedBytes: Sendable {
        private let low: UInt64
        private let high: UInt64

        init(_ characters: String) {
            var low: UInt64 = 0
            var high: UInt64 = 0
            for byte in characters.utf8 where byte < 128 {
                if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
            }
            self.low = low
            self.high = high
        }

        /// Inlined always: called per byte of every URL part checked, where a call would cost more than the test.
        @inline(__always)
        func contains(_ byte: UInt8) -> Bool {
            if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
            if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
            return false
        }
    }

    static let unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"

    /// RFC 3986 `pchar` plus `/`: unreserved, sub-delims, `:` and `@`.
    static let pathAllowed = AllowedBytes(unreserved + "!$&'()*+,;=:@/")

    /// Unreserved characters only, for query names and values.
    static let queryAllowed = AllowedBytes(unreserved)

    /// What RFC 3986 allows unencoded in a whole query or fragment: `pchar`, `/` and `?`.
    static let queryTextAllowed = AllowedBytes(unreserved + "!$&'()*+,;=:@/?")

    /// What stays unencoded in a fragment; the same as in a query.
    static let fragmentAllowed = queryTextAllowed

    /// Why `text` is not correctly percent-encoded for a part whose unencoded characters are `allowed`, as a
    /// phrase ("'/a b' contains a space, which must be percent-encoded"), or `nil` when it is.
    static func problem(in text: String, allowing allowed: AllowedBytes) -> String? {
        let problem =
            text.utf8.withContiguousStorageIfAvailable { firstProblem(in: $0, allowing: allowed) }
            ?? Array(text.utf8).withUnsafeBufferPointer { firstProblem(in: $0, allowing: allowed) }
        switch problem {
        case nil:
            return nil
        case .badEscape:
            return "'\(Describe.printable(text))' contains a '%' that is not followed by two hex digits"
        case .notAllowed(let offset):
            // Every byte before this one is ASCII, so this one starts a scalar.
            let scalar = text.unicodeScalar(atUTF8Offset: offset)
            return "'\(Describe.printable(text))' contains \(Describe.scalar(scalar)), which must be percent-encoded"
        }
    }

    private enum Problem {
        case badEscape
        case notAllowed(offset: Int)
    }

    /// The first problem in `bytes`: a `%` without two hex digits after it, or a byte that is not allowed.
    private static func firstProblem(in bytes: UnsafeBufferPointer<UInt8>, allowing allowed: AllowedBytes) -> Problem? {
        var offset = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "%") {
                guard offset + 2 < bytes.count, hexValue(bytes[offset + 1]) != nil, hexValue(bytes[offset + 2]) != nil
                else { return .badEscape }
                offset += 3
            } else if allowed.contains(byte) {
                offset += 1
            } else {
                return .notAllowed(offset: offset)
            }
        }
        return nil
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// `text` with every byte outside `allowed` percent-encoded; `text` itself when nothing needs encoding.
    static func encode(_ text: String, allowing allowed: AllowedBytes) -> String {
        guard text.utf8.contains(where: { !allowed.contains($0) }) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if allowed.contains(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with `%XX` sequences decoded, or `nil` when a sequence is malformed or the result is not UTF-8;
    /// `text` itself when it has no `%`.
    static func decode(_ text: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

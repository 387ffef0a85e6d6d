/// A range of bytes of a representation, first and last positions included (RFC 9110 §14.1.2), as a ``Cache`` reads
/// a request's `Range` and a `206` response's `Content-Range`.
struct ByteRange: Sendable, Hashable {
    /// The first byte's position.
    var first: Int
    /// The last byte's position.
    var last: Int

    /// How many bytes it spans.
    var count: Int { last - first + 1 }

    /// The one byte range a request's `Range` field asks for, not yet resolved against a length.
    enum Requested: Sendable, Hashable {
        /// `bytes=first-last`, or `bytes=first-` (`last` is `nil`).
        case from(Int, through: Int?)
        /// `bytes=-length`: the last `length` bytes.
        case suffix(Int)

        /// The range of a representation of `length` bytes this asks for; `nil` when none of it exists (the
        /// request is unsatisfiable, and only the server can say so).
        func resolved(length: Int) -> ByteRange? {
            switch self {
            case .from(let first, let last):
                guard first < length else { return nil }
                return ByteRange(first: first, last: min(last ?? length - 1, length - 1))
            case .suffix(let suffix):
                guard suffix > 0, length > 0 else { return nil }
                return ByteRange(first: max(0, length - suffix), last: length - 1)
            }
        }
    }

    /// The range a request's `Range` field lines ask for, when they ask for exactly one byte range (RFC 9110
    /// §14.2: `bytes=0-499`, `bytes=500-`, `bytes=-500`); `nil` for several ranges, another unit, or anything that
    /// is not the grammar — such a request is not the cache's business.
    static func requested(by lines: [String]) -> Requested? {
        guard lines.count == 1 else { return nil }
        let bytes = Array(lines[0].utf8)
        guard bytes.count >= 6, bytes.count <= 64,
            String(decoding: bytes.prefix(6), as: UTF8.self).lowercased() == "bytes="
        else { return nil }
        // A range-set is a list: empty elements and whitespace around commas are allowed; one element must remain.
        let members = bytes.dropFirst(6).split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            .map { member -> ArraySlice<UInt8> in
                var member = member
                while let first = member.first, first == 0x20 || first == 0x09 { member.removeFirst() }
                while let last = member.last, last == 0x20 || last == 0x09 { member.removeLast() }
                return member
            }
            .filter { !$0.isEmpty }
        guard members.count == 1, let spec = members.first, let dash = spec.firstIndex(of: UInt8(ascii: "-")) else {
            return nil
        }
        let before = spec[..<dash]
        let after = spec[(dash + 1)...]
        if before.isEmpty {
            return number(after).map { .suffix($0) }
        }
        guard let first = number(before) else { return nil }
        if after.isEmpty { return .from(first, through: nil) }
        guard let last = number(after), last >= first else { return nil }
        return .from(first, through: last)
    }

    /// A `Content-Range` field's `bytes first-last/length` (RFC 9110 §14.4) with a known complete length; `nil` for
    /// an unknown length (`*`), an unsatisfied range, another unit, or anything else.
    static func contentRange(_ field: String) -> (range: ByteRange, length: Int)? {
        let bytes = Array(field.utf8)
        guard bytes.count >= 6, bytes.count <= 64,
            String(decoding: bytes.prefix(6), as: UTF8.self).lowercased() == "bytes "
        else { return nil }
        let rest = bytes.dropFirst(6)
        guard let dash = rest.firstIndex(of: UInt8(ascii: "-")), let slash = rest.firstIndex(of: UInt8(ascii: "/")),
            dash < slash, let first = number(rest[..<dash]), let last = number(rest[(dash + 1)..<slash]),
            let length = number(rest[(slash + 1)...]), first <= last, last < length
        else { return nil }
        return (ByteRange(first: first, last: last), length)
    }

    /// `1*DIGIT`, up to 15 digits (beyond any body a cache keeps); `nil` otherwise.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 15,
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
}

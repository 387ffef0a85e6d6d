/// Reads DER (ITU-T X.690 Distinguished Encoding Rules) one element at a time, checking every length against
/// the bytes that are left.
///
/// It is total: no input makes it trap, read out of bounds or overflow. Whatever is not strict DER — an
/// indefinite length, a length with leading zero bytes or in long form below 128, a length of more than eight
/// bytes, a multi-byte tag, a length beyond the end of the input — is a ``DERReader/Failure`` naming the byte
/// it was found at.
///
/// ```swift
/// var reader = DERReader(bytes[...])
/// let certificate = try reader.read(.sequence, "the certificate")
/// var fields = DERReader(certificate.contents)
/// ```
package struct DERReader {
    /// An identifier octet: class, constructed bit and tag number (X.690 §8.1.2), low-tag-number form only.
    package struct Tag: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: UInt8

        package init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// `INTEGER`.
        package static let integer = Tag(rawValue: 0x02)
        /// `BIT STRING`.
        package static let bitString = Tag(rawValue: 0x03)
        /// `OCTET STRING`.
        package static let octetString = Tag(rawValue: 0x04)
        /// `NULL`.
        package static let null = Tag(rawValue: 0x05)
        /// `OBJECT IDENTIFIER`.
        package static let objectIdentifier = Tag(rawValue: 0x06)
        /// `SEQUENCE` and `SEQUENCE OF` (constructed).
        package static let sequence = Tag(rawValue: 0x30)
        /// `SET` and `SET OF` (constructed).
        package static let set = Tag(rawValue: 0x31)

        /// A constructed context-specific tag, `[number]` in ASN.1 (`[0]` is `0xA0`), for `number` in `0...30`.
        package static func contextSpecific(_ number: UInt8) -> Tag {
            Tag(rawValue: 0xA0 | (number & 0x1F))
        }

        package var description: String {
            let digits = Array("0123456789abcdef")
            return "0x" + String([digits[Int(rawValue >> 4)], digits[Int(rawValue & 0x0F)]])
        }
    }

    /// One tag-length-value element.
    package struct Element {
        /// The element's tag.
        package var tag: Tag
        /// The value's bytes, without tag and length.
        package var contents: ArraySlice<UInt8>
        /// The whole element: tag, length and value, exactly as encoded.
        package var encoded: ArraySlice<UInt8>
    }

    /// Why the input is not the DER expected, and where.
    package struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// What was wrong, as a phrase.
        package var message: String
        /// The offset of the offending byte from the start of the outermost input.
        package var offset: Int

        package var description: String { "\(message) at byte \(offset)" }
    }

    private var remaining: ArraySlice<UInt8>
    /// The index the outermost input starts at, so that offsets count from there even in nested readers.
    private let origin: Int

    /// Creates a reader of `bytes`.
    ///
    /// - Parameter bytes: The encoding; offsets in failures count from its first byte.
    package init(_ bytes: ArraySlice<UInt8>) {
        remaining = bytes
        origin = bytes.startIndex
    }

    /// Creates a reader of an element's contents, reporting offsets from the same origin as `parent`.
    package init(contentsOf element: Element, within parent: DERReader) {
        remaining = element.contents
        origin = parent.origin
    }

    /// Whether every byte has been read.
    package var isAtEnd: Bool { remaining.isEmpty }

    /// The offset of the next byte, from the start of the outermost input.
    package var offset: Int { remaining.startIndex - origin }

    /// The next element's tag, without reading it; `nil` at the end.
    package var nextTag: Tag? { remaining.first.map(Tag.init(rawValue:)) }

    /// Reads the next element, whatever its tag.
    ///
    /// - Returns: The element; the reader moves past it.
    /// - Throws: ``Failure`` when the input ends early or is not DER. The reader does not move.
    package mutating func read() throws(Failure) -> Element {
        var index = remaining.startIndex
        let end = remaining.endIndex
        guard index < end else { throw failure("expected an element, found the end of the input", at: index) }

        let tag = Tag(rawValue: remaining[index])
        guard tag.rawValue & 0x1F != 0x1F else {
            throw failure("unsupported multi-byte tag \(tag)", at: index)
        }
        index += 1

        guard index < end else { throw failure("the input ends before the length of element \(tag)", at: index) }
        let first = remaining[index]
        let lengthStart = index
        index += 1
        let length: UInt64
        if first < 0x80 {
            length = UInt64(first)
        } else {
            let byteCount = Int(first & 0x7F)
            guard byteCount != 0 else { throw failure("indefinite length (not DER)", at: lengthStart) }
            guard byteCount <= 8 else { throw failure("a length of \(byteCount) bytes", at: lengthStart) }
            guard byteCount <= end - index else {
                throw failure("the input ends inside the length of element \(tag)", at: lengthStart)
            }
            guard remaining[index] != 0 else { throw failure("a length with a leading zero byte", at: lengthStart) }
            var value: UInt64 = 0
            for _ in 0..<byteCount {
                value = value << 8 | UInt64(remaining[index])
                index += 1
            }
            guard value >= 0x80 else { throw failure("a long-form length below 128", at: lengthStart) }
            length = value
        }

        guard length <= UInt64(end - index) else {
            throw failure(
                "element \(tag) claims \(length) bytes but only \(end - index) are left", at: lengthStart)
        }
        let contentsEnd = index + Int(length)
        let element = Element(
            tag: tag,
            contents: remaining[index..<contentsEnd],
            encoded: remaining[remaining.startIndex..<contentsEnd]
        )
        remaining = remaining[contentsEnd...]
        return element
    }

    /// Reads the next element, which must have `tag`.
    ///
    /// - Parameters:
    ///   - tag: The tag expected.
    ///   - name: What the element is, for the failure's message ("the serial number").
    /// - Returns: The element; the reader moves past it.
    /// - Throws: ``Failure`` when the input ends, is not DER, or the element has another tag. The reader does
    ///   not move.
    package mutating func read(_ tag: Tag, _ name: String) throws(Failure) -> Element {
        guard let next = nextTag else {
            throw failure("expected \(name), found the end of the input", at: remaining.startIndex)
        }
        guard next == tag else {
            throw failure("expected \(name) (tag \(tag)), found tag \(next)", at: remaining.startIndex)
        }
        return try read()
    }

    /// Reads the next element if it has `tag`.
    ///
    /// - Parameters:
    ///   - tag: The tag of an optional element.
    ///   - name: What the element is, for the failure's message.
    /// - Returns: The element, or `nil` (and the reader stays) when the next one has another tag or there is none.
    package mutating func readIfPresent(_ tag: Tag, _ name: String) throws(Failure) -> Element? {
        guard nextTag == tag else { return nil }
        return try read(tag, name)
    }

    /// Checks that every byte has been read.
    ///
    /// - Parameter name: What was being read ("the certificate"), for the failure's message.
    package func expectEnd(of name: String) throws(Failure) {
        guard isAtEnd else {
            throw failure("\(remaining.count) unexpected bytes after \(name)", at: remaining.startIndex)
        }
    }

    private func failure(_ message: String, at index: Int) -> Failure {
        Failure(message: message, offset: index - origin)
    }
}

public import Foundation

/// One fuzzer input, read as two streams so that mutations stay meaningful: text from the front, numbers and
/// choices from the back.
///
/// Text fields are separated by `0xFF`, a byte that never occurs in UTF-8, so every string a Swift program can
/// hold can still be written (`0xFE` escapes a literal `0xFF` or `0xFE` in binary fields). Numbers are read one
/// byte at a time from the end. A mutation of a string therefore leaves every choice in place, and a mutation of a
/// choice leaves the strings alone. When a stream runs dry it yields empty strings and zeros, so every input,
/// even an empty one, decodes to something.
///
/// ``SeedWriter`` writes the same layout, for the seed corpus and for tests of a harness.
public struct FuzzInput {
    private let bytes: [UInt8]
    /// The next text byte.
    private var front: Int
    /// One past the next number byte; numbers are read backwards from the end.
    private var back: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        front = 0
        back = bytes.count
    }

    /// The separator between text fields.
    static let separator: UInt8 = 0xFF
    /// Makes the next byte of a text field literal.
    static let escape: UInt8 = 0xFE

    /// The next text field's bytes, up to the next separator.
    public mutating func bytesField() -> [UInt8] {
        var field: [UInt8] = []
        while front < back {
            let byte = bytes[front]
            front += 1
            if byte == Self.separator { break }
            if byte == Self.escape, front < back {
                field.append(bytes[front])
                front += 1
            } else {
                field.append(byte)
            }
        }
        return field
    }

    /// The next text field as a string; invalid UTF-8 becomes U+FFFD.
    public mutating func string() -> String {
        String(decoding: bytesField(), as: UTF8.self)
    }

    /// The next text field, or `nil` when the next choice says so.
    public mutating func optionalString() -> String? {
        bool() ? nil : string()
    }

    /// The next number byte, `0` when none is left.
    public mutating func byte() -> UInt8 {
        guard back > front else { return 0 }
        back -= 1
        return bytes[back]
    }

    /// The next `count` number bytes as an unsigned integer, first byte lowest.
    public mutating func unsigned(bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(byte()) << (8 * UInt64(index)) }
        return value
    }

    public mutating func bool() -> Bool {
        byte() & 1 == 1
    }

    /// A number in `0..<count` (one byte, or two when `count` needs them).
    public mutating func choice(_ count: Int) -> Int {
        precondition(count > 0)
        let raw = count <= 256 ? UInt64(byte()) : unsigned(bytes: 2)
        return Int(raw % UInt64(count))
    }

    /// One of `options`.
    public mutating func pick<Element>(_ options: [Element]) -> Element {
        options[choice(options.count)]
    }

    /// How many of something, `0...maximum`.
    public mutating func count(upTo maximum: Int) -> Int {
        choice(maximum + 1)
    }

    /// Any `Int`, often one of the values that break arithmetic.
    public mutating func int() -> Int {
        let selector = byte()
        if Int(selector) < Self.interestingInts.count { return Self.interestingInts[Int(selector)] }
        return Int(truncatingIfNeeded: unsigned(bytes: 8))
    }

    /// An `Int` that is small most of the time (`-8...1000`), and sometimes anything.
    public mutating func smallInt() -> Int {
        bool() ? int() : Int(unsigned(bytes: 1)) * 4 - 8
    }

    static let interestingInts: [Int] = [
        0, 1, -1, 2, 3, 80, 443, 65535, 65536, -65536, Int(Int32.max), Int(Int32.min), Int(UInt32.max),
        1_000_000_000, 1_000_000_001, 999_999_999_999_999_999, Int.max, Int.min, Int.max - 1, Int.min + 1,
    ]

    /// Any `Double`, often one of the values that break conversions (NaN, infinities, beyond `Int64`).
    public mutating func double() -> Double {
        let selector = byte()
        if Int(selector) < Self.interestingDoubles.count { return Self.interestingDoubles[Int(selector)] }
        if selector < 0xC0 { return Double(Int(unsigned(bytes: 2))) / 16 }
        return Double(bitPattern: unsigned(bytes: 8))
    }

    static let interestingDoubles: [Double] = [
        0, -0.0, 1, -1, 0.5, 3600, 1e9, 1e18, 9.3e18, 1.8e20, 1e300, -1e300, .nan, .infinity, -.infinity,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, 9_223_372_036_854_775_808,
        -9_223_372_036_854_775_808, 9_223_372_036_854_774_784, 1.7e38, 1.8e38,
    ]

    /// A `Duration` from seconds and attoseconds, including negative and extreme ones.
    public mutating func duration() -> Duration {
        switch choice(4) {
        case 0: .seconds(smallInt())
        case 1: .milliseconds(smallInt())
        case 2: Duration(secondsComponent: Int64(truncatingIfNeeded: int()), attosecondsComponent: 0)
        default:
            Duration(
                secondsComponent: Int64(truncatingIfNeeded: int()),
                attosecondsComponent: Int64(truncatingIfNeeded: unsigned(bytes: 8)) % 1_000_000_000_000_000_000)
        }
    }

    /// A point in time: mostly a realistic one, sometimes the distant past or future or beyond.
    public mutating func date() -> Date {
        switch choice(6) {
        case 0, 1: Self.referenceNow.addingTimeInterval(Double(smallInt()))
        case 2: Date(timeIntervalSince1970: 0)
        case 3: pick([Date.distantPast, Date.distantFuture])
        case 4: Date(timeIntervalSince1970: Double(int()))
        default: Date(timeIntervalSince1970: double())
        }
    }

    /// The "now" of seeds and realistic dates: Sun, 22 Nov 2026 10:00:00 GMT.
    public static let referenceNow = Date(timeIntervalSince1970: 1_795_341_600)
}

/// Writes inputs in ``FuzzInput``'s layout, one call per read the harness makes, in the same order.
///
/// Text fields and numbers are two streams: the order of `string` calls must match the harness's reads of text,
/// and the order of the number calls its reads of numbers, but the two may interleave freely.
public struct SeedWriter {
    private var text: [UInt8] = []
    private var numbers: [UInt8] = []

    public init() {}

    /// The input: the text fields, then the numbers reversed (the reader takes them from the end).
    public var bytes: [UInt8] { text + numbers.reversed() }

    public mutating func bytesField(_ field: some Sequence<UInt8>) {
        for byte in field {
            if byte == FuzzInput.separator || byte == FuzzInput.escape { text.append(FuzzInput.escape) }
            text.append(byte)
        }
        text.append(FuzzInput.separator)
    }

    public mutating func string(_ value: String) {
        bytesField(Array(value.utf8))
    }

    public mutating func optionalString(_ value: String?) {
        bool(value == nil)
        if let value { string(value) }
    }

    public mutating func byte(_ value: UInt8) {
        numbers.append(value)
    }

    public mutating func unsigned(_ value: UInt64, bytes count: Int) {
        for index in 0..<count { byte(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    public mutating func bool(_ value: Bool) {
        byte(value ? 1 : 0)
    }

    public mutating func choice(_ value: Int, of count: Int) {
        precondition((0..<count).contains(value))
        if count <= 256 { byte(UInt8(value)) } else { unsigned(UInt64(value), bytes: 2) }
    }

    public mutating func count(_ value: Int, upTo maximum: Int) {
        choice(value, of: maximum + 1)
    }

    public mutating func int(_ value: Int) {
        if let index = FuzzInput.interestingInts.firstIndex(of: value) {
            byte(UInt8(index))
        } else {
            byte(0xFF)
            unsigned(UInt64(bitPattern: Int64(value)), bytes: 8)
        }
    }

    /// A small `Int` as ``FuzzInput/smallInt()`` reads it: `value` must be in `-8...1012` and a multiple of 4
    /// from -8, or it is written as any `Int`.
    public mutating func smallInt(_ value: Int) {
        if (-8...1012).contains(value), (value + 8) % 4 == 0 {
            bool(false)
            byte(UInt8((value + 8) / 4))
        } else {
            bool(true)
            int(value)
        }
    }

    public mutating func double(_ value: Double) {
        if let index = FuzzInput.interestingDoubles.firstIndex(where: { $0.bitPattern == value.bitPattern }) {
            byte(UInt8(index))
        } else {
            byte(0xFF)
            unsigned(value.bitPattern, bytes: 8)
        }
    }

    /// A whole number of seconds, as ``FuzzInput/duration()`` reads it.
    public mutating func seconds(_ value: Int) {
        choice(0, of: 4)
        smallInt(value)
    }

    /// A time `offset` seconds after ``FuzzInput/referenceNow``.
    public mutating func date(secondsAfterReferenceNow offset: Int) {
        choice(0, of: 6)
        smallInt(offset)
    }
}

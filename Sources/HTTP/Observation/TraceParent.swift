import Synchronization

/// The value of a W3C Trace Context `traceparent` header field: which trace a request belongs to, which span sent
/// it, and whether the caller records the trace.
///
/// ```swift
/// let parent = TraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
/// parent?.traceID.description   // "4bf92f3577b34da6a3ce929d0e0e4736"
/// parent?.flags.contains(.sampled)  // true
/// ```
///
/// Parsing follows [W3C Trace Context](https://www.w3.org/TR/trace-context/) §3.2: two lowercase hex digits of
/// version (`ff` is invalid), a 32-digit trace id and a 16-digit parent id that are not all zeros, two digits of
/// flags, separated by `-`; version `00` has exactly those 55 characters, a later version may add fields after a
/// further `-`. A value is always written as version `00`. See ``PropagateTraceContext`` for the loader that sends
/// it.
public struct TraceParent: Sendable, Hashable, CustomStringConvertible {
    /// The name of the header field: `traceparent`.
    public static let headerName = "traceparent"
    /// The name of the header field with vendor-specific trace data that goes with it: `tracestate`.
    public static let stateHeaderName = "tracestate"

    /// The trace: the same for every request of one distributed operation.
    public var traceID: TraceID
    /// The span that sends the request: its caller's side of the request.
    public var parentID: SpanID
    /// The trace flags.
    public var flags: Flags

    /// A 16-byte trace id, never all zeros.
    public struct TraceID: Sendable, Hashable, CustomStringConvertible {
        /// The first eight bytes, big-endian.
        public let high: UInt64
        /// The last eight bytes, big-endian.
        public let low: UInt64

        /// A trace id, or `nil` when both halves are zero (an invalid trace id).
        public init?(high: UInt64, low: UInt64) {
            guard high != 0 || low != 0 else { return nil }
            self.high = high
            self.low = low
        }

        /// A trace id from 32 lowercase hex digits, or `nil` when `hex` is anything else or all zeros.
        public init?(hex: some StringProtocol) {
            let utf8 = Array(hex.utf8)
            guard utf8.count == 32, let high = Hex.value(of: utf8[0..<16]), let low = Hex.value(of: utf8[16..<32])
            else { return nil }
            self.init(high: high, low: low)
        }

        /// 32 lowercase hex digits.
        public var description: String { Hex.digits(high) + Hex.digits(low) }
    }

    /// An 8-byte span id, never all zeros.
    public struct SpanID: Sendable, Hashable, CustomStringConvertible {
        /// The eight bytes, big-endian.
        public let rawValue: UInt64

        /// A span id, or `nil` for zero (an invalid span id).
        public init?(rawValue: UInt64) {
            guard rawValue != 0 else { return nil }
            self.rawValue = rawValue
        }

        /// A span id from 16 lowercase hex digits, or `nil` when `hex` is anything else or all zeros.
        public init?(hex: some StringProtocol) {
            let utf8 = Array(hex.utf8)
            guard utf8.count == 16, let value = Hex.value(of: utf8[...]) else { return nil }
            self.init(rawValue: value)
        }

        /// 16 lowercase hex digits.
        public var description: String { Hex.digits(rawValue) }
    }

    /// The trace flags: one byte, of which version `00` defines the lowest bit.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8

        public init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// The caller may have recorded the trace: services that sample by their parent's decision record it too.
        public static let sampled = Flags(rawValue: 0x01)
    }

    /// A trace parent from its parts.
    public init(traceID: TraceID, parentID: SpanID, flags: Flags = []) {
        self.traceID = traceID
        self.parentID = parentID
        self.flags = flags
    }

    /// Parses a `traceparent` value (spaces and tabs around it are ignored); `nil` when it is invalid.
    public init?(_ value: some StringProtocol) {
        var bytes = Array(value.utf8)[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        guard bytes.count >= 55 else { return nil }
        let start = bytes.startIndex
        func field(_ offset: Int, _ count: Int) -> ArraySlice<UInt8> {
            bytes[(start + offset)..<(start + offset + count)]
        }
        guard let version = Hex.value(of: field(0, 2)), version != 0xFF,
            bytes[start + 2] == 0x2D, bytes[start + 35] == 0x2D, bytes[start + 52] == 0x2D,
            let high = Hex.value(of: field(3, 16)), let low = Hex.value(of: field(19, 16)),
            let traceID = TraceID(high: high, low: low),
            let parent = Hex.value(of: field(36, 16)), let parentID = SpanID(rawValue: parent),
            let flags = Hex.value(of: field(53, 2))
        else { return nil }
        // Version 00 is exactly 55 characters; a later one may go on, after a `-`.
        if bytes.count > 55 {
            guard version != 0, bytes[start + 55] == 0x2D else { return nil }
        }
        self.init(traceID: traceID, parentID: parentID, flags: Flags(rawValue: UInt8(flags)))
    }

    /// `00-<trace id>-<parent id>-<flags>`.
    public var description: String {
        // Written into one buffer: a header value per attempt, built without intermediate strings.
        String(unsafeUninitializedCapacity: 55) { buffer in
            buffer[0] = 0x30
            buffer[1] = 0x30
            buffer[2] = 0x2D
            Hex.write(traceID.high, to: buffer, at: 3)
            Hex.write(traceID.low, to: buffer, at: 19)
            buffer[35] = 0x2D
            Hex.write(parentID.rawValue, to: buffer, at: 36)
            buffer[52] = 0x2D
            Hex.write(UInt64(flags.rawValue), to: buffer, at: 53, count: 2)
            return 55
        }
    }
}

extension HTTPRequest {
    /// The request's `traceparent` header field, parsed; `nil` when it has none, more than one, or an invalid one.
    public var traceParent: TraceParent? {
        let values = headers.values(for: TraceParent.headerName)
        guard values.count == 1 else { return nil }
        return TraceParent(values[0])
    }
}

extension TraceParent.SpanID {
    /// A new span id: distinct from every other this process makes (until 2⁶⁴ of them), unpredictable enough to
    /// be unique across processes.
    package static func next() -> Self {
        while true {
            let number = TraceIDs.counter.wrappingAdd(1, ordering: .relaxed).newValue
            if let id = Self(rawValue: TraceIDs.mix(TraceIDs.spanSalt &+ number &* TraceIDs.golden)) { return id }
        }
    }
}

extension TraceParent.TraceID {
    /// The trace id of a load: the same for every attempt of the load, distinct for every other load of the
    /// process, unpredictable enough to be unique across processes.
    package init(for load: LoadID) {
        let step = load.rawValue &* TraceIDs.golden
        let high = TraceIDs.mix(TraceIDs.traceSalts.high &+ step)
        // `mix` is a bijection, so `high` alone is unique per load; `low` is never 0 with it.
        self.init(high: high, low: high == 0 ? 1 : TraceIDs.mix(TraceIDs.traceSalts.low &+ step))!
    }
}

/// Where trace and span ids come from: SplitMix64 streams over a counter and the load number, from salts drawn at
/// random once per process. Cheap (an atomic increment and a few multiplications), unique within the process.
enum TraceIDs {
    static let golden: UInt64 = 0x9E37_79B9_7F4A_7C15
    static let spanSalt = UInt64.random(in: .min ... .max)
    static let traceSalts = (high: UInt64.random(in: .min ... .max), low: UInt64.random(in: .min ... .max))
    static let counter = Atomic<UInt64>(0)

    /// SplitMix64's finalizer: a bijection on 64-bit integers that spreads every input bit over the output.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Lowercase hexadecimal, as Trace Context writes it.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The value of up to 16 lowercase hex digits, or `nil` if any byte is not one.
    static func value(of bytes: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// `value` as 16 lowercase hex digits.
    static func digits(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            write(value, to: buffer, at: 0)
            return 16
        }
    }

    /// Writes the lowest `count` nibbles of `value` as lowercase hex digits into `buffer` from `offset` on.
    static func write(_ value: UInt64, to buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int, count: Int = 16) {
        for index in 0..<count {
            buffer[offset + index] = digits[Int(truncatingIfNeeded: value >> UInt64(4 * (count - 1 - index)) & 0xF)]
        }
    }
}

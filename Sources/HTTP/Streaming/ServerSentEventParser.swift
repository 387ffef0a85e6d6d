public import Foundation

/// One event of a `text/event-stream` body (Server-Sent Events, WHATWG HTML §9.2).
public struct ServerSentEvent: Sendable, Hashable, CustomStringConvertible {
    /// The event's type: its `event` field, or `"message"` when it had none.
    public var type: String
    /// Its `data` fields, joined with line feeds.
    public var data: String
    /// The last event ID when the event was dispatched: the latest `id` field seen so far in the stream (this
    /// event's or an earlier one's), empty when there was none or an `id` field reset it. A reconnection sends it as
    /// `Last-Event-ID`.
    public var lastEventID: String

    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }

    public var description: String {
        "\(type)\(lastEventID.isEmpty ? "" : " #\(lastEventID)"): \(data)"
    }
}

/// Reads a `text/event-stream` body as the WHATWG HTML specification's event-stream interpretation does (§9.2.6),
/// from chunks split anywhere — inside a line, between a CR and its LF, inside a UTF-8 sequence or the byte order
/// mark.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for try await chunk in streamed.body {
///     for event in parser.parse(chunk) { handle(event) }
/// }
/// ```
///
/// The rules: lines end with CRLF, LF or CR; a leading byte order mark is skipped; a line starting with `:` is a
/// comment; `field: value` (one space after the colon removed) or `field` alone (an empty value); `event` sets the
/// type, `data` adds a line of data, `id` sets the stream's last event ID buffer unless its value contains NUL (a
/// blank line makes it the source's ``lastEventID``), `retry` sets
/// ``reconnectionDelay`` when its value is ASCII digits only, any other field is ignored. A blank line dispatches the
/// event — none when it has no data — and the end of the stream discards an event not followed by a blank line.
/// Invalid UTF-8 becomes U+FFFD. Memory is bounded by the longest line.
public struct ServerSentEventParser: Sendable {
    /// The last event ID of the event source: set from the stream's last event ID buffer each time a blank line
    /// dispatches (an event with no data included), and what a reconnection sends as `Last-Event-ID`. An `id` field
    /// whose event was cut off before its blank line does not change it.
    public private(set) var lastEventID = ""
    /// The delay before reconnecting that the stream's last valid `retry` field asked for, if any.
    public private(set) var reconnectionDelay: Duration?

    private var line: [UInt8] = []
    private var data = ""
    private var hasData = false
    private var eventType = ""
    /// The stream's last event ID buffer: empty at the start of each stream, kept from event to event within it.
    private var idBuffer = ""
    /// The previous chunk ended with CR: an LF starting this one belongs to that line end.
    private var afterCR = false
    /// Bytes at the start of the stream that may still be a byte order mark.
    private var start: [UInt8] = []
    private var isPastStart = false

    /// A parser at the start of a stream. `lastEventID` carries the ID of a stream this one resumes.
    public init(lastEventID: String = "") {
        self.lastEventID = lastEventID
    }

    /// The events that `chunk` completes, in order.
    public mutating func parse(_ chunk: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        let done: Void? = chunk.withContiguousStorageIfAvailable { bytes in parse(bytes, into: &events) }
        if done == nil { Array(chunk).withUnsafeBufferPointer { bytes in parse(bytes, into: &events) } }
        return events
    }

    /// The events that `chunk` completes, in order: the `Data` a body
    /// stream hands over, read in place.
    public mutating func parse(_ chunk: Data) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        chunk.withUnsafeBytes { raw in parse(raw.bindMemory(to: UInt8.self), into: &events) }
        return events
    }

    /// Reads `bytes` a line at a time: each run of bytes up to the next CR or LF goes onto the line at once, not byte
    /// by byte through the sequence's iterator.
    private mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvent]) {
        var index = 0
        let count = bytes.count
        while index < count, !isPastStart {
            let byte = bytes[index]
            index += 1
            start.append(byte)
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            if start.count < 3, start.elementsEqual(bom.prefix(start.count)) { continue }
            isPastStart = true
            let pending = start == bom ? [] : start
            start = []
            for byte in pending { consume(byte, into: &events) }
        }
        while index < count {
            if afterCR {
                afterCR = false
                if bytes[index] == 0x0A {  // the LF of a CRLF
                    index += 1
                    continue
                }
            }
            var end = index
            while end < count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
            if end > index { line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end])) }
            guard end < count else { return }
            afterCR = bytes[end] == 0x0D
            endLine(into: &events)
            index = end + 1
        }
    }

    /// The end of the stream: an event still being read (no blank line after it) is discarded, as the specification
    /// says. Returns nothing; the parser is ready for a new stream (a reconnection)
    /// and keeps ``lastEventID`` and ``reconnectionDelay``.
    public mutating func finish() {
        line = []
        data = ""
        hasData = false
        eventType = ""
        idBuffer = ""
        afterCR = false
        start = []
        isPastStart = false
    }

    private mutating func consume(_ byte: UInt8, into events: inout [ServerSentEvent]) {
        switch byte {
        case 0x0A:
            if afterCR {
                afterCR = false
                return  // the LF of a CRLF
            }
            endLine(into: &events)
        case 0x0D:
            afterCR = true
            endLine(into: &events)
        default:
            afterCR = false
            line.append(byte)
        }
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) {
        defer { line.removeAll(keepingCapacity: true) }
        guard let first = line.first else {
            dispatch(into: &events)
            return
        }
        if first == UInt8(ascii: ":") { return }  // a comment
        let field: String
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: line[..<colon], as: UTF8.self)
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = String(decoding: line, as: UTF8.self)
            value = []
        }
        switch field {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            if hasData { data += "\n" }
            data += String(decoding: value, as: UTF8.self)
            hasData = true
        case "id":
            if !value.contains(0) { idBuffer = String(decoding: value, as: UTF8.self) }
        case "retry":
            guard !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return
            }
            var milliseconds: Int64 = 0
            for digit in value {
                milliseconds = min(milliseconds * 10 + Int64(digit - UInt8(ascii: "0")), 1_000_000_000_000)
            }
            reconnectionDelay = .milliseconds(milliseconds)
        default:
            break
        }
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        defer {
            data = ""
            hasData = false
            eventType = ""
        }
        lastEventID = idBuffer
        guard hasData else { return }
        events.append(
            ServerSentEvent(type: eventType.isEmpty ? "message" : eventType, data: data, lastEventID: idBuffer))
    }
}

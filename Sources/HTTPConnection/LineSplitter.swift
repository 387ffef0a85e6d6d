import Foundation

/// Cuts bytes that arrive in chunks into lines ended by LF, CR or CRLF, holding at most one line (bounded by
/// `maximumLength`) and the chunk it came with.
///
/// A line ended by CR is handed over at once, without waiting for the next byte to see whether it is an LF: a
/// CRLF split between two chunks is recognised when the LF arrives, and the LF is skipped.
struct LineSplitter {
    /// The most bytes a line may have, without its terminator.
    let maximumLength: Int
    private var buffer: [UInt8] = []
    /// Where the current line starts in `buffer`.
    private var start = 0
    /// Where to look for the next terminator: the bytes from `start` to here have none.
    private var scanned = 0
    /// The last line ended with CR: an LF right after it belongs to that line.
    private var skipsLineFeed = false
    /// The number of lines handed over so far: the line being read is `lineNumber + 1`.
    private(set) var lineNumber = 0

    init(maximumLength: Int) {
        self.maximumLength = max(1, maximumLength)
    }

    /// A line was longer than ``maximumLength``.
    struct LineTooLong: Error {
        var lineNumber: Int
    }

    /// Adds the next bytes.
    mutating func append(_ chunk: Data) {
        if start > 0, start * 2 >= buffer.count {
            buffer.removeFirst(start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: chunk)
    }

    /// The next complete line, without its terminator; `nil` when the bytes so far end inside a line.
    ///
    /// - Throws: ``LineTooLong`` when the line passes ``maximumLength``, ended or not.
    mutating func nextLine() throws(LineTooLong) -> ArraySlice<UInt8>? {
        if skipsLineFeed, start < buffer.count {
            if buffer[start] == 0x0A { start += 1 }
            skipsLineFeed = false
        }
        var index = Swift.max(scanned, start)
        let end = buffer.count
        while index < end {
            let byte = buffer[index]
            if byte == 0x0A || byte == 0x0D {
                guard index - start <= maximumLength else { throw LineTooLong(lineNumber: lineNumber + 1) }
                let line = buffer[start..<index]
                start = index + 1
                scanned = start
                skipsLineFeed = byte == 0x0D
                lineNumber += 1
                return line
            }
            index += 1
        }
        scanned = index
        guard end - start <= maximumLength else { throw LineTooLong(lineNumber: lineNumber + 1) }
        return nil
    }

    /// The last line, when the bytes ended without a terminator after it; call once ``nextLine()`` returns `nil`
    /// and no more bytes will come.
    mutating func finish() -> ArraySlice<UInt8>? {
        if skipsLineFeed, start < buffer.count, buffer[start] == 0x0A { start += 1 }
        skipsLineFeed = false
        guard start < buffer.count else { return nil }
        let line = buffer[start...]
        start = buffer.count
        scanned = start
        lineNumber += 1
        return line
    }
}

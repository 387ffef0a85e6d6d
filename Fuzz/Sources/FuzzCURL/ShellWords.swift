/// Splits a command line the way bash reads it, for the quoting `cURLCommand` uses: words separated by spaces or a
/// backslash-newline, each made of `'…'`, `$'…'` (with `\xHH`, `\\` and `\'`), backslash-escaped characters and
/// plain letters, digits and `-`; a newline ends the command and may be followed by one `#` comment line.
///
/// Anything else unquoted (`;`, `|`, `$(`, a backtick, a space inside a value…) is reported, since a shell would
/// give it a meaning of its own.
struct ShellWords {
    var words: [[UInt8]] = []
    var comment: String?

    struct Unsafe: Error, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "at byte \(offset): \(reason)" }
    }

    init(_ command: String) throws(Unsafe) {
        let bytes = Array(command.utf8)
        var index = 0
        var word: [UInt8]?

        func endWord() {
            if let finished = word { words.append(finished) }
            word = nil
        }

        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "):
                endWord()
                index += 1
            case UInt8(ascii: "\n"):
                endWord()
                let rest = String(decoding: bytes[(index + 1)...], as: UTF8.self)
                guard rest.hasPrefix("#"), !rest.contains("\n") else {
                    throw Unsafe(offset: index, reason: "after the command comes something other than one comment line")
                }
                comment = rest
                return
            case UInt8(ascii: "\\"):
                guard index + 1 < bytes.count else { throw Unsafe(offset: index, reason: "a trailing backslash") }
                if bytes[index + 1] == UInt8(ascii: "\n") {
                    endWord()
                } else {
                    word = (word ?? []) + [bytes[index + 1]]
                }
                index += 2
            case UInt8(ascii: "'"):
                guard let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "'")) else {
                    throw Unsafe(offset: index, reason: "an unterminated '…'")
                }
                word = (word ?? []) + bytes[(index + 1)..<close]
                index = close + 1
            case UInt8(ascii: "$") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "'"):
                var decoded: [UInt8] = []
                index += 2
                while true {
                    guard index < bytes.count else { throw Unsafe(offset: index, reason: "an unterminated $'…'") }
                    let next = bytes[index]
                    if next == UInt8(ascii: "'") {
                        index += 1
                        break
                    }
                    guard next == UInt8(ascii: "\\") else {
                        decoded.append(next)
                        index += 1
                        continue
                    }
                    guard index + 1 < bytes.count else { throw Unsafe(offset: index, reason: "a backslash ends $'…'") }
                    switch bytes[index + 1] {
                    case UInt8(ascii: "\\"), UInt8(ascii: "'"):
                        decoded.append(bytes[index + 1])
                        index += 2
                    case UInt8(ascii: "x"):
                        // bash reads one or two hex digits after \x.
                        var value: UInt8 = 0
                        var digits = 0
                        while digits < 2, index + 2 + digits < bytes.count,
                            let digit = Self.hex(bytes[index + 2 + digits])
                        {
                            value = value << 4 | digit
                            digits += 1
                        }
                        guard digits > 0 else { throw Unsafe(offset: index, reason: "\\x without hex digits") }
                        decoded.append(value)
                        index += 2 + digits
                    default:
                        throw Unsafe(
                            offset: index,
                            reason: "an escape cURLCommand does not write: \\\(Unicode.Scalar(bytes[index + 1]))")
                    }
                }
                word = (word ?? []) + decoded
            default:
                guard Self.isPlain(byte) else {
                    throw Unsafe(offset: index, reason: "an unquoted \(Unicode.Scalar(byte).escaped(asASCII: true))")
                }
                word = (word ?? []) + [byte]
                index += 1
            }
        }
        endWord()
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

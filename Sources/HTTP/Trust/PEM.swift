package import Foundation

/// Reads PEM text (RFC 7468): `-----BEGIN LABEL-----`, base64 lines, `-----END LABEL-----`.
///
/// ```swift
/// let blocks = try PEM.blocks(in: String(contentsOf: chainFile, encoding: .utf8))
/// let certificates = blocks.filter { $0.label == "CERTIFICATE" }.map(\.contents)
/// ```
///
/// Text outside the blocks (such as the `subject=` lines `openssl` prints) is ignored. A block with header
/// lines (`Proc-Type: 4,ENCRYPTED`, the legacy encrypted form), without its end line, with an end line of
/// another label, or whose base64 does not decode, is an error, never a partial result.
package enum PEM {
    /// One `BEGIN`…`END` block.
    package struct Block: Hashable, Sendable {
        /// The label between `BEGIN ` and the dashes, such as `CERTIFICATE` or `PRIVATE KEY`.
        package var label: String
        /// The decoded bytes (DER).
        package var contents: Data

        package init(label: String, contents: Data) {
            self.label = label
            self.contents = contents
        }
    }

    /// Why text is not PEM.
    package struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// What was wrong, naming the block's label and line.
        package var message: String

        package var description: String { message }
    }

    /// The blocks of `text`, in order.
    ///
    /// - Parameter text: PEM text; line ends may be LF or CRLF.
    /// - Returns: The blocks; empty when there are none.
    /// - Throws: ``Failure`` for a malformed block.
    package static func blocks(in text: String) throws(Failure) -> [Block] {
        var blocks: [Block] = []
        var open: (label: String, line: Int, base64: String)?
        // Split at every line end: "\r\n" is one `Character`, so splitting at "\n" alone would miss it.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            let lineNumber = index + 1
            if let begin = label(of: line, marker: "BEGIN") {
                if let block = open {
                    throw Failure(message: "the \(block.label) block of line \(block.line) has no END line")
                }
                open = (begin, lineNumber, "")
            } else if let end = label(of: line, marker: "END") {
                guard let block = open else { throw Failure(message: "line \(lineNumber) ends a block never begun") }
                guard end == block.label else {
                    throw Failure(message: "the \(block.label) block of line \(block.line) ends as \(end)")
                }
                guard let contents = Data(base64Encoded: block.base64), !contents.isEmpty else {
                    throw Failure(message: "the \(block.label) block of line \(block.line) is not valid base64")
                }
                blocks.append(Block(label: block.label, contents: contents))
                open = nil
            } else if open != nil {
                guard !line.contains(":") else {
                    throw Failure(
                        message: """
                            the \(open?.label ?? "") block of line \(open?.line ?? 0) has header lines \
                            (an encrypted key?), which are not supported
                            """)
                }
                open?.base64 += line
            }
        }
        if let block = open { throw Failure(message: "the \(block.label) block of line \(block.line) has no END line") }
        return blocks
    }

    /// The label of a `-----BEGIN LABEL-----` or `-----END LABEL-----` line, or `nil` for any other line.
    private static func label(of line: String, marker: String) -> String? {
        let prefix = "-----\(marker) "
        let suffix = "-----"
        guard line.hasPrefix(prefix), line.hasSuffix(suffix), line.count >= prefix.count + suffix.count else {
            return nil
        }
        return String(line.dropFirst(prefix.count).dropLast(suffix.count))
    }
}

public import Foundation

/// Reads the `swift` code blocks of DocC articles, so a test can check that every sample of an article is
/// also in the test file that compiles and runs it.
///
/// Comparison is by whole lines, ignoring indentation, blank lines, `import` lines and a leading `private`,
/// `fileprivate` or `package` (samples at file scope in a test file are often private so they cannot clash; those
/// shared by test targets are `package`).
public enum DocumentationSamples {
    /// The contents of each code block fenced with ```swift.
    public static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if let lines = current, trimmed == "```" {
                blocks.append(lines.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The code's lines, normalized as described above, between newlines so that only whole lines match.
    public static func normalized(_ code: String) -> String {
        let lines = code.split(separator: "\n").compactMap { line -> String? in
            var text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("import ") { return nil }
            for prefix in ["private ", "fileprivate ", "package "] where text.hasPrefix(prefix) {
                text.removeFirst(prefix.count)
            }
            return text
        }
        return "\n" + lines.joined(separator: "\n") + "\n"
    }

    /// The samples of `article` that do not appear in `testFile`.
    ///
    /// - Parameters:
    ///   - article: The article's path.
    ///   - testFile: The path of the test file that should contain every sample (pass `#filePath`).
    public static func samplesMissing(from testFile: String, article: URL) throws -> [String] {
        let markdown = try String(contentsOf: article, encoding: .utf8)
        let source = normalized(try String(contentsOf: URL(fileURLWithPath: testFile), encoding: .utf8))
        return swiftBlocks(in: markdown).filter { !source.contains(normalized($0)) }
    }

    /// The DocC catalog of `module`, found from a test file's path (`Tests/<Target>/<File>.swift`).
    public static func catalog(of module: String, fromTestFile testFile: String) -> URL {
        URL(fileURLWithPath: testFile).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/\(module)/\(module).docc")
    }
}

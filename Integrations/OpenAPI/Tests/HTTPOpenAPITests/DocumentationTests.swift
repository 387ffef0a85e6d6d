import Foundation
import HTTP
import HTTPAuth
import HTTPOpenAPI
import OpenAPIRuntime
import Testing

/// Every `swift` block of the DocC articles is compiled in this file or in the sample files beside it; these tests
/// fail when an article's sample and the compiled copy drift apart.
@Suite(.timeLimit(.minutes(1)))
struct DocumentationTests {
    static let catalog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Sources/HTTPOpenAPI/HTTPOpenAPI.docc")
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    @Test func theLandingPagesSamplesAreCompiled() throws {
        let missing = try DocumentationSamples.samplesMissing(
            from: [Self.folder.appending(path: "DocumentationTests.swift")],
            article: Self.catalog.appending(path: "HTTPOpenAPI.md"))
        #expect(missing.isEmpty, "not compiled by a test: \(missing)")
    }

    @Test func theMiddlewareArticlesSamplesAreCompiled() throws {
        let missing = try DocumentationSamples.samplesMissing(
            from: [
                Self.folder.appending(path: "MiddlewareSample.swift"),
                Self.folder.appending(path: "LoaderSample.swift"),
            ],
            article: Self.catalog.appending(path: "MiddlewareAndLoaders.md"))
        #expect(missing.isEmpty, "not compiled by a test: \(missing)")
    }

    @Test func theLandingPagesErrorSampleSeesTheChainsError() async throws {
        let offline = Box(false)
        let client = Client(
            serverURL: URL(string: "https://api.example.com")!,
            transport: LoaderTransport(loader: MockLoader().then(failWith: .cannotConnect)))

        try await withDeadline {
            try await landingPageErrorSample(client: client) { offline.withLock { $0 = true } }
        }

        #expect(offline.value)
    }
}

// MARK: - HTTPOpenAPI.md

/// The landing page's first sample.
private func landingPageSample(oauth: OAuth) async throws -> Client {
    let chain =
        Auth(loaders: [.oauth: oauth]) --> Retry() --> Throttle(maximumNumberOfRequests: 6) --> URLSessionLoader()

    let client = Client(serverURL: try Servers.Server1.url(), transport: LoaderTransport(loader: chain))
    let echo = try await client.getAnything(query: .init(q: "Zoë")).ok.body.json
    _ = echo
    return client
}

/// The landing page's second sample.
private func landingPageErrorSample(client: Client, showOfflineBanner: () -> Void) async throws {
    do {
        _ = try await client.getAnything()
    } catch let error as ClientError {
        if let failure = error.underlyingError as? HTTPError, failure.code == .cannotConnect { showOfflineBanner() }
    }
}

// MARK: - A small copy of the product's DocumentationSamples (Tests/HTTPTestSupport, which this package cannot link)

enum DocumentationSamples {
    /// The contents of each code block fenced with ```swift.
    static func swiftBlocks(in markdown: String) -> [String] {
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

    /// The code's lines without indentation, blank lines, `import` lines and a leading `private`, between newlines
    /// so that only whole lines match.
    static func normalized(_ code: String) -> String {
        let lines = code.split(separator: "\n").compactMap { line -> String? in
            var text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("import ") { return nil }
            if text.hasPrefix("private ") { text.removeFirst("private ".count) }
            return text
        }
        return "\n" + lines.joined(separator: "\n") + "\n"
    }

    /// The samples of `article` that appear in none of `files`.
    static func samplesMissing(from files: [URL], article: URL) throws -> [String] {
        let markdown = try String(contentsOf: article, encoding: .utf8)
        let sources = try files.map { normalized(try String(contentsOf: $0, encoding: .utf8)) }
        return swiftBlocks(in: markdown).filter { block in !sources.contains { $0.contains(normalized(block)) } }
    }
}

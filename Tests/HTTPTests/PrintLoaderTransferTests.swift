import Foundation
@_spi(Transport) import HTTP
import HTTPTestSupport
import Testing

/// What PrintLoader says about bodies that do not arrive in memory: a streamed body's size when it ends (complete, cut
/// off or cancelled), and a download's size and destination — never "0 bytes" at the head.
@Suite(.noHang) struct PrintLoaderTransferTests {
    static let request = HTTPRequest(host: "api.example.com", path: "/export")

    /// A body the test feeds by hand, and whether its transfer was cancelled.
    /// The transport's side of a streamed body. It holds the stream weakly, as the transports do, so that a consumer
    /// that drops the stream ends it.
    final class Feed: Sendable {
        private let held: Box<WeakStream>
        private let cancels = Box(0)
        var cancelCount: Int { cancels.value }

        struct WeakStream: @unchecked Sendable {  // Sendable: read and written under the box's lock
            weak var stream: HTTPBodyStream?
        }

        init(_ stream: HTTPBodyStream) {
            held = Box(WeakStream(stream: stream))
            stream.connect(cancel: { [cancels] in cancels.withLock { $0 += 1 } }, pause: nil)
        }

        /// The stream, while its consumer holds it.
        var stream: HTTPBodyStream {
            get throws { try #require(held.value.stream, "the consumer dropped the stream") }
        }
    }

    /// A chain `PrintLoader --> MockLoader` whose one response streams the feed's body.
    private func chain(_ sink: LineSink, feed: Box<Feed?>) -> PrintLoader {
        PrintLoader(sink: sink.write)
            --> MockLoader().then { request in
                let stream = HTTPBodyStream(request: request, bufferLimit: 4_096)
                feed.withLock { $0 = Feed(stream) }
                var response = HTTPResponse(request: request, status: .ok)
                response.bodyStream = stream
                return .success(response)
            }
    }

    /// The number a size such as `"1.2 MB"` stands for.
    static func bytes(in size: Substring) -> Double? {
        let parts = size.split(separator: " ")
        guard parts.count == 2, let number = Double(parts[0]) else { return nil }
        let unit: Double? = ["bytes": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9][String(parts[1])]
        return unit.map { number * $0 }
    }

    @Test func aStreamedBodyIsReportedWithItsSizeWhenItEnds() async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        for round in 0..<6 {
            let context = "seed \(seed), round \(round)"
            // Sizes from nothing to a few megabytes, in chunks of random sizes.
            let total = [
                0, Int.random(in: 1..<1_000, using: &random), Int.random(in: 1_000..<3_000_000, using: &random),
            ][
                round % 3]
            let sink = LineSink()
            let feed = Box<Feed?>(nil)
            let streamed = try await chain(sink, feed: feed).stream(Self.request).get()
            let tag = try #require(sink.all.first?.split(separator: " ").dropFirst().first)
            #expect(sink.all.count == 2, "\(sink.all), \(context)")
            #expect(sink.all.last?.contains(" · streaming · ") == true, "\(sink.all), \(context)")
            #expect(sink.all.last?.contains("0 bytes") == false, "\(sink.all), \(context)")

            let producer = try #require(feed.value)
            let reading = Task { try await streamed.body.collect().count }
            var sent = 0
            while sent < total {
                let size = min(total - sent, Int.random(in: 1...200_000, using: &random))
                try producer.stream.deliver(Data(count: size))
                sent += size
            }
            try producer.stream.finish()
            #expect(try await reading.finished() == total, "\(context)")
            try await eventually("\(sink.all)") { sink.all.count == 3 }
            let end = try #require(sink.all.last)
            let prefix = "⇣ \(tag) 200 OK GET https://api.example.com/export · streamed "
            #expect(end.hasPrefix(prefix), "\(end), \(context)")
            let size = try #require(end.dropFirst(prefix.count).split(separator: " in ").first)
            let reported = try #require(Self.bytes(in: size), "\(end)")
            // Rounded to one decimal of its unit: within 5% (exact below a kilobyte).
            #expect(abs(reported - Double(total)) <= (total < 1_000 ? 0 : Double(total) * 0.05), "\(end), \(context)")
        }
    }

    @Test func aBodyCutOffHalfWaySaysHowMuchArrivedAndWhy() async throws {
        let sink = LineSink()
        let feed = Box<Feed?>(nil)
        let streamed = try await chain(sink, feed: feed).stream(Self.request).get()
        let producer = try #require(feed.value)
        try producer.stream.deliver(Data(count: 1_500))
        try producer.stream.finish(
            throwing: HTTPError(.cannotConnect, request: Self.request, message: "connection lost"))
        let error = await #expect(throws: HTTPError.self) { _ = try await streamed.body.collect() }
        #expect(error?.code == .cannotConnect)
        try await eventually("\(sink.all)") { sink.all.count == 3 }
        let end = try #require(sink.all.last)
        #expect(end.hasPrefix("✕ "), "\(end)")
        #expect(end.contains(" cannotConnect GET https://api.example.com/export · streamed 1.5 KB in "), "\(end)")
        #expect(end.hasSuffix(", then failed — connection lost"), "\(end)")
    }

    @Test func aBodyItsReaderCancelsIsReportedAsCancelledAndStopsTheTransferOnce() async throws {
        let sink = LineSink()
        let feed = Box<Feed?>(nil)
        let streamed = try await chain(sink, feed: feed).stream(Self.request).get()
        let producer = try #require(feed.value)
        try producer.stream.deliver(Data(count: 700))
        var chunks = streamed.body.makeAsyncIterator()
        #expect(try await chunks.next()?.count == 700)
        streamed.body.cancel()
        try await eventually("\(sink.all)") { sink.all.count == 3 }
        #expect(sink.all.last?.contains(" · stream cancelled after 700 bytes in ") == true, "\(sink.all)")
        #expect(producer.cancelCount == 1)
    }

    @Test func droppingTheStreamStopsTheTransfer() async throws {
        let sink = LineSink()
        let feed = Box<Feed?>(nil)
        let chain = chain(sink, feed: feed)
        do {
            let streamed = try await chain.stream(Self.request).get()
            #expect(streamed.head.status == .ok)
        }
        let producer = try #require(feed.value)
        try await eventually("\(producer.cancelCount) cancels") { producer.cancelCount == 1 }
        try await eventually("\(sink.all)") { sink.all.count == 3 }
        #expect(sink.all.last?.contains("stream cancelled") == true, "\(sink.all)")
    }

    @Test func theBodyKeepsBackpressureAndTheOrderOfTheBytes() async throws {
        let sink = LineSink()
        let feed = Box<Feed?>(nil)
        let streamed = try await chain(sink, feed: feed).stream(Self.request).get()
        let producer = try #require(feed.value)
        // 64 chunks of 1 KiB, numbered, while nobody reads: PrintLoader passes the body on as it is, and the stream
        // holds its 4 KiB in memory (this transport cannot pause, so the rest goes to the spill file).
        let sent = (0..<64).map { Data(repeating: UInt8($0), count: 1_024) }
        for chunk in sent { try producer.stream.deliver(chunk) }
        try producer.stream.finish()
        try await eventually("\(streamed.body.bufferedByteCount) held") { streamed.body.bufferedByteCount > 4_096 }
        #expect(streamed.body.bufferedByteCount <= 4_096 + 1_024)
        #expect(try await streamed.body.collect() == sent.reduce(Data(), +))
    }

    @Test func aDownloadIsReportedWithTheFilesSizeAndDestination() async throws {
        let folder = TemporaryDirectory()
        let sink = LineSink()
        let mock = MockLoader().then(status: .ok, body: Data(count: 5_000_000))
        let destination = folder.file("42.mp4")
        let response = try await (PrintLoader(sink: sink.write) --> mock).download(Self.request, to: destination).get()
        #expect(response.fileURL == destination)
        let line = try #require(sink.all.last)
        #expect(
            line.contains(" 200 OK GET https://api.example.com/export · saved 5.0 MB to \(destination.path) · "),
            "\(line)")
    }
}

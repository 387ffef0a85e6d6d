import Foundation
import HTTP
import HTTPTestSupport
import Testing

/// `HTTPBodySource.chunks(ofSize:)`: every byte in order, read only as the consumer asks.
@Suite(.noHang) struct HTTPBodySourceTests {
    @Test func chunksHoldEveryByteInOrderAcrossSources() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "http-source-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "part.bin")
        let fileBytes = Data((0..<10_000).map { UInt8($0 % 251) })
        try fileBytes.write(to: file)
        let sequence = AsyncStream<Data> { continuation in
            continuation.yield(Data("abc".utf8))
            continuation.yield(Data())
            continuation.yield(Data("def".utf8))
            continuation.finish()
        }
        let source = HTTPBodySource.concatenating([
            .data(Data(repeating: 1, count: 2_500)), try .file(file), .chunks(sequence), .data(Data()),
        ])
        var collected = Data()
        var largest = 0
        for try await chunk in source.chunks(ofSize: 1_000) {
            collected.append(chunk)
            largest = max(largest, chunk.count)
        }
        #expect(collected == Data(repeating: 1, count: 2_500) + fileBytes + Data("abcdef".utf8))
        #expect(largest == 1_000)
    }

    @Test func nothingIsReadAheadOfTheConsumer() async throws {
        // A sequence that counts what was taken from it: the reader must not run ahead of its consumer.
        let taken = Box(0)
        let endless = AsyncStream<Data>(unfolding: {
            taken.withLock { $0 += 1 }
            return Data(count: 64 * 1024)
        })
        var iterator = HTTPBodySource.chunks(endless).chunks().makeAsyncIterator()
        for _ in 0..<3 { _ = try await iterator.next() }
        #expect(taken.value == 3, "read \(taken.value) chunks for a consumer that took 3")
    }
}

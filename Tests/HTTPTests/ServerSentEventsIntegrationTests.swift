import Foundation
import HTTP
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Server-Sent Events over `URLSessionLoader` against a real event-stream server nobody here wrote (sse-starlette under
/// uvicorn, started by `scripts/servers.sh`): its encoding, its connections that end, and resuming from
/// `Last-Event-ID` until it answers 204.
@Suite(.noHang, .enabled(if: TestServers.eventStream != nil, "needs EVENT_STREAM_URL: run through scripts/test.sh"))
struct ServerSentEventsIntegrationTests {
    let base = TestServers.eventStream!

    private func request(_ query: String) -> HTTPRequest {
        HTTPRequest(url: URL(string: "\(base.absoluteString)/numbers?\(query)")!)
    }

    private struct Number: Decodable, Equatable {
        var n: Int
    }

    /// 7 events, the connection ended after every 3: three connections, resumed from the last ID, then the 204.
    @Test(arguments: ["crlf", "lf", "cr"])
    func everyEventArrivesOnceAcrossReconnections(separator: String) async throws {
        let loader = URLSessionLoader()
        let events = loader.events(
            for: request("count=7&close_after=3&retry=5&sep=\(separator)&comment=1"), reconnectionDelay: .seconds(30))
        var received: [ServerSentEvent] = []
        var iterator = events.makeAsyncIterator()
        while let event = try await iterator.next() { received.append(event) }
        #expect(received.map(\.type) == Array(repeating: "number", count: 7))
        #expect(received.map(\.lastEventID) == (1...7).map(String.init))
        let numbers = try received.map { try JSONDecoder().decode(Number.self, from: Data($0.data.utf8)).n }
        #expect(numbers == Array(1...7))
        #expect(iterator.connectionCount == 4, "three streams and the 204")
    }

    @Test func stoppingTheIterationStopsTheStream() async throws {
        let loader = URLSessionLoader()
        var count = 0
        for try await _ in loader.events(for: request("count=1000&retry=5")) {
            count += 1
            if count == 3 { break }
        }
        #expect(count == 3)
    }
}

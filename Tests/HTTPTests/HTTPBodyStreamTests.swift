import Foundation
import HTTPTestSupport
import Testing

@_spi(Transport) @testable import HTTP

/// The stream's producer side as a transport drives it.
@Suite(.noHang) struct HTTPBodyStreamTests {
    /// A transport that does exactly what the pause closure says: it reads while not paused, and records each call.
    final class FaithfulTransport: @unchecked Sendable {
        private let lock = NSLock()
        private var paused = false
        private var calls: [Bool] = []

        func setPaused(_ value: Bool) {
            lock.withLock {
                paused = value
                calls.append(value)
            }
        }

        var isPaused: Bool { lock.withLock { paused } }
        var recordedCalls: [Bool] { lock.withLock { calls } }
    }

    /// A deliver that pauses and a read that resumes decide in turn; their calls must reach the transport in that
    /// order, or it stays paused with nothing buffered and the stream waits forever. Many short streams, a producer
    /// thread that honours every call and a consumer task racing it: every stream completes, the calls alternate
    /// (pause, resume, pause, …), and the transport is left reading.
    @Test func pauseAndResumeReachTheTransportInTheOrderTheyWereDecided() async throws {
        for round in 0..<200 {
            let stream = HTTPBodyStream(request: HTTPRequest(host: "example.com"), bufferLimit: 64)
            let transport = FaithfulTransport()
            stream.connect(cancel: {}, pause: { transport.setPaused($0) })
            let producer = Thread {
                var sent = 0
                while sent < 64 * 40 {
                    if transport.isPaused {
                        usleep(50)
                        continue
                    }
                    stream.deliver(Data(repeating: UInt8(truncatingIfNeeded: sent), count: 32))
                    sent += 32
                }
                stream.finish()
            }
            producer.start()
            let received = await withDeadline(seconds: 60, "round \(round): calls \(transport.recordedCalls)") {
                var count = 0
                do {
                    for try await chunk in stream { count += chunk.count }
                } catch {
                    return -1
                }
                return count
            }
            #expect(received == 64 * 40, "round \(round)")
            let calls = transport.recordedCalls
            for (index, call) in calls.enumerated() {
                #expect(call == (index % 2 == 0), "round \(round): calls out of order: \(calls)")
            }
            if received != 64 * 40 { return }
        }
    }
}

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

    /// A consumer thread can be descheduled between the two calls of one resume (the transport resumed, the
    /// producer fills the buffer again before the consumer's loop makes its next call). A deliver that decides to
    /// pause meanwhile returns only when the transport has been told, so a transport that reads on until told
    /// never holds much more than the limit. Here the resume call itself stalls for 50 ms after the transport
    /// resumed reading; the producer must still stop within one chunk of the limit.
    @Test func aDeliverThatPausesReturnsOnlyOnceTheTransportIsPaused() async throws {
        let limit = 4096
        let chunk = 256
        let total = limit * 12
        let stream = HTTPBodyStream(request: HTTPRequest(host: "example.com"), bufferLimit: limit)
        let transport = FaithfulTransport()
        stream.connect(cancel: {}) { paused in
            transport.setPaused(paused)
            if !paused { usleep(50_000) }  // the consumer's thread, descheduled after the transport resumed
        }
        let largest = Locked(0)
        let producer = Thread {
            var sent = 0
            while sent < total {
                if transport.isPaused {
                    usleep(100)
                    continue
                }
                stream.deliver(Data(count: chunk))
                sent += chunk
                let buffered = stream.bufferedByteCount
                largest.withLock { $0 = max($0, buffered) }
            }
            stream.finish()
        }
        producer.start()
        let received = await withDeadline(seconds: 60, "calls \(transport.recordedCalls)") {
            var count = 0
            do {
                for try await data in stream {
                    count += data.count
                    try? await Task.sleep(for: .milliseconds(1))
                }
            } catch {
                return -1
            }
            return count
        }
        #expect(received == total)
        #expect(transport.recordedCalls.count >= 4, "the transfer paused and resumed: \(transport.recordedCalls)")
        #expect(largest.withLock { $0 } <= limit + chunk, "the producer ran on past the limit while unpaused")
    }

    /// A transport that reads on at once when it is resumed delivers from inside the resume call, on the consumer's
    /// thread: that deliver must not wait for the loop it is nested in (a deadlock), and the loop must still pause
    /// the transport when the nested deliveries fill the buffer again.
    @Test func aDeliverFromInsideTheResumeCallDoesNotWaitForItself() async throws {
        let limit = 1000
        let stream = HTTPBodyStream(request: HTTPRequest(host: "example.com"), bufferLimit: limit)
        let transport = FaithfulTransport()
        let sent = Locked(0)
        let total = limit * 20
        stream.connect(cancel: {}) { paused in
            transport.setPaused(paused)
            guard !paused else { return }
            // Read on until told to pause, delivering synchronously from inside this call.
            while !transport.isPaused {
                let more = sent.withLock { sent -> Bool in
                    guard sent < total else { return false }
                    sent += 100
                    return true
                }
                guard more else {
                    stream.finish()
                    return
                }
                stream.deliver(Data(count: 100))
            }
        }
        // The first fill, from the test's thread, until the stream pauses the transport.
        while !transport.isPaused, sent.withLock({ $0 }) < total {
            sent.withLock { $0 += 100 }
            stream.deliver(Data(count: 100))
        }
        let received = await withDeadline(seconds: 60, "calls \(transport.recordedCalls)") {
            var count = 0
            do {
                for try await data in stream { count += data.count }
            } catch {
                return -1
            }
            return count
        }
        #expect(received == total)
        let calls = transport.recordedCalls
        #expect(calls.count >= 4, "paused and resumed more than once: \(calls)")
        for (index, call) in calls.enumerated() {
            #expect(call == (index % 2 == 0), "calls out of order: \(calls)")
        }
    }
}

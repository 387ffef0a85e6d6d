import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

@Suite(.noHang) struct HTTPMetricsTests {
    private let start = ContinuousClock.now

    private func metrics(
        attempt: Int = 1, sent: Duration? = nil, head: Duration? = nil, end: Duration = .milliseconds(41.7)
    ) -> HTTPMetrics {
        var metrics = HTTPMetrics(
            attemptNumber: attempt, startDate: Date(timeIntervalSince1970: 1_800_000_000), start: start)
        metrics.requestSent = sent.map { start + $0 }
        metrics.responseHeadReceived = head.map { start + $0 }
        metrics.end = start + end
        return metrics
    }

    /// Whether `instant` is within a microsecond of `expected`: a `Date` near 2027 is precise to about 0.2 µs.
    private func isClose(_ instant: ContinuousClock.Instant?, _ expected: ContinuousClock.Instant) -> Bool {
        guard let instant else { return false }
        return abs((instant - expected) / .nanoseconds(1)) < 1_000
    }

    @Test func durationsComeFromTheInstants() {
        let measured = metrics(sent: .milliseconds(0.3), head: .milliseconds(12))
        #expect(measured.duration == .milliseconds(41.7))
        #expect(measured.timeToResponseHead == .milliseconds(12))
        #expect(metrics().timeToResponseHead == nil)
        #expect(HTTPMetrics(startingNowFor: HTTPRequest()).duration == .zero)
    }

    @Test func everyInstantReadsBackAsItWasSet() {
        let seed = SplitMix64.seed()
        print("everyInstantReadsBackAsItWasSet: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        // Instants long before and after the process started, to the attosecond.
        for _ in 0..<200 {
            let offsets = (0..<4).map { _ in
                Duration(
                    secondsComponent: Int64.random(in: -4_000_000_000...4_000_000_000, using: &random),
                    attosecondsComponent: Int64.random(in: 0..<1_000_000_000_000_000_000, using: &random))
            }
            var measured = HTTPMetrics(startDate: Date(), start: start + offsets[0])
            measured.requestSent = start + offsets[1]
            measured.responseHeadReceived = start + offsets[2]
            measured.end = start + offsets[3]
            #expect(measured.start == start + offsets[0], "seed \(seed)")
            #expect(measured.requestSent == start + offsets[1], "seed \(seed)")
            #expect(measured.responseHeadReceived == start + offsets[2], "seed \(seed)")
            #expect(measured.end == start + offsets[3], "seed \(seed)")
            #expect(measured.duration == offsets[3] - offsets[0], "seed \(seed)")
            #expect(measured.timeToResponseHead == offsets[2] - offsets[0], "seed \(seed)")
        }
        var unset = HTTPMetrics(startDate: Date(), start: start)
        #expect(unset.requestSent == nil && unset.responseHeadReceived == nil)
        unset.requestSent = start
        unset.requestSent = nil
        #expect(unset.requestSent == nil)
    }

    @Test func metricsAreAttachedToAResultWithoutCopyingItsResponseOrError() throws {
        let measured = metrics()
        let response = HTTPResponse(request: HTTPRequest(), status: .ok, headers: HTTPHeaders(), body: Data("{}".utf8))
        let responseStorage = response.storageIdentifier
        let withMetrics = try HTTPResult.attaching(measured, to: .success(consume response)).get()
        #expect(withMetrics.metrics?.duration == measured.duration)
        #expect(withMetrics.storageIdentifier == responseStorage)

        let error = HTTPError(.timedOut, request: HTTPRequest())
        let errorStorage = error.storageIdentifier
        let result = HTTPResult.attaching(measured, to: .failure(consume error))
        guard case .failure(let failed) = result else {
            Issue.record("the error became \(result)")
            return
        }
        #expect(failed.metrics?.duration == measured.duration)
        #expect(failed.storageIdentifier == errorStorage)

        // What the check tells apart: a response still shared is copied before it changes.
        let shared = HTTPResponse(request: HTTPRequest(), status: .ok, headers: HTTPHeaders(), body: Data())
        let copied = try HTTPResult.attaching(measured, to: .success(shared)).get()
        #expect(copied.storageIdentifier != shared.storageIdentifier)
        #expect(shared.metrics == nil)
    }

    @Test func wallClockTimesAndInstantsConvertBothWays() {
        let measured = metrics()
        let date = measured.date(at: start + .milliseconds(1_500))
        #expect(date == Date(timeIntervalSince1970: 1_800_000_001.5))
        #expect(measured.instant(at: date) == start + .milliseconds(1_500))
        // Dates from a transport are never trusted to be sane: none of these traps.
        for date in [
            Date.distantPast, .distantFuture, Date(timeIntervalSince1970: .nan), Date(timeIntervalSince1970: .infinity),
        ] {
            _ = measured.instant(at: date)
        }
        #expect(measured.instant(at: .distantFuture) == start + .century)
    }

    @Test func descriptionsShowTheSplitAndTheBytes() {
        var measured = metrics(attempt: 2, sent: .milliseconds(0.3), head: .milliseconds(12))
        measured.requestBodyBytesSent = 12
        measured.responseBodyBytesReceived = 213
        #expect(measured.description == "attempt 2: 41.7 ms (sent 0.3 ms, head 12.0 ms), 12 bytes up, 213 down")
        measured.redirects = [.init(url: URL(string: "https://a.example/x"), status: .found, location: nil)]
        #expect(measured.description.hasSuffix(", 213 down, 1 redirect"))
        #expect(metrics(end: .milliseconds(2_345)).description == "attempt 1: 2.35 s, 0 bytes up, 0 down")
    }

    @Test func responsesKeepTheirMetricsAndCopiesShareThem() {
        var response = HTTPResponse(request: HTTPRequest(host: "example.com"), status: .ok)
        #expect(response.metrics == nil)
        response.metrics = metrics(head: .milliseconds(12))
        let copy = response
        var changed = response
        changed.status = .accepted  // a copy of the storage: the metrics go with it
        #expect(copy.metrics?.timeToResponseHead == .milliseconds(12))
        #expect(changed.metrics?.timeToResponseHead == .milliseconds(12))
        changed.metrics = nil
        #expect(response.metrics != nil && changed.metrics == nil)
    }

    @Test func errorsKeepTheirMetrics() {
        var error = HTTPError(.timedOut, request: HTTPRequest(host: "example.com"))
        #expect(error.metrics == nil)
        error.metrics = metrics(head: .milliseconds(12))
        let copy = error
        error.message = "stalled after the head"
        #expect(error.metrics?.timeToResponseHead == .milliseconds(12))
        #expect(copy.metrics?.timeToResponseHead == .milliseconds(12))
    }

    @Test func mockLoaderMeasuresEachHandlersRunUnlessItMeasuredItself() async throws {
        let own = metrics(head: .milliseconds(12))
        let mock = MockLoader()
            .then(status: .ok, body: Data(count: 213))
            .then { request in
                var response = HTTPResponse(request: request, status: .ok)
                response.metrics = own
                return .success(response)
            }
            .then(failWith: .cannotConnect)
        let before = ContinuousClock.now
        let first = try #require(await mock.load(HTTPRequest(host: "example.com")).response?.metrics)
        #expect(first.responseBodyBytesReceived == 213 && first.attemptNumber == 1)
        #expect(before <= first.start && first.start <= first.end && first.end <= .now)
        #expect(first.requestSent == nil && first.responseHeadReceived == nil)
        #expect(await mock.load(HTTPRequest(host: "example.com")).response?.metrics?.start == start)
        let failed = await mock.load(HTTPRequest(host: "example.com"))
        #expect(failed.error?.metrics != nil)
    }

    @Test func urlSessionTransactionsFillWhatTheTerminalDidNotMeasure() {
        var measured = metrics()
        let base = measured.startDate
        measured.record([
            .init(
                requestEnd: base + 0.010, responseStart: base + 0.020, requestHeaderBytes: 120, requestBodyBytes: 5,
                responseHeaderBytes: 200, responseBodyBytes: 0),
            .init(
                requestEnd: base + 0.030, responseStart: base + 0.040, requestHeaderBytes: 130, requestBodyBytes: 5,
                responseHeaderBytes: 210, responseBodyBytes: 180),
        ])
        // The last hop's times (to within a `Date`'s precision); the bytes of every hop.
        #expect(isClose(measured.requestSent, start + .milliseconds(30)))
        #expect(isClose(measured.responseHeadReceived, start + .milliseconds(40)))
        #expect(measured.requestHeaderBytesSent == 250 && measured.requestBodyBytesSent == 10)
        #expect(measured.responseHeaderBytesReceived == 410 && measured.encodedResponseBodyBytesReceived == 180)

        // The terminal's own observations win; counts never overflow, negative (unknown) ones are skipped.
        var observed = metrics(head: .milliseconds(5))
        observed.record([
            .init(
                requestEnd: nil, responseStart: base + 0.040, requestHeaderBytes: -1, requestBodyBytes: .max,
                responseHeaderBytes: .max, responseBodyBytes: 1),
            .init(
                requestEnd: nil, responseStart: nil, requestHeaderBytes: -1, requestBodyBytes: .max,
                responseHeaderBytes: 1, responseBodyBytes: -5),
        ])
        #expect(observed.responseHeadReceived == start + .milliseconds(5) && observed.requestSent == nil)
        #expect(observed.requestHeaderBytesSent == 0 && observed.requestBodyBytesSent == .max)
        #expect(observed.responseHeaderBytesReceived == .max && observed.encodedResponseBodyBytesReceived == 1)

        var untouched = metrics()
        untouched.record([])
        #expect(untouched.requestHeaderBytesSent == nil && untouched.taskMetrics == nil)
    }
}

import Foundation
@_spi(Transport) import HTTP
import HTTPTestSupport
import Testing

/// Progress reports over MockLoader (the transport's are tested against nginx in TransferIntegrationTests), and
/// `reportingProgress(_:to:)`, whose stream must finish however the transfer ends.
@Suite(.noHang) struct ProgressTests {
    private func recording(_ request: HTTPRequest) -> (HTTPRequest, Locked<[HTTPProgress]>) {
        let reports = Locked<[HTTPProgress]>([])
        var copy = request
        copy.progressHandler = { progress in reports.withLock { $0.append(progress) } }
        return (copy, reports)
    }

    @Test func aMockLoaderReportsTheBodySentAndTheResponseReceived() async throws {
        let (request, reports) = recording(
            HTTPRequest(method: .post, host: "api.example.com", path: "/upload", body: DataBody(Data(count: 1_000))))
        let mock = MockLoader().then(status: .ok, headers: ["Content-Length": "250"], body: Data(count: 250))
        _ = try await mock.load(request).get()
        let last = try #require(reports.value.last)
        #expect(
            last
                == HTTPProgress(bytesSent: 1_000, totalBytesToSend: 1_000, bytesReceived: 250, totalBytesToReceive: 250)
        )
        #expect(last.fractionCompleted == 1)
    }

    @Test func aResponseWithoutContentLengthHasItsTotalOnlyInTheFinalReport() async throws {
        let (request, reports) = recording(HTTPRequest(host: "api.example.com", path: "/chunked"))
        _ = try await MockLoader().then(status: .ok, body: Data(count: 70)).load(request).get()
        #expect(reports.value.first?.totalBytesToReceive == nil)
        #expect(reports.value.last?.totalBytesToReceive == 70)
        #expect(reports.value.last?.bytesReceived == 70)
    }

    @Test func aResumedDownloadCountsWhatIsOnDiskAndTheWholeFileAsItsTotal() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("part")
        try Data(count: 100).write(to: file)
        var request = HTTPRequest(host: "api.example.com", path: "/file")
        request.responseDelivery = .file(file, resumingAt: 100)
        let (resumed, reports) = recording(request)
        let mock = MockLoader().then(
            status: .partialContent, headers: ["Content-Range": "bytes 100-399/400", "Content-Length": "300"],
            body: Data(count: 300))
        _ = try await mock.load(resumed).get()
        let seen = reports.value
        #expect(seen.allSatisfy { $0.bytesReceived >= 100 }, "\(seen)")
        #expect(seen.last?.bytesReceived == 400)
        #expect(seen.last?.totalBytesToReceive == 400)
        #expect(seen.last?.fractionCompleted == 1)
        #expect(try Data(contentsOf: file).count == 400)
    }

    @Test func aResumedDownloadWithoutContentRangeAddsContentLengthToWhatIsOnDisk() async throws {
        let directory = TemporaryDirectory()
        var request = HTTPRequest(host: "api.example.com", path: "/file")
        request.responseDelivery = .file(directory.file("part"), resumingAt: 50)
        let (resumed, reports) = recording(request)
        let mock = MockLoader().then(
            status: .partialContent, headers: ["Content-Length": "150"], body: Data(count: 150))
        _ = try await mock.load(resumed).get()
        #expect(reports.value.last.map { [$0.bytesReceived, $0.totalBytesToReceive] } == [200, 200])
    }

    @Test func aWholeEntityAnsweringAResumptionStartsTheCountOver() async throws {
        let directory = TemporaryDirectory()
        var request = HTTPRequest(host: "api.example.com", path: "/file")
        request.responseDelivery = .file(directory.file("part"), resumingAt: 100)
        let (resumed, reports) = recording(request)
        let mock = MockLoader().then(status: .ok, headers: ["Content-Length": "60"], body: Data(count: 60))
        _ = try await mock.load(resumed).get()
        #expect(reports.value.last.map { [$0.bytesReceived, $0.totalBytesToReceive] } == [60, 60])
    }

    @Test func aOneShotBodyIsNotUsedUpToMeasureIt() async throws {
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("abc".utf8))
            continuation.finish()
        }
        let (request, reports) = recording(
            HTTPRequest(method: .post, host: "api.example.com", path: "/events", body: StreamBody(chunks)))
        let received = Locked(Data())
        let mock = MockLoader().then { request in
            do {
                for try await chunk in try request.body.makeSource().chunks() { received.withLock { $0.append(chunk) } }
            } catch {
                return .failure(HTTPError(.unknown, request: request, underlyingError: error))
            }
            return .success(HTTPResponse(request: request, status: .ok))
        }
        _ = try await mock.load(request).get()
        #expect(received.value == Data("abc".utf8))
        #expect(reports.value.last?.totalBytesToSend == nil)
    }

    // MARK: - reportingProgress(_:to:)

    @Test func theStreamCarriesTheReportsAndEndsWithTheTransfer() async throws {
        let mock = MockLoader().then(status: .ok, headers: ["Content-Length": "5000"], body: Data(count: 5_000))
        let seen = Locked<[HTTPProgress]>([])
        let result = await HTTPRequest(host: "api.example.com", path: "/big").reportingProgress { request in
            await mock.load(request)
        } to: { progress in
            for await report in progress { seen.withLock { $0.append(report) } }
        }
        #expect(result.response?.status == .ok)
        #expect(seen.value.last.map { [$0.bytesReceived, $0.totalBytesToReceive] } == [5_000, 5_000])
    }

    /// The class of transfers that never reach a transport: no reports at all, and the stream still ends.
    @Test(arguments: ["no handler", "invalid request", "cancelled before", "refused by a breaker"])
    func theStreamEndsWhenTheTransferEndsWithoutAReport(_ how: String) async throws {
        let chain: HTTPLoader
        var request = HTTPRequest(host: "api.example.com", path: "/x")
        switch how {
        case "no handler":
            chain = MockLoader()
        case "invalid request":
            chain = URLSessionLoader()
            request.percentEncodedPath = "/a b"
        case "cancelled before":
            chain = MockLoader().then(status: .ok)
        default:
            let breaker = CircuitBreaker(
                configuration: .init(failureRateThreshold: 0.5, minimumNumberOfRequests: 1, openDuration: .seconds(60)))
            chain = breaker --> MockLoader().then(status: .serviceUnavailable).then(status: .ok)
            _ = await chain.load(request)
        }
        let reportsEnded = Locked(false)
        let work = Task {
            if how == "cancelled before" { withUnsafeCurrentTask { $0?.cancel() } }
            return await request.reportingProgress { request in
                await chain.load(request)
            } to: { progress in
                for await _ in progress {}
                reportsEnded.withLock { $0 = true }
            }
        }
        let result = try await work.finished()
        #expect(result.error != nil)
        #expect(reportsEnded.value)
    }

    @Test func cancellingTheCallerEndsTheTransferAndTheReports() async throws {
        let started = AsyncStream<Void>.makeStream()
        let mock = MockLoader().then { request in
            started.continuation.yield()
            try? await Task.sleep(for: .seconds(3_600))
            return .success(HTTPResponse(request: request, status: .ok))
        }
        let reportsEnded = Locked(false)
        let work = Task {
            await HTTPRequest(host: "api.example.com", path: "/slow").reportingProgress { request in
                await mock.load(request)
            } to: { progress in
                for await _ in progress {}
                reportsEnded.withLock { $0 = true }
            }
        }
        for await _ in started.stream { break }
        work.cancel()
        #expect(try await work.finished().error?.code == .cancelled)
        #expect(reportsEnded.value)
    }

    @Test func aHandlerTheRequestHadIsStillCalled() async throws {
        let (request, handlerReports) = recording(HTTPRequest(host: "api.example.com", path: "/x"))
        let mock = MockLoader().then(status: .ok, body: Data(count: 10))
        let streamed = Locked(0)
        _ = await request.reportingProgress { request in
            await mock.load(request)
        } to: { progress in
            for await _ in progress { streamed.withLock { $0 += 1 } }
        }
        #expect(handlerReports.value.last?.bytesReceived == 10)
        #expect(streamed.value >= 1)
    }

    @Test @MainActor func theReportsCanBeReadOnTheMainActor() async throws {
        let mock = MockLoader().then(status: .ok, body: Data(count: 10))
        var last: HTTPProgress?
        let box = Locked<HTTPProgress?>(nil)
        _ = await HTTPRequest(host: "api.example.com", path: "/x").reportingProgress { request in
            await mock.load(request)
        } to: { @MainActor progress in
            for await report in progress { box.withLock { $0 = report } }
        }
        last = box.value
        #expect(last?.bytesReceived == 10)
    }
}

/// Downloads replace what is at their destination in one step.
@Suite(.noHang) struct DownloadDestinationTests {
    @Test func aDownloadReplacesAnExistingFileEveryTime() async throws {
        let directory = TemporaryDirectory()
        let destination = directory.file("report.bin")
        try Data("the old file".utf8).write(to: destination)
        for round in 0..<40 {
            let body = Data(repeating: UInt8(round), count: 1_000 + round)
            let mock = MockLoader().then(status: .ok, body: body)
            let response = try await mock.download(HTTPRequest(host: "api.example.com", path: "/r"), to: destination)
                .get()
            #expect(response.fileURL == destination, "round \(round)")
            #expect(try Data(contentsOf: destination) == body, "round \(round)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["report.bin"])
    }

    @Test func aDestinationThatIsAFolderFailsAndKeepsTheFolder() async throws {
        let directory = TemporaryDirectory()
        let destination = directory.file("folder")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: destination.appending(path: "inside.txt"))
        let mock = MockLoader().then(status: .ok, body: Data("new".utf8))
        let result = await mock.download(HTTPRequest(host: "api.example.com", path: "/r"), to: destination)
        #expect(result.error?.message.contains("could not move the download") == true, "\(result)")
        #expect(result.error?.response?.status == .ok)
        #expect(try Data(contentsOf: destination.appending(path: "inside.txt")) == Data("keep".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["folder"])
    }
}

/// The reporter's rate: held-back changes are reported when the interval ends, reports arrive in order and one
/// at a time, and none follow the end of the transfer.
@Suite(.noHang) struct ProgressReporterTests {
    private func reporter(clock: ManualClock) -> (ProgressReporter, Locked<[HTTPProgress]>) {
        let reports = Locked<[HTTPProgress]>([])
        var request = HTTPRequest(host: "api.example.com", path: "/file")
        request.progressHandler = { progress in reports.withLock { $0.append(progress) } }
        let reporter = ProgressReporter(request: request, totalBytesToSend: nil, clock: clock)!
        return (reporter, reports)
    }

    @Test func aChangeHeldBackByTheRateIsReportedWhenTheIntervalEnds() async throws {
        let clock = ManualClock()
        let (reporter, reports) = reporter(clock: clock)
        reporter.receivedHead(status: 200, contentRange: nil, declaredLength: 1_000)
        reporter.received(100)
        reporter.received(200)  // the transfer stalls here
        #expect(reports.value.map(\.bytesReceived) == [0])
        try await clock.waitForSleepers(1)
        #expect(clock.requestedDurations == [ProgressReporter.interval])
        clock.advance(by: ProgressReporter.interval)
        try await eventually { reports.value.count == 2 }
        #expect(reports.value.map(\.bytesReceived) == [0, 300])
        #expect(!reporter.isReportScheduled)
    }

    @Test func aChangeAfterTheIntervalIsReportedAtOnceAndTheScheduledReportAddsNothing() async throws {
        let clock = ManualClock()
        let (reporter, reports) = reporter(clock: clock)
        reporter.received(1)
        reporter.received(1)
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(40))
        reporter.received(1)  // may come before or after the scheduled report: the reports end with 3 either way
        try await eventually { !reporter.isReportScheduled }
        let seen = reports.value.map(\.bytesReceived)
        #expect(seen.first == 1 && seen.last == 3 && seen.count <= 3, "\(seen)")
        #expect(seen == seen.sorted())
    }

    @Test func nothingIsReportedAfterTheTransferStops() async throws {
        let clock = ManualClock()
        let (reporter, reports) = reporter(clock: clock)
        reporter.received(10)
        reporter.received(10)
        try await clock.waitForSleepers(1)
        reporter.stop()
        clock.advance(by: ProgressReporter.interval)
        try await eventually { !reporter.isReportScheduled }
        reporter.received(10)
        reporter.complete()
        #expect(reports.value.map(\.bytesReceived) == [10])
    }

    @Test func theFinalReportComesOnceAndEndsTheReports() async throws {
        let clock = ManualClock()
        let (reporter, reports) = reporter(clock: clock)
        reporter.received(10)
        reporter.received(10)
        reporter.complete()
        reporter.complete()
        try await clock.waitForSleepers(1)
        clock.advance(by: ProgressReporter.interval)
        try await eventually { !reporter.isReportScheduled }
        #expect(reports.value.map(\.bytesReceived) == [10, 20])
        #expect(reports.value.last?.totalBytesToReceive == 20)
    }

    @Test func theFinalReportIsMadeBeforeCompleteReturnsWhileAHeldBackChangeIsBeingReported() async throws {
        let clock = ManualClock()
        let gate = DispatchSemaphore(value: 0)
        let reports = Locked<[HTTPProgress]>([])
        var request = HTTPRequest(host: "api.example.com", path: "/file")
        request.progressHandler = { progress in
            reports.withLock { $0.append(progress) }
            // The held-back report, on the scheduled task, waits; the final one (also 20 bytes, with its total) not.
            if progress.bytesReceived == 20, progress.totalBytesToReceive == nil { gate.wait() }
        }
        let reporter = try #require(ProgressReporter(request: request, totalBytesToSend: nil, clock: clock))
        reporter.received(10)
        reporter.received(10)
        try await clock.waitForSleepers(1)
        clock.advance(by: ProgressReporter.interval)
        try await eventually { reports.value.count == 2 }
        let seenWhenCompleteReturned = Locked<[Int64]?>(nil)
        Thread.detachNewThread {
            reporter.complete()
            seenWhenCompleteReturned.withLock { $0 = reports.value.map(\.bytesReceived) }
        }
        try await eventually { reporter.isWaitingForFinalReport }
        #expect(seenWhenCompleteReturned.value == nil)
        gate.signal()
        try await eventually { seenWhenCompleteReturned.value != nil }
        #expect(seenWhenCompleteReturned.value == [10, 20, 20])
        #expect(reports.value.last?.totalBytesToReceive == 20)
    }

    @Test func reportsFromManyThreadsArriveInOrderAndOneAtATime() async throws {
        let inHandler = Locked(0)
        let overlapped = Locked(false)
        let reports = Locked<[HTTPProgress]>([])
        var request = HTTPRequest(host: "api.example.com", path: "/file")
        request.progressHandler = { progress in
            if inHandler.withLock({ count -> Bool in
                count += 1
                return count > 1
            }) {
                overlapped.withLock { $0 = true }
            }
            reports.withLock { $0.append(progress) }
            inHandler.withLock { $0 -= 1 }
        }
        // Each change comes an interval after the one before, so most are reported, from eight threads at once.
        let clock = ManualClock()
        let reporter = try #require(ProgressReporter(request: request, totalBytesToSend: nil, clock: clock))
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<2_000 {
                clock.advance(by: ProgressReporter.interval)
                reporter.received(1)
            }
        }
        clock.advance(by: ProgressReporter.interval)
        reporter.complete()
        // A report held back by the rate may be delivering the final one on another thread.
        try await eventually { reports.value.last?.bytesReceived == 16_000 }
        #expect(!overlapped.value)
        let received = reports.value.map(\.bytesReceived)
        #expect(received.count > 1_000, "\(received.count) reports: the test did not exercise concurrent reports")
        #expect(received == received.sorted(), "reports out of order")
        #expect(received.last == 16_000)
    }
}

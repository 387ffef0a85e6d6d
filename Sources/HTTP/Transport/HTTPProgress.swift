import Foundation

/// How far a request has come: bytes sent and received, and how many were expected.
///
/// ```swift
/// var request = HTTPRequest(path: "/videos/42.mp4")
/// request.progressHandler = { progress in
///     if let fraction = progress.fractionCompleted { bar.set(fraction) }
/// }
/// ```
public struct HTTPProgress: Sendable, Hashable {
    /// Body bytes sent so far.
    public var bytesSent: Int64
    /// Body bytes to send, when known.
    public var totalBytesToSend: Int64?
    /// Body bytes received so far; for a resumed download, the bytes received before the resumption included.
    public var bytesReceived: Int64
    /// Body bytes to receive, when the server said (`Content-Length`, or a `206`'s `Content-Range`).
    public var totalBytesToReceive: Int64?

    public init(
        bytesSent: Int64 = 0, totalBytesToSend: Int64? = nil, bytesReceived: Int64 = 0,
        totalBytesToReceive: Int64? = nil
    ) {
        self.bytesSent = bytesSent
        self.totalBytesToSend = totalBytesToSend
        self.bytesReceived = bytesReceived
        self.totalBytesToReceive = totalBytesToReceive
    }

    /// The share of the transfer done, from 0 to 1: of the download once it has begun, of the upload before;
    /// `nil` when the total is not known.
    public var fractionCompleted: Double? {
        if let totalBytesToReceive, totalBytesToReceive > 0 {
            return min(1, Double(bytesReceived) / Double(totalBytesToReceive))
        }
        if bytesReceived == 0, let totalBytesToSend, totalBytesToSend > 0 {
            return min(1, Double(bytesSent) / Double(totalBytesToSend))
        }
        return nil
    }
}

/// The per-request progress handler option; see ``HTTPRequest/progressHandler``.
public enum ProgressHandlerOption: HTTPRequestOption {
    public static let defaultOptionValue: (@Sendable (HTTPProgress) -> Void)? = nil
}

extension HTTPRequest {
    /// Called as the request's body is sent and its response's body received, at most about 30 times a
    /// second, and always once more when the transfer is complete. A change the rate held back is reported
    /// when its 1/30 s ends, so a stalled transfer shows what it has. Calls come one at a time and in order, on
    /// the transport's thread or a task's: keep the handler short, and hop to your own executor to update a
    /// user interface. None come after a failed or cancelled transfer has ended.
    public var progressHandler: (@Sendable (HTTPProgress) -> Void)? {
        get { self[option: ProgressHandlerOption.self] }
        set { self[option: ProgressHandlerOption.self] = newValue }
    }

    /// Runs `transfer` with this request, its progress reported to `reports` as an `AsyncStream` that finishes
    /// when `transfer` returns — whether it succeeded, failed, was answered without reaching the network (a
    /// cache, a mock) or was cancelled.
    ///
    /// ```swift
    /// let result = await HTTPRequest(path: "/videos/42.mp4").reportingProgress { request in
    ///     await chain.download(request, to: destination)
    /// } to: { progress in
    ///     for await report in progress { print(report.bytesReceived, "of", report.totalBytesToReceive ?? -1) }
    /// }
    /// ```
    ///
    /// `reports` runs in a child task while `transfer` runs, and `reportingProgress` returns once both have
    /// ended: cancelling the caller cancels both. The stream keeps only the newest report when `reports` falls
    /// behind, so a slow consumer (a user interface) skips reports rather than piling them up. A
    /// ``progressHandler`` the request already had is still called.
    public func reportingProgress<Result>(
        _ transfer: (HTTPRequest) async -> Result,
        to reports: @escaping @Sendable (AsyncStream<HTTPProgress>) async -> Void,
        isolation: isolated (any Actor)? = #isolation
    ) async -> Result {
        let (stream, continuation) = AsyncStream.makeStream(of: HTTPProgress.self, bufferingPolicy: .bufferingNewest(1))
        var request = self
        let previous = progressHandler
        request.progressHandler = { progress in
            previous?(progress)
            continuation.yield(progress)
        }
        let consumer = Task { await reports(stream) }
        let result = await withTaskCancellationHandler {
            await transfer(request)
        } onCancel: {
            consumer.cancel()
        }
        continuation.finish()
        await consumer.value
        return result
    }
}

/// Calls a request's progress handler at a sensible rate: the first report, then at most one every 1/30 s, and
/// the final one. A change held back by the rate is reported when the interval ends, so a transfer that stalls
/// shows what it has received rather than what it had 1/30 s before the stall.
///
/// Reports reach the handler one at a time and in order, the newest first when several are waiting; none are
/// made once the transfer has ended (``complete()`` or ``stop()``), apart from the final one.
///
/// For transports: a terminal loader of your own makes one per transfer and tells it what it sends and receives.
///
/// ```swift
/// let progress = ProgressReporter(request: request, totalBytesToSend: source?.length)  // nil: no handler
/// progress?.sent(totalBytes: 16_384, expected: source?.length)
/// progress?.receivedHead(status: 200, contentRange: nil, declaredLength: contentLength)
/// progress?.received(chunk.count)
/// progress?.complete()  // or, when the transfer fails or is cancelled, progress?.stop()
/// ```
@_spi(Transport) public final class ProgressReporter: Sendable {
    private struct State {
        var progress: HTTPProgress
        /// When the last report was made, on the reporter's clock.
        var lastReport: Duration?
        /// A change was held back and not yet reported.
        var isHeldBack = false
        var isTrailingReportScheduled = false
        var hasEnded = false
        /// The newest report waiting for the handler, and whether a thread is calling it.
        var waiting: HTTPProgress?
        var isDelivering = false
        /// Signalled when the thread calling the handler has no report left, for ``complete()`` to wait on.
        var drained: DispatchSemaphore?
    }

    private let handler: @Sendable (HTTPProgress) -> Void
    private let state: Locked<State>
    private let clock: any Clock<Duration>
    private let elapsed: @Sendable () -> Duration
    private let resumedAt: Int64
    package static let interval: Duration = .milliseconds(33)

    /// A reporter for `request`'s transfer, or `nil` when the request has no ``HTTPRequest/progressHandler``.
    ///
    /// - Parameters:
    ///   - request: The request sent.
    ///   - totalBytesToSend: Its body's length, when known.
    ///   - alreadyReceived: Bytes a resumed download already has on disk.
    ///   - clock: The clock that times the rate (a manual clock in tests).
    public init?(
        request: HTTPRequest, totalBytesToSend: Int64?, alreadyReceived: Int64 = 0,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        guard let handler = request.progressHandler else { return nil }
        self.handler = handler
        self.clock = clock
        elapsed = Self.elapsedTime(on: clock)
        resumedAt = alreadyReceived
        state = Locked(
            State(progress: HTTPProgress(totalBytesToSend: totalBytesToSend, bytesReceived: alreadyReceived)))
    }

    private static func elapsedTime<C: Clock<Duration>>(on clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// The response's head arrived. A `206` continues a resumed download: what is on disk counts, and the total
    /// is `Content-Range`'s complete length, or what is on disk plus `Content-Length`. Any other status starts
    /// the count over (a `200` answering a range request is the whole entity again), its total `Content-Length`.
    ///
    /// - Parameters:
    ///   - status: The response's status code.
    ///   - contentRange: Its `Content-Range` field, if any.
    ///   - declaredLength: Its `Content-Length`, when it has one.
    public func receivedHead(status: Int, contentRange: String?, declaredLength: Int64?) {
        update { progress in
            if status == 206, resumedAt > 0 {
                progress.bytesReceived = resumedAt
                progress.totalBytesToReceive =
                    contentRange.flatMap(ContentRange.init)?.completeLength
                    ?? declaredLength.map { resumedAt + $0 }
            } else {
                progress.bytesReceived = 0
                progress.totalBytesToReceive = declaredLength
            }
        }
    }

    /// The request's body bytes sent so far, and how many in all when known.
    ///
    /// - Parameters:
    ///   - totalBytes: Bytes of the body sent so far.
    ///   - expected: The body's length, when known.
    public func sent(totalBytes: Int64, expected: Int64?) {
        update {
            $0.bytesSent = totalBytes
            if let expected, expected > 0 { $0.totalBytesToSend = expected }
        }
    }

    /// `count` more bytes of the response's body arrived.
    ///
    /// - Parameter count: How many.
    public func received(_ count: Int) {
        update { $0.bytesReceived += Int64(count) }
    }

    /// The transfer succeeded: the final report, made before this returns (if a held-back change is being
    /// reported on another thread, it waits for that thread to make the final report too).
    public func complete() {
        enum Next { case nothing, deliver, wait(DispatchSemaphore) }
        let next = state.withLock { state -> Next in
            guard !state.hasEnded else { return .nothing }
            if state.progress.totalBytesToReceive == nil {
                state.progress.totalBytesToReceive = state.progress.bytesReceived
            }
            state.hasEnded = true
            if Self.enqueue(&state) { return .deliver }
            let drained = DispatchSemaphore(value: 0)
            state.drained = drained
            return .wait(drained)
        }
        switch next {
        case .nothing: break
        case .deliver: deliverWaitingReports()
        case .wait(let drained): drained.wait()
        }
    }

    /// Whether a held-back change waits for its interval to end (for tests).
    package var isReportScheduled: Bool { state.withLock { $0.isTrailingReportScheduled } }

    /// Whether ``complete()`` waits for another thread to make the final report (for tests).
    package var isWaitingForFinalReport: Bool { state.withLock { $0.drained != nil } }

    /// The transfer failed or was cancelled: no more reports.
    public func stop() {
        state.withLock { $0.hasEnded = true }
    }

    private func update(_ change: (inout HTTPProgress) -> Void) {
        let now = elapsed()
        enum Next { case nothing, deliver, scheduleTrailingReport(after: Duration) }
        let next = state.withLock { state -> Next in
            guard !state.hasEnded else { return .nothing }
            change(&state.progress)
            if let last = state.lastReport, now - last < Self.interval {
                state.isHeldBack = true
                guard !state.isTrailingReportScheduled else { return .nothing }
                state.isTrailingReportScheduled = true
                return .scheduleTrailingReport(after: Self.interval - (now - last))
            }
            state.lastReport = now
            state.isHeldBack = false
            return Self.enqueue(&state) ? .deliver : .nothing
        }
        switch next {
        case .nothing: break
        case .deliver: deliverWaitingReports()
        case .scheduleTrailingReport(let delay):
            Task { [clock] in
                try? await clock.sleep(for: delay)
                self.reportHeldBackChange()
            }
        }
    }

    /// The interval after a held-back change has ended: it is reported, unless a later report included it.
    private func reportHeldBackChange() {
        let now = elapsed()
        let isDeliverer = state.withLock { state -> Bool in
            state.isTrailingReportScheduled = false
            guard !state.hasEnded, state.isHeldBack else { return false }
            state.isHeldBack = false
            state.lastReport = now
            return Self.enqueue(&state)
        }
        if isDeliverer { deliverWaitingReports() }
    }

    /// Queues the current progress for the handler, replacing an older report still waiting; `true` if the
    /// caller is to deliver it (no other thread is calling the handler).
    private static func enqueue(_ state: inout State) -> Bool {
        state.waiting = state.progress
        if state.isDelivering { return false }
        state.isDelivering = true
        return true
    }

    /// Calls the handler with each waiting report until none is left, so that reports arrive one at a time and
    /// in order whichever thread made them.
    private func deliverWaitingReports() {
        while true {
            let (next, drained) = state.withLock { state -> (HTTPProgress?, DispatchSemaphore?) in
                defer { state.waiting = nil }
                guard state.waiting == nil else { return (state.waiting, nil) }
                state.isDelivering = false
                defer { state.drained = nil }
                return (nil, state.drained)
            }
            guard let next else {
                drained?.signal()
                return
            }
            handler(next)
        }
    }
}

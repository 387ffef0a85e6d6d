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
    /// second, and always once more when the transfer is complete. It runs on the transport's thread: keep it
    /// short, and hop to your own executor to update a user interface.
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

/// Calls a request's progress handler at a sensible rate: the first report, then at most every 1/30 s, and
/// the final one. For transports: a terminal loader of your own makes one per transfer and tells it what it sends
/// and receives.
///
/// ```swift
/// let progress = ProgressReporter(request: request, totalBytesToSend: source?.length)  // nil: no handler
/// progress?.sent(totalBytes: 16_384, expected: source?.length)
/// progress?.receivedHead(status: 200, contentRange: nil, declaredLength: contentLength)
/// progress?.received(chunk.count)
/// progress?.complete()
/// ```
public final class ProgressReporter: Sendable {
    private let handler: @Sendable (HTTPProgress) -> Void
    private let state: Locked<(progress: HTTPProgress, lastReport: ContinuousClock.Instant?)>
    private static let interval: Duration = .milliseconds(33)

    private let resumedAt: Int64

    /// A reporter for `request`'s transfer, or `nil` when the request has no ``HTTPRequest/progressHandler``.
    ///
    /// - Parameters:
    ///   - request: The request sent.
    ///   - totalBytesToSend: Its body's length, when known.
    ///   - alreadyReceived: Bytes a resumed download already has on disk.
    public init?(request: HTTPRequest, totalBytesToSend: Int64?, alreadyReceived: Int64 = 0) {
        guard let handler = request.progressHandler else { return nil }
        self.handler = handler
        resumedAt = alreadyReceived
        state = Locked((HTTPProgress(totalBytesToSend: totalBytesToSend, bytesReceived: alreadyReceived), nil))
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
        update(force: false) { progress in
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
        update(force: false) {
            $0.bytesSent = totalBytes
            if let expected, expected > 0 { $0.totalBytesToSend = expected }
        }
    }

    /// `count` more bytes of the response's body arrived.
    ///
    /// - Parameter count: How many.
    public func received(_ count: Int) {
        update(force: false) { $0.bytesReceived += Int64(count) }
    }

    /// The final report, when the transfer is complete; always delivered.
    public func complete() {
        update(force: true) { progress in
            if progress.totalBytesToReceive == nil { progress.totalBytesToReceive = progress.bytesReceived }
        }
    }

    private func update(force: Bool, _ change: (inout HTTPProgress) -> Void) {
        let now = ContinuousClock.now
        let report = state.withLock { state -> HTTPProgress? in
            change(&state.progress)
            if !force, let last = state.lastReport, now - last < Self.interval { return nil }
            state.lastReport = now
            return state.progress
        }
        if let report { handler(report) }
    }
}

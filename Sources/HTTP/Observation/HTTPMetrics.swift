public import Foundation

/// What one attempt's transfer took: when it started, when the request was sent, when the response head arrived,
/// when it ended; the bytes sent and received; the redirects followed on the way; and the platform's own metrics
/// where it collects them.
///
/// The terminal fills them in and attaches them to what it returns: ``HTTPResponse/metrics``, or
/// ``HTTPError/metrics`` for a transfer that failed. With ``Retry`` in the chain, a result carries the metrics of
/// its own attempt (``attemptNumber``); an ``HTTPEventObserver`` sees every attempt's in
/// ``HTTPEvent/Kind/attemptFinished`` events.
///
/// ```swift
/// if let metrics = response.metrics {
///     print("took \(metrics.duration), first byte after \(metrics.timeToResponseHead ?? metrics.duration)")
///     print("started at \(metrics.startDate), \(metrics.responseBodyBytesReceived) bytes received")
/// }
/// ```
///
/// Times are instants of `ContinuousClock`, so durations between them are exact whatever the wall clock does;
/// ``startDate`` is the wall-clock time of ``start``, for logs, and ``date(at:)`` gives any other instant's.
/// A time the transport cannot observe is `nil`: where a transport sees only the start and the end of a transfer
/// (URLSession's completion-handler tasks on Linux), ``requestSent`` and ``responseHeadReceived`` are unknown.
public struct HTTPMetrics: Sendable {
    /// Which attempt of its load the transfer was: ``HTTPRequest/attemptNumber`` of the request sent.
    public var attemptNumber: Int
    /// The wall-clock time of ``start``.
    public var startDate: Date
    /// When the terminal handed the request to the transport.
    public var start: ContinuousClock.Instant {
        get { Self.instant(at: startOffset) }
        set { startOffset = Self.offset(of: newValue) }
    }
    /// When the last byte of the request (its body included) was sent, if the transport tells.
    public var requestSent: ContinuousClock.Instant? {
        get { requestSentOffset.map(Self.instant(at:)) }
        set { requestSentOffset = newValue.map(Self.offset(of:)) }
    }
    /// When the response's status line and header fields had arrived, if the transport tells.
    public var responseHeadReceived: ContinuousClock.Instant? {
        get { responseHeadReceivedOffset.map(Self.instant(at:)) }
        set { responseHeadReceivedOffset = newValue.map(Self.offset(of:)) }
    }
    /// When the transfer ended: the body received, or the failure or cancellation reported.
    public var end: ContinuousClock.Instant {
        get { Self.instant(at: endOffset) }
        set { endOffset = Self.offset(of: newValue) }
    }
    /// The request body's bytes sent, over every hop of the transfer.
    public var requestBodyBytesSent: Int64
    /// The response body's bytes received, as the transport delivered them (after decoding any
    /// `Content-Encoding`), over every hop of the transfer.
    public var responseBodyBytesReceived: Int64
    /// The request's header bytes sent (request line included), over every hop; `nil` where the transport does
    /// not count them.
    public var requestHeaderBytesSent: Int64?
    /// The responses' header bytes received (status line included), over every hop; `nil` where the transport
    /// does not count them.
    public var responseHeaderBytesReceived: Int64?
    /// The response body's bytes as they came over the network, before decoding, over every hop; `nil` where the
    /// transport does not count them.
    public var encodedResponseBodyBytesReceived: Int64?
    /// The redirects followed before the final response, in order: set by ``FollowRedirects`` on the metrics of the
    /// response it returns (the same as ``HTTPResponse/redirects``), as transports hand every redirect back up the
    /// chain. A transport of your own that follows redirects itself may record them here.
    public var redirects: [Redirect]
    /// URLSession's own metrics of the task, where it collects them (Apple platforms; see ``taskMetrics``).
    var taskMetricsBox: TaskMetricsBox?

    // The instants, stored as their distance from one instant of the process: `ContinuousClock.Instant`'s layout is
    // resilient, and a struct that stores one is created, copied and destroyed through runtime metadata.
    private var startOffset: Duration
    private var requestSentOffset: Duration?
    private var responseHeadReceivedOffset: Duration?
    private var endOffset: Duration

    /// The instant the offsets are measured from.
    private static let reference = ContinuousClock.now

    private static func offset(of instant: ContinuousClock.Instant) -> Duration {
        instant - reference
    }

    private static func instant(at offset: Duration) -> ContinuousClock.Instant {
        reference.advanced(by: offset)
    }

    /// One redirect followed: the URL that answered with a redirect status, and where to.
    public struct Redirect: Sendable, Hashable {
        /// The URL that answered with the redirect.
        public var url: URL?
        /// The redirect's status: `301`, `302`, `303`, `307` or `308`.
        public var status: HTTPStatus
        /// The URL the request was sent to next.
        public var location: URL?

        public init(url: URL?, status: HTTPStatus, location: URL?) {
            self.url = url
            self.status = status
            self.location = location
        }
    }

    /// Metrics for a transfer that started at `start` (wall-clock time `startDate`) and, until ``end`` is set,
    /// ended at once; no bytes, no redirects.
    ///
    /// - Parameters:
    ///   - attemptNumber: The attempt: ``HTTPRequest/attemptNumber`` of the request sent.
    ///   - startDate: The wall-clock time of `start`.
    ///   - start: When the transfer started.
    public init(attemptNumber: Int = 1, startDate: Date, start: ContinuousClock.Instant) {
        self.attemptNumber = attemptNumber
        self.startDate = startDate
        self.startOffset = Self.offset(of: start)
        self.endOffset = startOffset
        self.requestBodyBytesSent = 0
        self.responseBodyBytesReceived = 0
        self.redirects = []
    }

    /// Metrics for a transfer of `request` starting now: what a terminal creates as it hands the request to its
    /// transport, and completes as the transfer goes on.
    public init(startingNowFor request: HTTPRequest) {
        self.init(attemptNumber: request.attemptNumber, startDate: Date(), start: .now)
    }

    /// The whole transfer: from ``start`` to ``end``.
    public var duration: Duration {
        endOffset - startOffset
    }

    /// From ``start`` until the response head arrived (the "time to first byte"), if the transport tells.
    public var timeToResponseHead: Duration? {
        responseHeadReceivedOffset.map { $0 - startOffset }
    }

    /// The wall-clock time of `instant`, for logs: ``startDate`` moved by the time from ``start`` to `instant`.
    public func date(at instant: ContinuousClock.Instant) -> Date {
        startDate.addingTimeInterval((instant - start).seconds)
    }

    /// The instant of the wall-clock time `date`: for transports that report `Date`s, such as URLSession's task
    /// metrics. Defined for every date (one more than a century away is clamped).
    public func instant(at date: Date) -> ContinuousClock.Instant {
        start.advanced(
            by: Duration(clampingSeconds: date.timeIntervalSince(startDate), to: (.zero - .century)...Duration.century))
    }
}

extension HTTPMetrics: CustomStringConvertible {
    /// `"attempt 1: 41.7 ms (sent 0.3 ms, head 12.0 ms), 0 bytes up, 213 down"`.
    public var description: String {
        var splits: [String] = []
        if let requestSent { splits.append("sent \(Self.format(requestSent - start))") }
        if let timeToResponseHead { splits.append("head \(Self.format(timeToResponseHead))") }
        let split = splits.isEmpty ? "" : " (\(splits.joined(separator: ", ")))"
        var text = "attempt \(attemptNumber): \(Self.format(duration))\(split), \(requestBodyBytesSent) bytes up, "
        text += "\(responseBodyBytesReceived) down"
        if !redirects.isEmpty { text += ", \(redirects.count) redirect\(redirects.count == 1 ? "" : "s")" }
        return text
    }

    /// `"41.7 ms"` below a second, `"2.35 s"` above: the format of log lines.
    package static func format(_ duration: Duration) -> String {
        let milliseconds = duration.seconds * 1_000
        return milliseconds < 1_000
            ? String(format: "%.1f ms", milliseconds) : String(format: "%.2f s", milliseconds / 1_000)
    }
}

/// Metrics in a box of their own, for the fields of ``HTTPResponse`` and ``HTTPError``: one word whether or not there
/// are metrics, and a size known at compile time. `HTTPMetrics` holds clock instants, whose size is known only at
/// run time, so a struct holding them inline has none either — and an async function that builds one (an inlined
/// initializer or setter) reserves room for it in its task allocation for as long as it runs, waiting included.
final class MetricsBox: Sendable {
    let metrics: HTTPMetrics
    init(_ metrics: HTTPMetrics) { self.metrics = metrics }
}

extension Result where Success == HTTPResponse, Failure == HTTPError {
    /// `result` with `metrics` on its response or error: what a terminal returns at the end of a transfer.
    ///
    /// ```swift
    /// return HTTPResult.attaching(metrics, to: .success(response))
    /// ```
    ///
    /// The result is consumed, so the response or error it holds is changed in place; setting
    /// ``HTTPResponse/metrics`` on a response still held elsewhere copies its storage first.
    ///
    /// - Parameters:
    ///   - metrics: The transfer's metrics.
    ///   - result: The transfer's result.
    /// - Returns: The result, its response's or error's ``HTTPResponse/metrics`` set.
    public static func attaching(_ metrics: HTTPMetrics, to result: consuming HTTPResult) -> HTTPResult {
        switch consume result {
        case .success(var response):
            response.metrics = metrics
            return .success(response)
        case .failure(var error):
            error.metrics = metrics
            return .failure(error)
        }
    }
}

#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

extension HTTPMetrics {
    /// URLSession's own metrics of the transfer, for what the fields of ``HTTPMetrics`` leave out: DNS, connect and
    /// TLS times, connection reuse, the protocol (`h2`, `h3`), each hop's request and response.
    ///
    /// Set by ``URLSessionLoader`` where URLSession collects them: on Apple platforms. swift-corelibs-foundation
    /// (Linux, Windows) never does, so there it is `nil`.
    public var taskMetrics: URLSessionTaskMetrics? {
        get { taskMetricsBox?.metrics }
        set { taskMetricsBox = newValue.map(TaskMetricsBox.init) }
    }

    /// Takes what ``HTTPMetrics`` has fields for from URLSession's task metrics, and keeps them as ``taskMetrics``.
    ///
    /// Over the transactions that went to the network (not those answered from a cache): the byte counts are summed;
    /// the last one's `requestEndDate` and `responseStartDate` give ``requestSent`` and ``responseHeadReceived``
    /// where the terminal did not observe them itself. ``start``, ``end`` and ``responseBodyBytesReceived`` (what the
    /// terminal delivered) stay the terminal's.
    mutating func record(_ taskMetrics: URLSessionTaskMetrics) {
        record(
            taskMetrics.transactionMetrics.filter { $0.resourceFetchType == .networkLoad }.map { transaction in
                Transaction(
                    requestEnd: transaction.requestEndDate,
                    responseStart: transaction.responseStartDate,
                    requestHeaderBytes: transaction.countOfRequestHeaderBytesSent,
                    requestBodyBytes: transaction.countOfRequestBodyBytesSent,
                    responseHeaderBytes: transaction.countOfResponseHeaderBytesReceived,
                    responseBodyBytes: transaction.countOfResponseBodyBytesReceived
                )
            })
        self.taskMetrics = taskMetrics
    }

    /// One request–response exchange over the network, as a transport's metrics describe it.
    struct Transaction: Sendable {
        var requestEnd: Date?
        var responseStart: Date?
        var requestHeaderBytes: Int64
        var requestBodyBytes: Int64
        var responseHeaderBytes: Int64
        var responseBodyBytes: Int64

        init(
            requestEnd: Date?, responseStart: Date?, requestHeaderBytes: Int64, requestBodyBytes: Int64,
            responseHeaderBytes: Int64, responseBodyBytes: Int64
        ) {
            self.requestEnd = requestEnd
            self.responseStart = responseStart
            self.requestHeaderBytes = requestHeaderBytes
            self.requestBodyBytes = requestBodyBytes
            self.responseHeaderBytes = responseHeaderBytes
            self.responseBodyBytes = responseBodyBytes
        }
    }

    /// ``record(_:)-(URLSessionTaskMetrics)`` for the network exchanges of a transfer, in order.
    mutating func record(_ transactions: [Transaction]) {
        guard let last = transactions.last else { return }
        if requestSent == nil, let date = last.requestEnd { requestSent = instant(at: date) }
        if responseHeadReceived == nil, let date = last.responseStart { responseHeadReceived = instant(at: date) }
        // Counts never trap: a transport's numbers are summed with clamping, negative ones (unknown) skipped.
        func sum(_ count: (Transaction) -> Int64) -> Int64 {
            transactions.reduce(0) { total, transaction in
                let (value, overflow) = total.addingReportingOverflow(max(0, count(transaction)))
                return overflow ? .max : value
            }
        }
        requestHeaderBytesSent = sum(\.requestHeaderBytes)
        requestBodyBytesSent = max(requestBodyBytesSent, sum(\.requestBodyBytes))
        responseHeaderBytesReceived = sum(\.responseHeaderBytes)
        encodedResponseBodyBytesReceived = sum(\.responseBodyBytes)
    }
}

/// URLSession's task metrics, in a box that can be sent.
// Safety: URLSession hands the metrics over once it has collected them and never changes them afterwards; they are
// only read.
final class TaskMetricsBox: @unchecked Sendable {
    let metrics: URLSessionTaskMetrics

    init(_ metrics: URLSessionTaskMetrics) {
        self.metrics = metrics
    }
}

import Foundation
import HTTP
import HTTPLogging
import HTTPMetricsIntegration
import HTTPTracing
import Logging

// What issue 25's observability budget runs in process: the default chain over the measuring canned terminal (which
// fills in `HTTPMetrics` and emits each attempt's events, as a real terminal does), with and without the adapters of
// Integrations/Observability. Nothing is bootstrapped: swift-log's logger is at `info` (the adapters log a
// successful load at `debug`), swift-metrics has its no-op factory, swift-distributed-tracing no tracer.

/// An adapter of Integrations/Observability, as the in-process subjects add it to the default chain.
public enum ObservabilityAdapter: String, CaseIterable, Sendable {
    /// `HTTPEventLogger(logger:)` (HTTPLogging), in the `Observe` at the head.
    case logging = "HTTPEventLogger, logger at info"
    /// `MetricsObserver()` (HTTPMetricsIntegration), no metrics backend, in the `Observe` at the head.
    case metrics = "MetricsObserver(), no backend"
    /// `TraceLoads()` at the head and `TraceAttempts()` above the terminal (HTTPTracing), no tracer.
    case tracing = "TraceLoads() + TraceAttempts(), no tracer"
    /// `PrintLoader(logger:)` at the head (HTTPLogging), its lines at `debug`, below the logger's level: not part of
    /// the budget's set (`PrintLoader` formats each line before the logger sees it), shown beside it.
    case printLoader = "PrintLoader(logger:), lines at debug"
}

/// A logger at `info` that would write to standard error: every event of a successful load is below its level.
private func infoLogger() -> Logger {
    var logger = Logger(label: "benchmarks", factory: { StreamLogHandler.standardError(label: $0) })
    logger.logLevel = .info
    return logger
}

extension InProcessSubject {
    /// `Observe` with an observer that ignores every event, in front of the default chain over
    /// ``MeasuringCannedResponse``: what `Observe` itself costs (a `LoadID`, the observer added to the request, two
    /// events made).
    public static func observedMeasuredDefaultChain() -> InProcessSubject {
        .loaders(
            Observe(IgnoringObserver()) --> makeDefaultChain(terminal: MeasuringCannedResponse()),
            request: makeDefaultChainRequest())
    }

    /// The budget's three adapters, but the logger and the metrics observer behind an `Observe` each (a variant: what
    /// a chain that installs them separately pays).
    public static func observabilityChainWithTwoObserves() -> InProcessSubject {
        let head =
            Observe(HTTPEventLogger(logger: infoLogger())) --> Observe(MetricsObserver())
            --> TraceLoads() --> makeDefaultChain(terminal: TraceAttempts() --> MeasuringCannedResponse())
        return .loaders(head, request: makeDefaultChainRequest())
    }

    /// The default chain over ``MeasuringCannedResponse``, with `adapters` added where their documentation puts
    /// them (the observers behind one `Observe` and `TraceLoads` at the head, `TraceAttempts` above the terminal).
    public static func observabilityChain(_ adapters: Set<ObservabilityAdapter>) -> InProcessSubject {
        var terminal: HTTPLoader = MeasuringCannedResponse()
        if adapters.contains(.tracing) { terminal = TraceAttempts() --> terminal }
        var head = makeDefaultChain(terminal: terminal)
        if adapters.contains(.tracing) { head = TraceLoads() --> head }
        var observers: [any HTTPEventObserver] = []
        if adapters.contains(.logging) { observers.append(HTTPEventLogger(logger: infoLogger())) }
        if adapters.contains(.metrics) { observers.append(MetricsObserver()) }
        if !observers.isEmpty { head = Observe(observers) --> head }
        if adapters.contains(.printLoader) { head = PrintLoader(logger: infoLogger(), level: .debug) --> head }
        return .loaders(head, request: makeDefaultChainRequest())
    }
}

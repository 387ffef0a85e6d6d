public import CoreMetrics
public import HTTP
import HTTPObservabilityConventions

/// An `HTTPEventObserver` that records swift-metrics counters, timers and meters for every load and every
/// attempt, named after the OpenTelemetry HTTP client metrics and dimensioned by bounded values only.
///
/// ```swift
/// let chain = Observe(MetricsObserver()) --> ApplyEnvironment(environment: .production) --> Cache()
///     --> Retry() --> URLSessionLoader()
/// ```
///
/// | metric | type | recorded on | dimensions |
/// |---|---|---|---|
/// | `http.client.loads` | counter | each load's finish | method, status class, status code, error type, origin |
/// | `http.client.load.duration` | timer | each load's finish: every attempt and wait | the same |
/// | `http.client.active_loads` | meter | +1 at a load's start, −1 at its finish | only `dimensions` |
/// | `http.client.requests` | counter | each attempt's finish (each retry, each redirect hop) | as loads |
/// | `http.client.request.duration` | timer | each attempt's finish: the transfer alone | as loads |
/// | `http.client.active_requests` | meter | +1 as an attempt starts, −1 as it finishes | method, origin |
/// | `http.client.retries` | counter | each retry `Retry` schedules | method, the retried outcome, origin |
/// | `http.client.redirects` | counter | each redirect `FollowRedirects` follows | method, status code, origin |
/// | `http.client.cache.requests` | counter | each load a `Cache` answered or forwarded | method, result, reason |
/// | `http.client.credential.flows` | counter | each credential flow an authentication loader ran (a login, a token refresh, a key fetched) | outcome (`obtained`, `refreshed`, `failed`), error type, origin |
/// | `http.client.credential.flow.duration` | timer | the same | the same |
///
/// Dimensions are named as the conventions name them — `http.request.method` (`_OTHER` for a method they do not
/// know), `http.response.status_class` (`2xx` …), `http.response.status_code`, `error.type` (an
/// `HTTPError.Code`, or the status of a `4xx` or `5xx`), and the origin as `url.scheme`, `server.address`
/// and `server.port` — and absent when the event has no value for them. Never a path, a query or anything else
/// without a bound. Add dimensions of your own (the service, the API) with `dimensions`.
///
/// The cache's result comes from the `Cache-Status` member `Cache` adds (RFC 9211), so `Observe`
/// must be above the cache: `http.cache.result` is `hit`, `revalidated` (a `304` freshened the stored response),
/// `stale` (served stale after an error) or `miss`, and `http.cache.fwd` the reason a request went on (`uri-miss`,
/// `vary-miss`, `stale`, `request`, `method`, `bypass`, `miss`).
///
/// With swift-metrics' no-op factory (no backend bootstrapped) the observer is interested in no event
/// (`isInterested(in:)`), so none is made for it.
///
/// Durations are the events' own: a load's from `Observe`, an attempt's from the terminal's
/// `HTTPMetrics`. The observer holds no state; a backend that aggregates by label and dimensions (all do)
/// keeps the series.
public struct MetricsObserver: HTTPEventObserver {
    /// The factory metrics are made with.
    public let factory: any MetricsFactory
    /// Dimensions added to every metric, for your own labels: the service, the API.
    public let dimensions: [(String, String)]

    private let activeLoads: Meter
    /// Whether `factory` is swift-metrics' no-op one (nothing bootstrapped): events are then dropped at once.
    private let isDiscarding: Bool

    /// Creates an observer that records to `factory`.
    ///
    /// - Parameters:
    ///   - factory: The metrics backend; `MetricsSystem.factory` by default — the bootstrapped one, or the one a
    ///     `withMetricsFactory` scope binds where the observer is created. Tests pass a `TestMetrics`.
    ///   - dimensions: Dimensions added to every metric. Keep them bounded.
    public init(factory: any MetricsFactory = MetricsSystem.factory, dimensions: [(String, String)] = []) {
        self.factory = factory
        self.dimensions = dimensions
        self.activeLoads = Meter(label: "http.client.active_loads", dimensions: dimensions, factory: factory)
        self.isDiscarding = factory is NOOPMetricsHandler
    }

    /// `false` with swift-metrics' no-op factory (nothing bootstrapped): no event is then made for this observer.
    public func isInterested(in kind: HTTPEvent.Kind) -> Bool {
        !isDiscarding
    }

    public func handle(_ event: HTTPEvent) {
        // With no metrics backend, building dimensions for it would be the whole cost of recording.
        guard !isDiscarding else { return }
        switch event.kind {
        case .loadStarted:
            activeLoads.increment()
        case .loadFinished:
            activeLoads.decrement()
            guard let result = event.result else { return }
            let dimensions = outcome(of: event.request, result)
            Counter(label: "http.client.loads", dimensions: dimensions, factory: factory).increment()
            if let duration = event.duration {
                timer("http.client.load.duration", dimensions).recordNanoseconds(duration.nanoseconds)
            }
            if case .success(let response) = result, let cache = CacheStatus(response) {
                var cacheDimensions = method(of: event.request)
                cacheDimensions.append(("http.cache.result", cache.result))
                if let reason = cache.forwardReason { cacheDimensions.append(("http.cache.fwd", reason)) }
                cacheDimensions += self.dimensions
                Counter(label: "http.client.cache.requests", dimensions: cacheDimensions, factory: factory).increment()
            }
        case .attemptStarted:
            activeRequests(of: event.request).increment()
        case .attemptFinished:
            activeRequests(of: event.request).decrement()
            guard let result = event.result else { return }
            let dimensions = outcome(of: event.request, result)
            Counter(label: "http.client.requests", dimensions: dimensions, factory: factory).increment()
            if let metrics = event.metrics {
                timer("http.client.request.duration", dimensions).recordNanoseconds(metrics.duration.nanoseconds)
            }
        case .retryScheduled:
            guard let result = event.result else { return }
            Counter(label: "http.client.retries", dimensions: outcome(of: event.request, result), factory: factory)
                .increment()
        case .redirectFollowed:
            guard let redirect = event.result?.response else { return }
            var dimensions = method(of: redirect.request)
            dimensions.append((Conventions.statusCode, String(redirect.status.rawValue)))
            dimensions += origin(of: redirect.request) + self.dimensions
            Counter(label: "http.client.redirects", dimensions: dimensions, factory: factory).increment()
        case .credentialObtained, .credentialRefreshed, .credentialFailed:
            let outcome =
                switch event.kind {
                case .credentialObtained: "obtained"
                case .credentialRefreshed: "refreshed"
                default: "failed"
                }
            var dimensions = [("http.client.credential.outcome", outcome)]
            if let errorType = event.result?.errorType { dimensions.append((Conventions.errorType, errorType)) }
            dimensions += origin(of: event.request) + self.dimensions
            Counter(label: "http.client.credential.flows", dimensions: dimensions, factory: factory).increment()
            if let duration = event.duration {
                timer("http.client.credential.flow.duration", dimensions).recordNanoseconds(duration.nanoseconds)
            }
        default:
            return
        }
    }

    /// `http.client.active_requests` for `request`'s method and origin: the attempt's start and its finish carry the
    /// same request, so they reach the same meter.
    private func activeRequests(of request: HTTPRequest) -> Meter {
        Meter(label: "http.client.active_requests", dimensions: methodAndOrigin(of: request), factory: factory)
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> Timer {
        Timer(label: label, dimensions: dimensions, factory: factory)
    }

    /// Method, status class and code, error type and origin, then the observer's own dimensions.
    private func outcome(of request: HTTPRequest, _ result: HTTPResult) -> [(String, String)] {
        var dimensions = method(of: request)
        if let status = result.status ?? result.error?.response?.status {
            dimensions.append((Conventions.statusClass, status.statusClass))
            dimensions.append((Conventions.statusCode, String(status.rawValue)))
        }
        if let errorType = result.errorType { dimensions.append((Conventions.errorType, errorType)) }
        return dimensions + origin(of: request) + self.dimensions
    }

    private func methodAndOrigin(of request: HTTPRequest) -> [(String, String)] {
        method(of: request) + origin(of: request) + dimensions
    }

    private func method(of request: HTTPRequest) -> [(String, String)] {
        [(Conventions.method, request.conventionalMethod)]
    }

    /// `url.scheme`, `server.address` and `server.port`; nothing for a request without a host.
    private func origin(of request: HTTPRequest) -> [(String, String)] {
        guard let host = request.host else { return [] }
        var dimensions = [(Conventions.urlScheme, request.scheme), (Conventions.serverAddress, host)]
        if let port = request.effectivePort { dimensions.append((Conventions.serverPort, String(port))) }
        return dimensions
    }
}

extension MetricsObserver: CustomStringConvertible {
    /// `MetricsObserver(dimensions: service=api)`: the observer's own dimensions.
    public var description: String {
        "MetricsObserver(dimensions: \(dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ", ")))"
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`: what a swift-metrics `Timer` records.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowed) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowed ? (seconds < 0 ? .min : .max) : total
    }
}

public import CoreMetrics
public import HTTP
import HTTPObservabilityConventions

/// Records a `CircuitBreaker`'s state changes as swift-metrics: a counter of transitions and a gauge of each
/// origin's state.
///
/// ```swift
/// let breaker = CircuitBreaker()
/// let metrics = CircuitBreakerMetrics(breaker)
/// Task { await metrics.run() }  // until the breaker is gone, or the task is cancelled
/// ```
///
/// - `http.client.circuit_breaker.transitions`, a counter, dimensioned by the origin (`url.scheme`,
///   `server.address`, `server.port`), `http.client.circuit_breaker.previous_state` and
///   `http.client.circuit_breaker.state` (`closed`, `open`, `half-open`);
/// - `http.client.circuit_breaker.state`, a gauge per origin: `0` closed, `1` half-open, `2` open.
///
/// The breaker reports each change through `CircuitBreaker.transitions()`, which buffers the changes from
/// this value's creation until ``run()`` reads them. The breaker is not retained.
public struct CircuitBreakerMetrics: Sendable {
    private let transitions: AsyncStream<CircuitTransition>
    private let factory: any MetricsFactory
    private let dimensions: [(String, String)]

    /// Starts listening to `breaker`'s changes; ``run()`` records them.
    ///
    /// - Parameters:
    ///   - breaker: The circuit breaker to observe.
    ///   - factory: The metrics backend; `MetricsSystem.factory` by default.
    ///   - dimensions: Dimensions added to every metric: which breaker, if the app has several.
    public init(
        _ breaker: CircuitBreaker, factory: any MetricsFactory = MetricsSystem.factory,
        dimensions: [(String, String)] = []
    ) {
        self.transitions = breaker.transitions()
        self.factory = factory
        self.dimensions = dimensions
    }

    /// Records every change, in order, until the breaker is gone or the task is cancelled. Call it once.
    public func run() async {
        for await transition in transitions {
            record(transition)
        }
    }

    /// Records one change.
    func record(_ transition: CircuitTransition) {
        var origin = [
            (Conventions.urlScheme, transition.origin.scheme), (Conventions.serverAddress, transition.origin.host),
        ]
        if let port = transition.origin.port { origin.append((Conventions.serverPort, String(port))) }
        let change = [
            ("http.client.circuit_breaker.previous_state", transition.from.description),
            ("http.client.circuit_breaker.state", transition.to.description),
        ]
        Counter(
            label: "http.client.circuit_breaker.transitions", dimensions: origin + change + dimensions, factory: factory
        ).increment()
        Gauge(label: "http.client.circuit_breaker.state", dimensions: origin + dimensions, factory: factory)
            .record(Self.value(of: transition.to))
    }

    /// The gauge's value of `state`: `0` closed, `1` half-open, `2` open.
    static func value(of state: CircuitState) -> Int {
        switch state {
        case .closed: 0
        case .halfOpen: 1
        case .open: 2
        }
    }
}

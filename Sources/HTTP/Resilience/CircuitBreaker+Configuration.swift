extension CircuitBreaker {
    /// When a ``CircuitBreaker`` opens a circuit, for how long, and what counts as a failure.
    ///
    /// ```swift
    /// var configuration = CircuitBreaker.Configuration()
    /// configuration.failureRateThreshold = 0.25  // open when a quarter of the requests fail…
    /// configuration.minimumNumberOfRequests = 20  // …once there were 20 in the window
    /// configuration.failureStatuses.insert(.tooManyRequests)
    /// let breaker = CircuitBreaker(configuration: configuration)
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// The share of failed requests in the ``window`` at which the circuit opens, in `0...1`; 0.5 by default.
        public var failureRateThreshold: Double
        /// The fewest requests the ``window`` must hold before the rate counts, so that one failure among the
        /// first requests does not open the circuit; 10 by default, at least 1.
        public var minimumNumberOfRequests: Int
        /// How far back requests count; 30 seconds by default.
        public var window: Duration
        /// How long the circuit stays open before the first trial; 5 seconds by default.
        public var openDuration: Duration
        /// The longest the circuit stays open: every failed trial doubles the open time up to this; 60 seconds by
        /// default.
        public var maximumOpenDuration: Duration
        /// The statuses that count as failures: `500`, `502`, `503` and `504` by default — the server failing or
        /// overloaded, not a request it refused. Add `429 Too Many Requests` to stop calling a server that rate
        /// limits you until it recovers.
        public var failureStatuses: Set<HTTPStatus>
        /// The transport errors that count as failures: ``HTTPError/Code/cannotConnect``,
        /// ``HTTPError/Code/timedOut`` and ``HTTPError/Code/invalidResponse`` by default. Other errors say nothing
        /// about the origin and are not counted: ``HTTPError/Code/cancelled``, ``HTTPError/Code/resetInProgress``,
        /// ``HTTPError/Code/invalidRequest`` and ``HTTPError/Code/circuitOpen`` never, even if listed.
        public var failureCodes: Set<HTTPError.Code>

        /// Creates a configuration; every parameter has the default described on its property.
        public init(
            failureRateThreshold: Double = 0.5,
            minimumNumberOfRequests: Int = 10,
            window: Duration = .seconds(30),
            openDuration: Duration = .seconds(5),
            maximumOpenDuration: Duration = .seconds(60),
            failureStatuses: Set<HTTPStatus> = [
                .internalServerError, .badGateway, .serviceUnavailable, .gatewayTimeout,
            ],
            failureCodes: Set<HTTPError.Code> = [.cannotConnect, .timedOut, .invalidResponse]
        ) {
            self.failureRateThreshold = failureRateThreshold
            self.minimumNumberOfRequests = minimumNumberOfRequests
            self.window = window
            self.openDuration = openDuration
            self.maximumOpenDuration = maximumOpenDuration
            self.failureStatuses = failureStatuses
            self.failureCodes = failureCodes
        }

        /// This configuration with every value made usable: the threshold in `0...1` (NaN: 0.5), at least one
        /// request, durations in `0...` a century (the window at least a millisecond), the maximum open time at
        /// least the open time, and the codes that never count removed.
        package var sanitized: Configuration {
            var copy = self
            copy.failureRateThreshold = failureRateThreshold.isNaN ? 0.5 : min(max(failureRateThreshold, 0), 1)
            copy.minimumNumberOfRequests = max(1, minimumNumberOfRequests)
            copy.window = min(max(window, .milliseconds(1)), .century)
            copy.openDuration = openDuration.clampedToRetryRange
            copy.maximumOpenDuration = max(maximumOpenDuration.clampedToRetryRange, copy.openDuration)
            copy.failureCodes.subtract(Self.neverFailures)
            return copy
        }

        /// Errors that never count: they say nothing about the origin.
        static let neverFailures: Set<HTTPError.Code> = [.cancelled, .resetInProgress, .invalidRequest, .circuitOpen]

        /// What `result` says about the origin.
        package func outcome(of result: HTTPResult) -> CircuitBreakerStateMachine.Outcome {
            switch result {
            case .success(let response):
                failureStatuses.contains(response.status) ? .failure(result) : .success
            case .failure(let error):
                failureCodes.contains(error.code) && !Self.neverFailures.contains(error.code)
                    ? .failure(result) : .ignored
            }
        }
    }
}

public import CoreMetrics
public import HTTP

/// swift-metrics gauges for what waits in the chain's loaders: requests parked in a `Throttle`, waiting out a
/// `Retry` delay, sharing a `Deduplicate` load — sampled, as the loaders report no event for them.
///
/// ```swift
/// let throttle = Throttle(maximumNumberOfRequests: 6)
/// let retry = Retry()
/// let gauges = LoaderGauges([.running(in: throttle), .waiting(in: throttle), .waiting(in: retry)])
/// let sampler = Task { await gauges.run(every: .seconds(10)) }  // until cancelled
/// ```
///
/// Each sample reads every loader's count once (under its lock, as `Throttle.waitingCount` does) and sets its
/// gauge. Any count the app can read becomes a gauge with ``Reading/init(label:dimensions:count:)`` — an
/// `OAuth` or `BasicAuth` loader's `waitingCount`, say.
public struct LoaderGauges: Sendable {
    /// One count and the gauge it sets.
    public struct Reading: Sendable {
        /// The gauge's label.
        public let label: String
        /// The gauge's dimensions.
        public let dimensions: [(String, String)]
        let count: @Sendable () -> Int

        /// A gauge `label` with `dimensions`, set to `count()` at each sample.
        ///
        /// - Parameters:
        ///   - label: The gauge's label.
        ///   - dimensions: Its dimensions; keep them bounded.
        ///   - count: Reads the value; called once per sample, so it must be quick and must not block.
        public init(label: String, dimensions: [(String, String)] = [], count: @escaping @Sendable () -> Int) {
            self.label = label
            self.dimensions = dimensions
            self.count = count
        }

        /// `http.client.throttle.running`: the requests holding one of `throttle`'s slots.
        public static func running(in throttle: Throttle, dimensions: [(String, String)] = []) -> Reading {
            Reading(label: "http.client.throttle.running", dimensions: dimensions) { [weak throttle] in
                throttle?.runningCount ?? 0
            }
        }

        /// `http.client.throttle.waiting`: the requests parked in `throttle`'s queue for a slot.
        public static func waiting(in throttle: Throttle, dimensions: [(String, String)] = []) -> Reading {
            Reading(label: "http.client.throttle.waiting", dimensions: dimensions) { [weak throttle] in
                throttle?.waitingCount ?? 0
            }
        }

        /// `http.client.retry.waiting`: the requests waiting out `retry`'s delay before their next attempt.
        public static func waiting(in retry: Retry, dimensions: [(String, String)] = []) -> Reading {
            Reading(label: "http.client.retry.waiting", dimensions: dimensions) { [weak retry] in
                retry?.waitingCount ?? 0
            }
        }

        /// `http.client.deduplicate.in_flight`: the loads `deduplicate` has sent and shares.
        public static func inFlight(in deduplicate: Deduplicate, dimensions: [(String, String)] = []) -> Reading {
            Reading(label: "http.client.deduplicate.in_flight", dimensions: dimensions) { [weak deduplicate] in
                deduplicate?.inFlightCount ?? 0
            }
        }

        /// `http.client.deduplicate.waiting`: the callers waiting for a load `deduplicate` shares with them.
        public static func waiting(in deduplicate: Deduplicate, dimensions: [(String, String)] = []) -> Reading {
            Reading(label: "http.client.deduplicate.waiting", dimensions: dimensions) { [weak deduplicate] in
                deduplicate?.waitingCount ?? 0
            }
        }
    }

    private let readings: [(reading: Reading, gauge: Gauge)]

    /// Gauges for `readings`, made with `factory`.
    ///
    /// - Parameters:
    ///   - readings: The counts to sample. Loaders are held weakly: a gauge of a loader that is gone reads 0.
    ///   - factory: The metrics backend; `MetricsSystem.factory` by default.
    public init(_ readings: [Reading], factory: any MetricsFactory = MetricsSystem.factory) {
        self.readings = readings.map { reading in
            (reading, Gauge(label: reading.label, dimensions: reading.dimensions, factory: factory))
        }
    }

    /// Reads every count once and sets its gauge.
    public func sample() {
        for (reading, gauge) in readings { gauge.record(reading.count()) }
    }

    /// Samples now and then every `interval`, until the task is cancelled.
    ///
    /// - Parameters:
    ///   - interval: The time between samples; a dashboard's scrape interval is a good choice.
    ///   - clock: The clock to wait on; a `ContinuousClock` by default.
    public func run<C: Clock<Duration>>(every interval: Duration, clock: C = ContinuousClock()) async {
        while !Task.isCancelled {
            sample()
            do { try await clock.sleep(for: interval) } catch { return }
        }
    }
}

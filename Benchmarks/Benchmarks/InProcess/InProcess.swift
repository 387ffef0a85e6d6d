import Benchmark
import BenchmarkSupport

// Time and allocations per request in process, over a canned terminal (see CannedResponse for why not
// MockLoader): the terminal alone, the default chain, 0…16 pass-through loaders, CircuitBreaker (closed, and open:
// refusing) and Deduplicate (nothing to share), and swift-openapi-runtime's UniversalClient with 0…16 pass-through
// middlewares over a canned transport. Every figure is per request (the scaling factor is 1,000 requests per
// iteration).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: isQuickRun ? .milliseconds(100) : .seconds(1),
        maxIterations: isQuickRun ? 5 : 1_000
    )

    func register(_ name: String, _ makeSubject: @escaping @Sendable () -> InProcessSubject) {
        Benchmark(name) { benchmark async in
            let subject = makeSubject()
            _ = await subject.run(iterations: 1)  // builds lazily created state outside the measurement
            benchmark.startMeasurement()
            blackHole(await subject.run(iterations: benchmark.scaledIterations.count))
        }
    }

    register("terminal (CannedResponse) alone") { .terminal() }
    register("default chain (ApplyEnvironment → Auth → Retry → Throttle)") { .defaultChain() }
    for link in DefaultChainLink.allCases {
        register("default chain's \(link.rawValue) alone") { .link(link) }
    }
    for count in [0, 1, 4, 8, 16] {
        register("loaders: \(count) pass-through") { .passThroughLoaders(count) }
    }
    register("CircuitBreaker, closed") { .closedCircuitBreaker() }
    register("Deduplicate, nothing shared") { .deduplicateAlone() }
    Benchmark("CircuitBreaker, open: a refused request") { benchmark async in
        let subject = await InProcessSubject.openCircuitBreaker()
        _ = await subject.run(iterations: 1)
        benchmark.startMeasurement()
        blackHole(await subject.run(iterations: benchmark.scaledIterations.count))
    }
    register("openapi-runtime: CannedTransport alone") { .openAPITransport(CannedTransport()) }
    for count in [0, 1, 4, 8, 16] {
        register("openapi-runtime: \(count) pass-through middlewares") { .passThroughMiddlewares(count) }
    }
}

import Benchmark
import BenchmarkSupport
import Foundation

// Requests over loopback to the nginx scripts/bench.sh starts (NGINX_URL): raw URLSession data(for:),
// URLSessionLoader alone, the default chain over URLSessionLoader, and swift-openapi-urlsession's transport
// behind four middlewares, all with the same URLSessionConfiguration. Sequential figures are per request; at
// concurrency 16 an iteration is 1,600 requests by 16 workers, and throughput is in iterations per second.
// Without NGINX_URL nothing is registered.
let benchmarks: @Sendable () -> Void = {
    guard let baseURL = nginxURL else { return }
    let clients: [any LoopbackClient] = [
        RawURLSessionClient(baseURL: baseURL),
        URLSessionLoaderClient(baseURL: baseURL),
        ChainClient(baseURL: baseURL),
        OpenAPIURLSessionClient(baseURL: baseURL),
    ]
    for client in clients {
        Benchmark(
            "sequential: \(client.name)",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal, .throughput],
                timeUnits: .microseconds,
                warmupIterations: isQuickRun ? 10 : 100,
                maxDuration: isQuickRun ? .milliseconds(200) : .seconds(2),
                maxIterations: isQuickRun ? 50 : 5_000
            )
        ) { benchmark async throws in
            for _ in benchmark.scaledIterations { blackHole(try await client.fetchPerson()) }
        }
        Benchmark(
            "concurrency 16: \(client.name)",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
                timeUnits: .milliseconds,
                warmupIterations: 1,
                maxDuration: isQuickRun ? .milliseconds(200) : .seconds(3),
                maxIterations: isQuickRun ? 2 : 20
            )
        ) { benchmark async throws in
            blackHole(try await runLoopback(client, count: 1_600, concurrency: 16).elapsed)
        }
    }
}

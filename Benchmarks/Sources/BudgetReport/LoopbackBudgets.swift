import BenchmarkSupport
import Foundation

/// Compares the loopback clients' throughput against nginx and checks the loopback budgets: the default
/// chain over `URLSessionLoader` reaches ≥ 0.95× raw `URLSession` throughput sequentially and at concurrency
/// 16, beats swift-openapi-urlsession's transport, and opens no more TCP connections than raw `URLSession`.
///
/// Every round runs each client once per mode, in a rotated order; each ratio is the median of the ratios
/// within the rounds, so both sides of a ratio always ran back to back.
func measureLoopback(baseURL: URL, rounds: Int, sequentialCount: Int, concurrentCount: Int) async throws -> Section {
    let clients: [any LoopbackClient] = [
        RawURLSessionClient(baseURL: baseURL),
        ChainClient(baseURL: baseURL),
        OpenAPIURLSessionClient(baseURL: baseURL),
    ]
    let modes: [(name: String, concurrency: Int, count: Int)] = [
        ("sequential", 1, sequentialCount),
        ("concurrency 16", 16, concurrentCount),
    ]

    for client in clients {  // warm-up: connections, URLSession's threads, code paths
        _ = try await runLoopback(client, count: 200, concurrency: 1)
        _ = try await runLoopback(client, count: 800, concurrency: 16)
    }

    // rate[mode][client] per round; connections per 1,000 requests likewise
    var rates = [[[Double]]](repeating: [[Double]](repeating: [], count: clients.count), count: modes.count)
    var connections = rates
    for round in 0..<rounds {
        for (modeIndex, mode) in modes.enumerated() {
            for index in clients.indices {
                let clientIndex = (index + round) % clients.count
                let acceptedBefore = await nginxAcceptedConnections(baseURL: baseURL)
                let elapsed = try await runLoopback(
                    clients[clientIndex], count: mode.count, concurrency: mode.concurrency)
                let acceptedAfter = await nginxAcceptedConnections(baseURL: baseURL)
                rates[modeIndex][clientIndex].append(Double(mode.count) / (elapsed.nanoseconds / 1e9))
                if let acceptedBefore, let acceptedAfter {
                    // (minus the status request's own connection)
                    let opened = Double(acceptedAfter - acceptedBefore - 1)
                    connections[modeIndex][clientIndex].append(opened * 1000 / Double(mode.count))
                }
            }
        }
    }

    var section = Section(
        title:
            "Over loopback (nginx, 213-byte JSON; \(rounds) rounds of \(sequentialCount) sequential, \(concurrentCount) at concurrency 16; medians)"
    )
    for (modeIndex, mode) in modes.enumerated() {
        let rate = rates[modeIndex]
        for (clientIndex, client) in clients.enumerated() {
            let requestsPerSecond = median(rate[clientIndex])
            var measured = "\(format(requestsPerSecond, decimals: 0)) req/s"
            if mode.concurrency == 1 { measured += ", \(format(1e6 / requestsPerSecond, decimals: 0)) µs/req" }
            section.rows.append(.info("\(mode.name): \(client.name)", measured))
        }
        let toRaw = median(zip(rate[1], rate[0]).map { $0 / $1 })
        let toOpenAPI = median(zip(rate[1], rate[2]).map { $0 / $1 })
        section.rows.append(
            .check(
                "\(mode.name): chain ÷ raw URLSession throughput",
                format(toRaw, decimals: 3),
                budget: "≥ 0.95",
                passes: toRaw >= 0.95
            )
        )
        section.rows.append(
            .check(
                "\(mode.name): chain ÷ swift-openapi-urlsession throughput",
                format(toOpenAPI, decimals: 3),
                budget: "> 1",
                passes: toOpenAPI > 1
            )
        )
        let opened = connections[modeIndex]
        if opened[0].isEmpty || opened[1].isEmpty {
            section.rows.append(
                Row(
                    figure: "\(mode.name): new TCP connections per 1k requests",
                    measured: "n/a (no /nginx_status)",
                    budget: "no needless churn",
                    verdict: .skipped
                )
            )
        } else {
            let raw = median(opened[0])
            let chain = median(opened[1])
            let openAPI = opened[2].isEmpty ? Double.nan : median(opened[2])
            section.rows.append(
                .check(
                    "\(mode.name): new TCP connections per 1k requests (chain; raw, openapi)",
                    "\(format(chain, decimals: 1)) (\(format(raw, decimals: 1)), \(format(openAPI, decimals: 1)))",
                    budget: "≤ 1.2 × raw + 1",
                    passes: chain <= 1.2 * raw + 1
                )
            )
        }
    }
    return section
}

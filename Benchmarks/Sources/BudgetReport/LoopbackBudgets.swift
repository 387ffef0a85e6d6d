import BenchmarkSupport
import Foundation

/// Compares the loopback clients' throughput against nginx and checks the loopback budgets: the default
/// chain over `URLSessionLoader` reaches ≥ 0.95× raw `URLSession` throughput sequentially and at concurrency
/// 16, beats swift-openapi-urlsession's transport, and opens no more TCP connections than raw `URLSession`.
/// `URLSessionLoader` alone is measured too, to tell the terminal's share of a gap from the chain's.
///
/// Every round makes each client afresh (a new session, new connections), warms it up, and runs it once per
/// mode, in a rotated order; each ratio is the median of the ratios within the rounds, so both sides of a
/// ratio always ran close together. Fresh clients matter: a session keeps its connections, and how fast a
/// set of connections happens to be persists for the session's life — with one session per client for the
/// whole run, two identical raw clients differed by several percent from run to run.
///
/// Within a round, each client's requests are sent in `slices` slices, the clients taking turns slice by
/// slice: the machine's speed drifts over a round, and the finer the turns, the more evenly each client
/// meets the drift.
///
/// A second raw client runs beside the first: the ratio of the two is the noise floor of the ratios. Each
/// ratio is shown with an approximate 95% confidence interval for its median.
func measureLoopback(
    baseURL: URL, rounds: Int, slices: Int, sequentialCount: Int, concurrentCount: Int
) async throws -> Section {
    // `raw` reuses one `URLRequest` for every call; `rawPerCall` makes one per call, as the chain must.
    let raw = 0
    let rawAgain = 1
    let rawPerCall = 2
    let loaderAlone = 3
    let chain = 4
    let openAPI = 5
    let makeClients: () -> [any LoopbackClient] = {
        [
            RawURLSessionClient(baseURL: baseURL),
            RawURLSessionClient(baseURL: baseURL),
            RawURLSessionClient(baseURL: baseURL, requestPerCall: true),
            URLSessionLoaderClient(baseURL: baseURL),
            ChainClient(baseURL: baseURL),
            OpenAPIURLSessionClient(baseURL: baseURL),
        ]
    }
    let names =
        ["raw URLSession data(for:)", "raw URLSession data(for:), a second client"]
        + makeClients().dropFirst(2).map(\.name)
    let modes: [(name: String, concurrency: Int, count: Int)] = [
        ("sequential", 1, sequentialCount),
        ("concurrency 16", 16, concurrentCount),
    ]

    // [mode][client] → one value per round: requests per second, CPU µs per request, new connections per 1k
    let empty = [[[Double]]](repeating: [[Double]](repeating: [], count: names.count), count: modes.count)
    var rates = empty
    var cpu = empty
    var connections = empty
    for round in 0..<rounds {
        let clients = makeClients()
        defer { for client in clients { client.close() } }
        for client in clients {  // warm-up: connections, URLSession's threads, code paths
            _ = try await runLoopback(client, count: round == 0 ? 200 : 50, concurrency: 1)
            _ = try await runLoopback(client, count: round == 0 ? 800 : 200, concurrency: 16)
        }
        for (modeIndex, mode) in modes.enumerated() {
            // Per client, summed over the slices: seconds, CPU seconds, connections opened (nil: unknown).
            var elapsed = [Double](repeating: 0, count: clients.count)
            var cpuSeconds = elapsed
            var opened: [Double?] = elapsed
            let sliceCount = max(1, mode.count / slices)
            for slice in 0..<slices {
                for index in clients.indices {
                    let clientIndex = (index + round + slice) % clients.count
                    let acceptedBefore = await nginxAcceptedConnections(baseURL: baseURL)
                    let run = try await runLoopback(
                        clients[clientIndex], count: sliceCount, concurrency: mode.concurrency)
                    let acceptedAfter = await nginxAcceptedConnections(baseURL: baseURL)
                    elapsed[clientIndex] += run.elapsed.nanoseconds / 1e9
                    cpuSeconds[clientIndex] += run.cpu.nanoseconds / 1e9
                    if let acceptedBefore, let acceptedAfter, let sum = opened[clientIndex] {
                        // (minus the status request's own connection)
                        opened[clientIndex] = sum + Double(acceptedAfter - acceptedBefore - 1)
                    } else {
                        opened[clientIndex] = nil
                    }
                }
            }
            let sent = Double(sliceCount * slices)
            for clientIndex in clients.indices {
                rates[modeIndex][clientIndex].append(sent / elapsed[clientIndex])
                cpu[modeIndex][clientIndex].append(cpuSeconds[clientIndex] * 1e6 / sent)
                if let opened = opened[clientIndex] { connections[modeIndex][clientIndex].append(opened * 1000 / sent) }
            }
        }
    }

    var section = Section(
        title:
            "Over loopback (nginx, 213-byte JSON; \(rounds) rounds of \(sequentialCount) sequential, \(concurrentCount) at concurrency 16, in \(slices) turns per client; medians, 95% CIs)"
    )
    for (modeIndex, mode) in modes.enumerated() {
        let rate = rates[modeIndex]
        for (clientIndex, name) in names.enumerated() {
            let requestsPerSecond = median(rate[clientIndex])
            var measured = "\(format(requestsPerSecond, decimals: 0)) req/s"
            if mode.concurrency == 1 { measured += ", \(format(1e6 / requestsPerSecond, decimals: 0)) µs/req" }
            measured += ", CPU \(format(median(cpu[modeIndex][clientIndex]), decimals: 0)) µs/req"
            section.rows.append(.info("\(mode.name): \(name)", measured))
        }
        func ratios(_ numerator: Int, _ denominator: Int) -> [Double] {
            zip(rate[numerator], rate[denominator]).map { $0 / $1 }
        }
        func ratio(_ numerator: Int, _ denominator: Int) -> Double { median(ratios(numerator, denominator)) }
        /// The median ratio and its confidence interval, as the table shows them.
        func shown(_ numerator: Int, _ denominator: Int) -> String {
            let values = ratios(numerator, denominator)
            let interval = medianConfidenceInterval(values).map {
                " (\(format($0.low, decimals: 3))–\(format($0.high, decimals: 3)))"
            }
            return format(median(values), decimals: 3) + (interval ?? "")
        }
        section.rows.append(
            .info(
                "\(mode.name): raw ÷ raw again (the noise floor of these ratios)",
                shown(rawAgain, raw))
        )
        section.rows.append(
            .info(
                "\(mode.name): raw, URLRequest made per call ÷ raw", shown(rawPerCall, raw))
        )
        section.rows.append(
            .info("\(mode.name): URLSessionLoader alone ÷ raw URLSession", shown(loaderAlone, raw))
        )
        let toRaw = ratio(chain, raw)
        let toOpenAPI = ratio(chain, openAPI)
        section.rows.append(
            .check(
                "\(mode.name): chain ÷ raw URLSession throughput",
                shown(chain, raw),
                budget: "≥ 0.95",
                passes: toRaw >= 0.95
            )
        )
        section.rows.append(
            .check(
                "\(mode.name): chain ÷ swift-openapi-urlsession throughput",
                shown(chain, openAPI),
                budget: "> 1",
                passes: toOpenAPI > 1
            )
        )
        let opened = connections[modeIndex]
        if opened[raw].isEmpty || opened[chain].isEmpty {
            section.rows.append(
                Row(
                    figure: "\(mode.name): new TCP connections per 1k requests",
                    measured: "n/a (no /nginx_status)",
                    budget: "no needless churn",
                    verdict: .skipped
                )
            )
        } else {
            let rawOpened = median(opened[raw])
            let chainOpened = median(opened[chain])
            let openAPIOpened = opened[openAPI].isEmpty ? Double.nan : median(opened[openAPI])
            section.rows.append(
                .check(
                    "\(mode.name): new TCP connections/1k requests: chain (raw, openapi)",
                    "\(format(chainOpened, decimals: 1)) (\(format(rawOpened, decimals: 1)), \(format(openAPIOpened, decimals: 1)))",
                    budget: "≤ 1.2 × raw + 1",
                    passes: chainOpened <= 1.2 * rawOpened + 1
                )
            )
        }
    }
    return section
}

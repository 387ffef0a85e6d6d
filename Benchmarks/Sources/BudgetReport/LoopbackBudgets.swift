import BenchmarkSupport
import Foundation

/// Compares the loopback clients' throughput against nginx and checks the loopback budgets: the default
/// chain over `URLSessionLoader` reaches ≥ 0.95× the throughput of a raw `URLSession` client doing the same work
/// — a new `URLRequest` per call with the same header fields, as the chain must build one — sequentially and at
/// concurrency 16, judged on the mean of ``LoopbackPlan/runs`` runs with different random orders (DESIGN.md); beats
/// swift-openapi-urlsession's transport; and opens no more TCP connections than raw `URLSession`. A raw client
/// that reuses one `URLRequest` (less work than any real client does) and `URLSessionLoader` alone are shown too,
/// to tell the terminal's share of a gap from the chain's.
///
/// Every round makes each client afresh (a new session, new connections), warms it up, and runs it once per
/// mode, in a random order; each ratio is the median of the ratios within the rounds, so both sides of a
/// ratio always ran close together. Fresh clients matter: a session keeps its connections, and how fast a
/// set of connections happens to be persists for the session's life — with one session per client for the
/// whole run, two identical raw clients differed by several percent from run to run.
///
/// Within a round, each client's requests are sent in `slices` slices, the clients taking turns slice by
/// slice, in a new random order each time: the machine's speed drifts over a round, and the finer the turns,
/// the more evenly each client meets the drift; the random order keeps any client from always following
/// the same other one.
///
/// A second raw client runs beside the first: the ratio of the two is the noise floor of the ratios. Each
/// ratio is shown with an approximate 95% confidence interval for its median over the runs' rounds together;
/// a budget's verdict is the mean of the runs' medians, each run's shown beside it.
func measureLoopback(
    baseURL: URL, plan: LoopbackPlan
) async throws -> Section {
    let raw = 0
    let rawAgain = 1
    let rawPerCall = 2
    let loaderAlone = 3
    let chain = 4
    let openAPI = 5
    let separateRuns = try await repeatedLoopbackRuns(
        baseURL: baseURL, plan: plan, countsConnections: true,
        clients: [
            { RawURLSessionClient(baseURL: baseURL) },
            { RawURLSessionClient(baseURL: baseURL) },
            { RawURLSessionClient(baseURL: baseURL, request: .madePerCall) },
            { URLSessionLoaderClient(baseURL: baseURL) },
            { ChainClient(baseURL: baseURL) },
            { OpenAPIURLSessionClient(baseURL: baseURL) },
        ]
    )
    let runs = LoopbackRuns(pooling: separateRuns)
    var names = runs.names
    names[rawAgain] += ", a second client"
    let rates = runs.rates
    let cpu = runs.cpu
    let connections = runs.connections

    var section = Section(
        title:
            "Over loopback (nginx, 213-byte JSON; \(plan.description))"
    )
    for (modeIndex, mode) in plan.modes.enumerated() {
        let rate = rates[modeIndex]
        section.rows += clientRows(mode: mode, names: names, rates: rate, cpu: cpu[modeIndex])
        func shown(_ numerator: Int, _ denominator: Int) -> String {
            shownRatio(rate[numerator], to: rate[denominator])
        }
        section.rows.append(
            .info(
                "\(mode.name): raw ÷ raw again (the noise floor of these ratios)",
                shown(rawAgain, raw))
        )
        section.rows.append(
            .info(
                "\(mode.name): raw, URLRequest made per call ÷ raw, one reused URLRequest", shown(rawPerCall, raw))
        )
        section.rows.append(
            .info(
                "\(mode.name): URLSessionLoader alone ÷ raw, URLRequest made per call", shown(loaderAlone, rawPerCall))
        )
        section.rows.append(
            .info("\(mode.name): chain ÷ raw, one reused URLRequest", shown(chain, raw))
        )
        let toRaw = MeanOfRuns(separateRuns, mode: modeIndex, chain, to: rawPerCall)
        section.rows.append(
            .check(
                "\(mode.name): chain ÷ raw URLSession (URLRequest made per call), mean of runs",
                toRaw.description, budget: "≥ 0.95", passes: toRaw.mean >= 0.95)
        )
        let toOpenAPI = MeanOfRuns(separateRuns, mode: modeIndex, chain, to: openAPI)
        section.rows.append(
            .check(
                "\(mode.name): chain ÷ swift-openapi-urlsession throughput, mean of runs",
                toOpenAPI.description, budget: "> 1", passes: toOpenAPI.mean > 1)
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

/// A loopback mode: how many requests each client sends in a round, and how many at a time.
typealias LoopbackMode = (name: String, concurrency: Int, count: Int)

/// The two loopback modes: 400 requests per client and round sent one at a time, 1,200 sixteen at a time
/// (300 and 1,000 for a quick run).
func loopbackModes(quick: Bool) -> [LoopbackMode] {
    [("sequential", 1, quick ? 300 : 400), ("concurrency 16", 16, quick ? 1_000 : 1_200)]
}

/// What ``interleavedLoopbackRuns(baseURL:plan:countsConnections:clients:)`` measured:
/// for each mode and client, one value per round.
struct LoopbackRuns {
    /// The clients' names, in the order of the factories (none when there were no rounds).
    var names: [String]
    /// [mode][client][round]: requests per second.
    var rates: [[[Double]]]
    /// [mode][client][round]: the process's CPU µs per request.
    var cpu: [[[Double]]]
    /// [mode][client][round]: new TCP connections nginx accepted per 1k requests (empty without
    /// `/nginx_status` or when not counted).
    var connections: [[[Double]]]
}

extension LoopbackRuns {
    /// The rounds of several runs of the same clients together, for the medians and intervals the tables show.
    init(pooling runs: [LoopbackRuns]) {
        let first = runs.first ?? LoopbackRuns(names: [], rates: [], cpu: [], connections: [])
        func pooled(_ figure: KeyPath<LoopbackRuns, [[[Double]]]>) -> [[[Double]]] {
            first[keyPath: figure].indices.map { mode in
                first[keyPath: figure][mode].indices.map { client in
                    runs.flatMap { $0[keyPath: figure][mode][client] }
                }
            }
        }
        self.init(names: first.names, rates: pooled(\.rates), cpu: pooled(\.cpu), connections: pooled(\.connections))
    }
}

/// Runs the clients `plan.runs` times with ``interleavedLoopbackRuns(baseURL:plan:countsConnections:clients:)``,
/// each run with its own seed (`plan.seed`, `plan.seed + 1`, …) and so its own random orders: one result per run.
func repeatedLoopbackRuns(
    baseURL: URL, plan: LoopbackPlan, countsConnections: Bool,
    clients factories: [() -> any LoopbackClient]
) async throws -> [LoopbackRuns] {
    var runs: [LoopbackRuns] = []
    for run in 0..<plan.runs {
        var single = plan
        single.seed = plan.seed &+ UInt64(run)
        runs.append(
            try await interleavedLoopbackRuns(
                baseURL: baseURL, plan: single, countsConnections: countsConnections, clients: factories))
    }
    return runs
}

/// How a loopback budget is judged (DESIGN.md): in each run, the median of the per-round ratios of one
/// client's throughput to another's; then the mean of the runs' medians.
struct MeanOfRuns: CustomStringConvertible {
    /// Each run's median ratio.
    var perRun: [Double]
    var mean: Double { perRun.isEmpty ? .nan : perRun.reduce(0, +) / Double(perRun.count) }

    init(perRun: [Double]) {
        self.perRun = perRun
    }

    init(_ runs: [LoopbackRuns], mode: Int, _ numerator: Int, to denominator: Int) {
        perRun = runs.map { medianRatio($0.rates[mode][numerator], to: $0.rates[mode][denominator]) }
    }

    /// "0.968 (runs 0.961, 0.972, 0.970)"
    var description: String {
        guard perRun.count > 1 else { return format(mean, decimals: 3) }
        return "\(format(mean, decimals: 3)) (runs \(perRun.map { format($0, decimals: 3) }.joined(separator: ", ")))"
    }
}

/// Runs the loopback clients the factories `clients` make, in `plan.rounds` rounds of interleaved turns (see
/// ``measureLoopback(baseURL:plan:)``): every round makes them
/// afresh, warms them up, and for each mode lets them take `plan.slices` turns each, in a random order drawn anew
/// for every turn (from `plan.seed`: the same seed, the same orders).
///
/// With `countsConnections`, nginx's accepted connections are read before and after every turn, which takes
/// two status requests per turn (outside the timed part).
func interleavedLoopbackRuns(
    baseURL: URL, plan: LoopbackPlan, countsConnections: Bool,
    clients factories: [() -> any LoopbackClient]
) async throws -> LoopbackRuns {
    let modes = plan.modes
    let empty = [[[Double]]](repeating: [[Double]](repeating: [], count: factories.count), count: modes.count)
    var runs = LoopbackRuns(names: [], rates: empty, cpu: empty, connections: empty)
    var order = SeededGenerator(seed: plan.seed)
    for round in 0..<plan.rounds {
        // Made and warmed up in a random order too: with a fixed order, the raw client made and warmed up
        // first measured about 1% slower at concurrency 16 than the identical one after it (six runs).
        var made = [(any LoopbackClient)?](repeating: nil, count: factories.count)
        for index in factories.indices.shuffled(using: &order) { made[index] = factories[index]() }
        let clients = made.compactMap { $0 }
        defer { for client in clients { client.close() } }
        if round == 0 { runs.names = clients.map(\.name) }
        for index in clients.indices.shuffled(using: &order) {  // warm-up: connections, threads, code paths
            _ = try await runLoopback(clients[index], count: round == 0 ? 200 : 50, concurrency: 1)
            _ = try await runLoopback(clients[index], count: round == 0 ? 800 : 200, concurrency: 16)
        }
        for (modeIndex, mode) in modes.enumerated() {
            // Per client, summed over the turns: seconds, CPU seconds, connections opened (nil: unknown).
            var elapsed = [Double](repeating: 0, count: clients.count)
            var cpuSeconds = elapsed
            var opened: [Double?] = elapsed
            let sliceCount = max(1, mode.count / plan.slices)
            for _ in 0..<plan.slices {
                // A new order every turn: in a fixed cyclic order each client would always follow the same
                // one, and pay for whatever work that one leaves behind (measured: "raw ÷ raw again" 1.011
                // and 1.016 with the second raw client always following the first).
                for clientIndex in clients.indices.shuffled(using: &order) {
                    let acceptedBefore = countsConnections ? await nginxAcceptedConnections(baseURL: baseURL) : nil
                    let run = try await runLoopback(
                        clients[clientIndex], count: sliceCount, concurrency: mode.concurrency)
                    let acceptedAfter = countsConnections ? await nginxAcceptedConnections(baseURL: baseURL) : nil
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
            let sent = Double(sliceCount * plan.slices)
            for clientIndex in clients.indices {
                runs.rates[modeIndex][clientIndex].append(sent / elapsed[clientIndex])
                runs.cpu[modeIndex][clientIndex].append(cpuSeconds[clientIndex] * 1e6 / sent)
                if let opened = opened[clientIndex] {
                    runs.connections[modeIndex][clientIndex].append(opened * 1000 / sent)
                }
            }
        }
    }
    return runs
}

/// One row per client: its median throughput (and time per request, sequentially) and CPU per request.
func clientRows(mode: LoopbackMode, names: [String], rates: [[Double]], cpu: [[Double]]) -> [Row] {
    names.indices.map { clientIndex in
        let requestsPerSecond = median(rates[clientIndex])
        var measured = "\(format(requestsPerSecond, decimals: 0)) req/s"
        if mode.concurrency == 1 { measured += ", \(format(1e6 / requestsPerSecond, decimals: 0)) µs/req" }
        measured += ", CPU \(format(median(cpu[clientIndex]), decimals: 0)) µs/req"
        return .info("\(mode.name): \(names[clientIndex])", measured)
    }
}

/// The per-round ratios of `numerator` to `denominator`.
private func roundRatios(_ numerator: [Double], to denominator: [Double]) -> [Double] {
    zip(numerator, denominator).map { $0 / $1 }
}

/// The median of the per-round ratios of `numerator` to `denominator`.
func medianRatio(_ numerator: [Double], to denominator: [Double]) -> Double {
    median(roundRatios(numerator, to: denominator))
}

/// ``medianRatio(_:to:)``, with its 95% confidence interval, as the tables show it.
func shownRatio(_ numerator: [Double], to denominator: [Double]) -> String {
    let ratios = roundRatios(numerator, to: denominator)
    let interval = medianConfidenceInterval(ratios).map {
        " (\(format($0.low, decimals: 3))–\(format($0.high, decimals: 3)))"
    }
    return format(median(ratios), decimals: 3) + (interval ?? "")
}

/// How a loopback measurement runs: its rounds, the turns each client takes per round and mode, the modes,
/// and the seed of its random orders.
struct LoopbackPlan {
    /// Rounds per run.
    var rounds: Int
    var slices: Int
    var modes: [LoopbackMode]
    /// The first run's seed: the same seed gives every run the same orders; another seed, other orders.
    var seed: UInt64
    /// How many runs a budget is judged on, each with its own seed (`seed`, `seed + 1`, …).
    var runs: Int = 1

    /// For a section's title: "3 runs (seeds 6–8) of 11 rounds of 400 sequential, 1200 at concurrency 16, in 8
    /// turns per client; medians, 95% CIs".
    var description: String {
        let counts = modes.map { $0.concurrency == 1 ? "\($0.count) sequential" : "\($0.count) at \($0.name)" }
        let repeated = runs == 1 ? "" : "\(runs) runs (seeds \(seed)–\(seed &+ UInt64(runs - 1))) of "
        return
            "\(repeated)\(rounds) rounds of \(counts.joined(separator: ", ")), in \(slices) turn\(slices == 1 ? "" : "s") "
            + "per client\(runs == 1 && seed != LoopbackPlan.defaultSeed ? ", seed \(seed)" : ""); medians, 95% CIs"
    }

    /// The seed of the orders unless `--seed` sets another.
    static let defaultSeed: UInt64 = 6
}

/// Takes apart what a request over loopback costs `URLSessionLoader` beyond raw `URLSession.data(for:)` with
/// one reused `URLRequest`: what a new `URLRequest` per call costs, with and without a new URL; what the
/// conversion from `HTTPRequest` costs; and what the completion-handler path the loader takes on Linux costs,
/// with the immediate delegate queue the loader gives its session and with URLSession's own queue; then what
/// each link of the default chain, alone in front of the loader, and the whole chain add to the loader. No
/// budget: it tells where the chain's gap goes. Measured like the loopback budgets.
func measureLoopbackBreakdown(
    baseURL: URL, plan: LoopbackPlan
) async throws -> Section {
    let runs = LoopbackRuns(
        pooling: try await repeatedLoopbackRuns(
            baseURL: baseURL, plan: plan, countsConnections: false,
            clients: [
                { RawURLSessionClient(baseURL: baseURL) },
                { RawURLSessionClient(baseURL: baseURL, request: .madePerCall) },
                { RawURLSessionClient(baseURL: baseURL, request: .madePerCallAroundOneURL) },
                { RawURLSessionClient(baseURL: baseURL, request: .convertedPerCall) },
                { CompletionHandlerClient(baseURL: baseURL, immediateDelegateQueue: true) },
                { CompletionHandlerClient(baseURL: baseURL, immediateDelegateQueue: false) },
                { URLSessionLoaderClient(baseURL: baseURL) },
            ] + DefaultChainLink.allCases.map { link in { ChainLinkClient(link: link, baseURL: baseURL) } } + [
                { ChainClient(baseURL: baseURL) }
            ]
        ))
    let loaderAlone = 6
    // URLSession's side, against raw data(for:) reusing one URLRequest; the chain's links (and the chain),
    // against URLSessionLoader alone.
    return ratioSection(
        title: "Loopback breakdown (\(plan.description))", runs: runs, modes: plan.modes,
        baseline: { $0 <= loaderAlone ? 0 : loaderAlone })
}

/// Measures the loopback clients the factories make against the first of them, like the loopback budgets
/// (`BudgetReport --compare`): an A/B test of one change.
func measureLoopbackComparison(
    baseURL: URL, plan: LoopbackPlan, clients: [() -> any LoopbackClient]
) async throws -> Section {
    let runs = LoopbackRuns(
        pooling: try await repeatedLoopbackRuns(
            baseURL: baseURL, plan: plan, countsConnections: false, clients: clients))
    return ratioSection(
        title: "Loopback comparison (\(plan.description))", runs: runs, modes: plan.modes, baseline: { _ in 0 })
}

/// For each mode, a row per client and a row per ratio of a client (all but the first) to its baseline
/// client (`baseline` gives its index).
private func ratioSection(
    title: String, runs: LoopbackRuns, modes: [LoopbackMode], baseline: (Int) -> Int
) -> Section {
    var section = Section(title: title)
    for (modeIndex, mode) in modes.enumerated() {
        let rates = runs.rates[modeIndex]
        section.rows += clientRows(mode: mode, names: runs.names, rates: rates, cpu: runs.cpu[modeIndex])
        for clientIndex in runs.names.indices.dropFirst() {
            let baselineIndex = baseline(clientIndex)
            section.rows.append(
                .info(
                    "\(mode.name): \(runs.names[clientIndex]) ÷ \(runs.names[baselineIndex])",
                    shownRatio(rates[clientIndex], to: rates[baselineIndex])
                )
            )
        }
    }
    return section
}

/// The loopback budgets of the AsyncHTTPClient transport (DESIGN.md, decided 2026-11-28): the default chain over
/// `AsyncHTTPClientLoader` reaches ≥ 0.90× raw AsyncHTTPClient's fastest API and ≥ 1.0× swift-openapi-async-http-client
/// behind four middlewares that stand for the chain, sequentially and at concurrency 16, judged on the mean of the
/// runs' medians; the CPU the chain adds per request (`getrusage`, the whole process) is reported beside them; and it
/// opens no more connections than raw AsyncHTTPClient. "Fastest API" is, in each round, whichever of
/// `execute(_:timeout:)` (async/await) and `execute(request:)` (the response delegate) was faster in that round. The
/// URLSession clients run in the same rounds, so that both transports' figures come from the same minutes of the same
/// machine. Measured like ``measureLoopback(baseURL:plan:)``.
func measureAsyncHTTPClientLoopback(baseURL: URL, plan: LoopbackPlan) async throws -> Section {
    let raw = 0
    let rawAgain = 1
    let rawDelegate = 2
    let loaderAlone = 3
    let chain = 4
    let openAPI = 5
    let rawURLSession = 6
    let chainURLSession = 7
    let separateRuns = try await repeatedLoopbackRuns(
        baseURL: baseURL, plan: plan, countsConnections: true,
        clients: [
            { RawAsyncHTTPClientClient(baseURL: baseURL) },
            { RawAsyncHTTPClientClient(baseURL: baseURL) },
            { RawAsyncHTTPClientClient(baseURL: baseURL, api: .delegate) },
            { AsyncHTTPClientChainClient(baseURL: baseURL, chain: false) },
            { AsyncHTTPClientChainClient(baseURL: baseURL) },
            { OpenAPIAsyncHTTPClientClient(baseURL: baseURL) },
            { RawURLSessionClient(baseURL: baseURL, request: .madePerCall) },
            { ChainClient(baseURL: baseURL) },
        ]
    )
    let runs = LoopbackRuns(pooling: separateRuns)
    var names = runs.names
    names[rawAgain] += ", a second client"
    var section = Section(title: "Over loopback, the AsyncHTTPClient transport (nginx; \(plan.description))")
    for (modeIndex, mode) in plan.modes.enumerated() {
        let rate = runs.rates[modeIndex]
        section.rows += clientRows(mode: mode, names: names, rates: rate, cpu: runs.cpu[modeIndex])
        func shown(_ numerator: Int, _ denominator: Int) -> String {
            shownRatio(rate[numerator], to: rate[denominator])
        }
        section.rows.append(.info("\(mode.name): raw ÷ raw again (the noise floor)", shown(rawAgain, raw)))
        section.rows.append(
            .info("\(mode.name): raw execute(request:) ÷ raw execute(_:timeout:)", shown(rawDelegate, raw)))
        section.rows.append(
            .info("\(mode.name): AsyncHTTPClientLoader alone ÷ raw execute(request:)", shown(loaderAlone, rawDelegate)))
        for (baseline, label) in [(raw, "execute(_:timeout:)"), (rawDelegate, "execute(request:)")] {
            section.rows.append(.info("\(mode.name): chain ÷ raw AsyncHTTPClient \(label)", shown(chain, baseline)))
        }
        let fastest = FastestOfRuns(separateRuns, mode: modeIndex, of: [raw, rawDelegate])
        let toRaw = fastest.meanOfRuns(chain)
        section.rows.append(
            .check(
                "\(mode.name): chain over AsyncHTTPClient ÷ raw AsyncHTTPClient's fastest API, mean of runs",
                toRaw.description, budget: "≥ 0.90", passes: toRaw.mean >= 0.90))
        let toOpenAPI = MeanOfRuns(separateRuns, mode: modeIndex, chain, to: openAPI)
        section.rows.append(
            .check(
                "\(mode.name): chain over AsyncHTTPClient ÷ swift-openapi-async-http-client + 4 middlewares, "
                    + "mean of runs",
                toOpenAPI.description, budget: "≥ 1.0", passes: toOpenAPI.mean >= 1.0))
        section.rows.append(
            .info(
                "\(mode.name): CPU the chain adds per request over raw's fastest API (over the loader alone)",
                "\(fastest.addedCPU(chain)) (\(fastest.addedCPU(loaderAlone)))"))
        section.rows.append(
            .info("\(mode.name): raw AsyncHTTPClient ÷ raw URLSession (URLRequest per call)", shown(raw, rawURLSession))
        )
        section.rows.append(
            .info("\(mode.name): chain over AsyncHTTPClient ÷ chain over URLSession", shown(chain, chainURLSession)))
        let opened = runs.connections[modeIndex]
        if !opened[raw].isEmpty, !opened[chain].isEmpty {
            let rawOpened = median(opened[raw])
            let chainOpened = median(opened[chain])
            section.rows.append(
                .check(
                    "\(mode.name): new TCP connections/1k requests: chain over AsyncHTTPClient (raw)",
                    "\(format(chainOpened, decimals: 1)) (\(format(rawOpened, decimals: 1)))",
                    budget: "≤ 1.2 × raw + 1", passes: chainOpened <= 1.2 * rawOpened + 1))
        }
    }
    return section
}

/// A baseline that is, in each round, the fastest of several clients (raw AsyncHTTPClient's two APIs): ratios to it
/// judged as ``MeanOfRuns`` judges them, and the CPU per request a client adds to it.
struct FastestOfRuns {
    private let runs: [LoopbackRuns]
    private let mode: Int
    /// [run][round]: the index of the fastest baseline client in that round.
    private let fastest: [[Int]]

    init(_ runs: [LoopbackRuns], mode: Int, of candidates: [Int]) {
        self.runs = runs
        self.mode = mode
        fastest = runs.map { run in
            let rounds = run.rates[mode][candidates[0]].indices
            return rounds.map { round in candidates.max { run.rates[mode][$0][round] < run.rates[mode][$1][round] }! }
        }
    }

    /// In each run, the median of the per-round ratios of `client`'s throughput to the fastest's; their mean.
    func meanOfRuns(_ client: Int) -> MeanOfRuns {
        MeanOfRuns(
            perRun: zip(runs, fastest).map { run, fastest in
                median(fastest.indices.map { run.rates[mode][client][$0] / run.rates[mode][fastest[$0]][$0] })
            })
    }

    /// The median over every run's rounds of the CPU µs per request `client` took beyond the fastest baseline,
    /// with its 95% confidence interval: "12.3 µs (10.1–14.0)".
    func addedCPU(_ client: Int) -> String {
        let added = zip(runs, fastest).flatMap { run, fastest in
            fastest.indices.map { run.cpu[mode][client][$0] - run.cpu[mode][fastest[$0]][$0] }
        }
        let interval = medianConfidenceInterval(added).map {
            " (\(format($0.low, decimals: 1))–\(format($0.high, decimals: 1)))"
        }
        return "\(format(median(added), decimals: 1)) µs" + (interval ?? "")
    }
}

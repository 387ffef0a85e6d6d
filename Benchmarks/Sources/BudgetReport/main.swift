import BenchmarkSupport
import Foundation

// Measures the figures DESIGN.md's "Performance budgets" name and prints them with their budgets and PASS or
// FAIL. Run by scripts/bench.sh, which starts nginx and sets NGINX_URL; without NGINX_URL the loopback
// section is skipped.
//
//   BudgetReport [--quick] [--strict]
//                [--only inprocess,cold,loopback,asynchttpclient,openapi,observability,scale,resilience,cache,
//                        transfers,connection-stream,jsonlines,sse,breakdown]
//                [--breakdown]
//                [--loopback-runs N] [--loopback-rounds N] [--loopback-slices N] [--seed N]
//   BudgetReport --spin default|terminal|cache-hit|loaders-N|middlewares-N SECONDS
//   BudgetReport --send CLIENT COUNT [CONCURRENCY]
//   BudgetReport --compare CLIENT,CLIENT[,CLIENT...] [--loopback-runs N] [--loopback-rounds N] [--loopback-slices N]
//                [--seed N]
//   BudgetReport --transfer KIND URL FILE
//
//   --quick    fewer rounds and iterations (a smoke test, not a measurement)
//   --strict   exit with status 1 when a budget fails
//   --only     run only the named sections (breakdown is not run unless named)
//   --breakdown
//              also take the chain's loopback cost apart (raw URLSession with a URLRequest made per call,
//              with HTTPRequest.urlRequest(), the completion-handler path, each chain link alone): no
//              budgets, 5 more minutes
//   --transfer only run one transfer (chain-download, raw-download, curl-download, chain-upload) of URL to or from
//              FILE and print its bytes, seconds and peak RSS rise: what the transfers section runs in a child
//              process per transfer
//   --loopback-runs
//              runs of each loopback section (3 by default), each with its own seed: a budget's verdict is the
//              mean of the runs' median ratios (DESIGN.md)
//   --loopback-rounds
//              rounds per run (11 by default); more rounds, more precise ratios
//   --loopback-slices
//              turns each loopback client takes per round and mode (8 by default)
//   --seed     the first loopback run's seed of its random orders (6 by default; the next runs take 7, 8, …): the
//              same seeds, the same orders; other seeds differ in their orders as well as in the machine's noise
//   --spin     only send requests to one in-process subject for SECONDS, for a profiler:
//              perf record -g .build/release/BudgetReport --spin default 10
//   --send     only send COUNT requests to nginx (NGINX_URL) with one loopback client, CONCURRENCY at a
//              time (1 by default), for a profiler (the usage message lists the clients: raw, raw-per-call,
//              loader, loaders-16, link-auth, chain, openapi, …):
//              perf record -F 10000 -e cpu-clock -g .build/release/BudgetReport --send chain 25000
//   --compare  only measure the named loopback clients against the first of them, the way the loopback
//              budgets are measured (rounds of interleaved turns, medians of ratios, 95% CIs): an A/B test
//              of one change, e.g. --compare loader,chain (about 1 minute per client for 3 × 11 rounds)

struct Options {
    var quick = false
    var strict = false
    var sections: Set<String> = [
        "inprocess", "cold", "loopback", "asynchttpclient", "openapi", "observability", "scale", "resilience",
        "cache", "transfers", "connection-stream", "jsonlines", "sse",
    ]
    var spin: (subject: InProcessSubject, seconds: Double)?
    var loopbackRounds: Int?
    var loopbackRuns: Int?
    var loopbackSlices: Int?
    var seed: UInt64?
    var send: (client: String, count: Int, concurrency: Int)?
    var compare: [String]?
    var transfer: (kind: TransferKind, url: URL, file: URL)?

    init(arguments: [String]) {
        var remaining = arguments.dropFirst()
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--strict": strict = true
            case "--breakdown": sections.insert("breakdown")
            case "--only":
                guard let list = remaining.popFirst() else { Self.usage() }
                sections = Set(list.split(separator: ",").map { String($0) })
            case "--loopback-runs":
                guard let runs = remaining.popFirst().flatMap(Int.init), runs > 0 else { Self.usage() }
                loopbackRuns = runs
            case "--loopback-rounds":
                guard let rounds = remaining.popFirst().flatMap(Int.init), rounds > 0 else { Self.usage() }
                loopbackRounds = rounds
            case "--spin":
                guard let name = remaining.popFirst(), let subject = Self.subject(named: name),
                    let seconds = remaining.popFirst().flatMap(Double.init)
                else { Self.usage() }
                spin = (subject, seconds)
            case "--seed":
                guard let value = remaining.popFirst().flatMap(UInt64.init) else { Self.usage() }
                seed = value
            case "--loopback-slices":
                guard let slices = remaining.popFirst().flatMap(Int.init), slices > 0 else { Self.usage() }
                loopbackSlices = slices
            case "--send":
                guard let name = remaining.popFirst(), Self.loopbackClient(named: name) != nil,
                    let count = remaining.popFirst().flatMap(Int.init), count >= 0
                else { Self.usage() }
                var concurrency = 1
                if let next = remaining.first, let value = Int(next) {
                    guard value > 0 else { Self.usage() }
                    concurrency = value
                    remaining = remaining.dropFirst()
                }
                send = (name, count, concurrency)
            case "--compare":
                guard let list = remaining.popFirst() else { Self.usage() }
                let names = list.split(separator: ",").map(String.init)
                guard names.count >= 2, names.allSatisfy({ Self.loopbackClient(named: $0) != nil }) else {
                    Self.usage()
                }
                compare = names
            case "--transfer":
                guard let kind = remaining.popFirst().flatMap(TransferKind.init(rawValue:)),
                    let url = remaining.popFirst().flatMap(URL.init(string:)), let file = remaining.popFirst()
                else { Self.usage() }
                transfer = (kind, url, URL(fileURLWithPath: file))
            default: Self.usage()
            }
        }
    }

    /// How the loopback sections run. Many short rounds rather than a few long ones: this machine's speed
    /// drifts by ±10% over seconds, and each ratio is taken within a round.
    var loopbackPlan: LoopbackPlan {
        LoopbackPlan(
            rounds: loopbackRounds ?? (quick ? 2 : 11), slices: loopbackSlices ?? (quick ? 1 : 8),
            modes: loopbackModes(quick: quick), seed: seed ?? LoopbackPlan.defaultSeed,
            runs: loopbackRuns ?? (quick ? 1 : 3))
    }

    /// The loopback clients `--send` and `--compare` know, by name: each name once, with what makes its
    /// client.
    static let loopbackClients: KeyValuePairs<String, @Sendable (URL) -> any LoopbackClient> = [
        "raw": { RawURLSessionClient(baseURL: $0) },
        "raw-per-call": { RawURLSessionClient(baseURL: $0, request: .madePerCall) },
        "raw-one-url": { RawURLSessionClient(baseURL: $0, request: .madePerCallAroundOneURL) },
        "raw-converted": { RawURLSessionClient(baseURL: $0, request: .convertedPerCall) },
        "completion-immediate": { CompletionHandlerClient(baseURL: $0, immediateDelegateQueue: true) },
        "completion-queue": { CompletionHandlerClient(baseURL: $0, immediateDelegateQueue: false) },
        "loader": { URLSessionLoaderClient(baseURL: $0) },
        "loaders-4": { URLSessionLoaderClient(baseURL: $0, passThroughLoaders: 4) },
        "loaders-16": { URLSessionLoaderClient(baseURL: $0, passThroughLoaders: 16) },
        "link-applyenvironment": { ChainLinkClient(link: .applyEnvironment, baseURL: $0) },
        "link-auth": { ChainLinkClient(link: .auth, baseURL: $0) },
        "link-retry": { ChainLinkClient(link: .retry, baseURL: $0) },
        "link-throttle": { ChainLinkClient(link: .throttle, baseURL: $0) },
        "chain": { ChainClient(baseURL: $0) },
        "openapi": { OpenAPIURLSessionClient(baseURL: $0) },
        "ahc-raw": { RawAsyncHTTPClientClient(baseURL: $0) },
        "ahc-raw-delegate": { RawAsyncHTTPClientClient(baseURL: $0, api: .delegate) },
        "ahc-loader": { AsyncHTTPClientChainClient(baseURL: $0, chain: false) },
        "ahc-chain": { AsyncHTTPClientChainClient(baseURL: $0) },
        "ahc-openapi": { OpenAPIAsyncHTTPClientClient(baseURL: $0) },
        "openapi-generated-urlsession": { GeneratedOverURLSessionTransportClient(baseURL: $0) },
        "openapi-generated-loader": { GeneratedOverLoaderTransportClient(baseURL: $0) },
        "openapi-generated-loader-buffered": { GeneratedOverLoaderTransportClient(baseURL: $0, buffered: true) },
        "openapi-generated-ahc": { GeneratedOverAsyncHTTPClientTransportClient(baseURL: $0) },
        "openapi-generated-ahc-loader": { GeneratedOverLoaderTransportAHCClient(baseURL: $0) },
        "openapi-generated-ahc-loader-buffered": { GeneratedOverLoaderTransportAHCClient(baseURL: $0, buffered: true) },
    ]

    static func loopbackClient(named name: String) -> (@Sendable (URL) -> any LoopbackClient)? {
        loopbackClients.first { $0.key == name }?.value
    }

    static func subject(named name: String) -> InProcessSubject? {
        switch name {
        case "default": return .defaultChain()
        case "terminal": return .terminal()
        case "measuring-terminal": return .measuringTerminal()
        case "observe": return .observed()
        case "observe-measuring": return .observed(measuringTerminal: true)
        case "observed-default": return .observedDefaultChain()
        case "trace": return .traced()
        case "print": return .printed()
        case "follow-redirects": return .followingRedirects()
        case "cache-hit": return .cacheHit()
        case "observability": return .observabilityChain([.logging, .metrics, .tracing])
        case "observability-default": return .observabilityChain([])
        case "observability-logging": return .observabilityChain([.logging])
        case "observability-metrics": return .observabilityChain([.metrics])
        case "observability-tracing": return .observabilityChain([.tracing])
        case "auth": return .link(.auth)
        default:
            if name.hasPrefix("loaders-"), let count = Int(name.dropFirst("loaders-".count)) {
                return .passThroughLoaders(count)
            }
            if name.hasPrefix("middlewares-"), let count = Int(name.dropFirst("middlewares-".count)) {
                return .passThroughMiddlewares(count)
            }
            return nil
        }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(
            Data(
                """
                usage: BudgetReport [--quick] [--strict]
                                    [--only inprocess,cold,loopback,asynchttpclient,openapi,observability,scale,
                                            resilience,cache,transfers,connection-stream,jsonlines,sse,breakdown]
                                    [--breakdown]
                                    [--loopback-runs N] [--loopback-rounds N] [--loopback-slices N] [--seed N]
                       BudgetReport --spin default|terminal|cache-hit|loaders-N|middlewares-N|observe|observe-measuring|
                                           measuring-terminal|observed-default|trace|print|follow-redirects|
                                           observability|observability-default|observability-logging|
                                           observability-metrics|observability-tracing SECONDS
                       BudgetReport --send CLIENT COUNT [CONCURRENCY]
                       BudgetReport --compare CLIENT,CLIENT[,CLIENT...] [--loopback-runs N] [--loopback-rounds N]
                                    [--loopback-slices N] [--seed N]
                       BudgetReport --transfer chain-download|raw-download|curl-download|chain-upload|ahc-chain-download|
                                           ahc-raw-download|ahc-chain-upload|connection-stream|
                                           ahc-connection-stream URL FILE
                       (CLIENT: \(loopbackClients.map(\.key).joined(separator: ", ")))

                """.utf8
            )
        )
        exit(2)
    }
}

func progress(_ message: String) {
    FileHandle.standardError.write(Data("BudgetReport: \(message)\n".utf8))
}

/// Sends requests to `subject` for `seconds`, in batches, and prints the time per request.
nonisolated func spin(_ subject: InProcessSubject, seconds: Double) async {
    let clock = ContinuousClock()
    let start = clock.now
    var requests = 0
    while (clock.now - start).nanoseconds < seconds * 1e9 {
        _ = await subject.run(iterations: 100_000)
        requests += 100_000
    }
    print("\(requests) requests, \(format((clock.now - start).nanoseconds / Double(requests), decimals: 1)) ns each")
}

/// Runs the sections away from the main actor, so that no request pays for a hop back to it.
nonisolated func report(_ options: Options) async throws -> [Section] {
    var sections: [Section] = []
    if options.sections.contains("inprocess") {
        progress("in process…")
        sections.append(
            await measureInProcess(rounds: options.quick ? 3 : 9, iterations: options.quick ? 20_000 : 200_000)
        )
    }
    if options.sections.contains("cache") {
        progress("cache…")
        sections.append(
            await measureCache(rounds: options.quick ? 3 : 9, iterations: options.quick ? 20_000 : 200_000)
        )
    }
    let plan = options.loopbackPlan
    if options.sections.contains("cold") {
        progress("in process, cold caches…")
        sections.append(await measureInProcessCold(requests: options.quick ? 20 : 301))
    }
    /// A loopback section against nginx, or one that says it was skipped when there is no nginx.
    func loopbackSection(
        _ title: String, _ doing: String, measure: (URL) async throws -> Section
    ) async throws -> Section {
        guard let url = nginxURL else {
            var skipped = Section(title: title)
            skipped.rows.append(
                Row(figure: "loopback budgets", measured: "NGINX_URL is not set", budget: "", verdict: .skipped))
            return skipped
        }
        progress("\(doing) to \(url)…")
        return try await measure(url)
    }
    if options.sections.contains("loopback") {
        sections.append(
            try await loopbackSection("Over loopback", "over loopback") { url in
                try await measureLoopback(baseURL: url, plan: plan)
            })
    }
    if options.sections.contains("asynchttpclient") {
        sections.append(
            try await loopbackSection(
                "Over loopback, the AsyncHTTPClient transport", "over loopback with AsyncHTTPClient"
            ) { url in
                try await measureAsyncHTTPClientLoopback(baseURL: url, plan: plan)
            })
    }
    if options.sections.contains("openapi") {
        sections.append(
            try await loopbackSection(
                "Over loopback, a generated OpenAPI client", "over loopback with a generated OpenAPI client"
            ) { url in
                try await measureOpenAPILoopback(baseURL: url, plan: plan)
            })
    }
    if options.sections.contains("observability") {
        progress("observability adapters…")
        sections.append(
            await measureObservability(rounds: options.quick ? 3 : 31, iterations: options.quick ? 10_000 : 50_000))
    }
    if options.sections.contains("jsonlines") {
        progress("JSON Lines…")
        sections.append(
            try await measureJSONLines(
                rounds: options.quick ? 3 : 21, lines: options.quick ? 2_000 : 20_000,
                seed: options.seed ?? LoopbackPlan.defaultSeed))
    }
    if options.sections.contains("sse") {
        progress("Server-Sent Events parser…")
        sections.append(
            try await measureServerSentEvents(rounds: options.quick ? 3 : 21, bytes: options.quick ? 1 << 20 : 8 << 20))
    }
    if options.sections.contains("breakdown") {
        if let url = nginxURL {
            progress("loopback breakdown…")
            sections.append(try await measureLoopbackBreakdown(baseURL: url, plan: plan))
        } else {
            progress("loopback breakdown skipped: NGINX_URL is not set")
        }
    }
    if options.sections.contains("scale") {
        progress("scale…")
        sections.append(
            await measureParking(runs: options.quick ? 1 : 3, counts: [1_000, 10_000, 100_000])
        )
        sections.append(await measureRefreshStorm(runs: options.quick ? 1 : 5))
    }
    if options.sections.contains("resilience") {
        progress("new loaders…")
        sections.append(
            await measureResilience(
                rounds: options.quick ? 3 : 9, iterations: options.quick ? 20_000 : 200_000, runs: options.quick ? 1 : 5
            )
        )
    }
    if options.sections.contains("transfers") {
        if let url = nginxURL {
            progress("transfers…")
            sections.append(
                try await measureTransfers(
                    baseURL: url, rounds: options.quick ? 1 : 9, seed: options.seed ?? LoopbackPlan.defaultSeed))
        } else {
            progress("transfers skipped: NGINX_URL is not set")
        }
    }
    if options.sections.contains("connection-stream") {
        if let url = nginxURL {
            progress("a 1 GiB stream through Connection…")
            sections.append(
                try measureConnectionStream(
                    baseURL: url, rounds: options.quick ? 1 : 3, seed: options.seed ?? LoopbackPlan.defaultSeed))
        } else {
            progress("connection stream skipped: NGINX_URL is not set")
        }
    }
    return sections
}

/// The nginx to send to, for an option that cannot run without one; exits with status 2 when `NGINX_URL` is
/// not set.
func requiredNginxURL(for option: String) -> URL {
    guard let url = nginxURL else {
        progress("\(option) needs NGINX_URL (the nginx scripts/bench.sh starts, or any serving \(personPath))")
        exit(2)
    }
    return url
}

/// Sends `count` requests to nginx with the client named `name` and prints the time and CPU they took.
nonisolated func send(client name: String, count: Int, concurrency: Int) async throws {
    let url = requiredNginxURL(for: "--send")
    guard let makeClient = Options.loopbackClient(named: name) else { Options.usage() }
    let client = makeClient(url)
    defer { client.close() }
    let run = try await runLoopback(client, count: count, concurrency: concurrency)
    let perRequest = count == 0 ? 0 : 1 / Double(count) / 1000
    print(
        "\(client.name): \(count) requests, \(concurrency) at a time: "
            + "\(format(run.elapsed.nanoseconds * perRequest, decimals: 1)) µs each, "
            + "CPU \(format(run.cpu.nanoseconds * perRequest, decimals: 1)) µs each"
    )
}

/// Measures the loopback clients named `names` against the first of them and prints the table.
nonisolated func compare(_ names: [String], options: Options) async throws {
    let url = requiredNginxURL(for: "--compare")
    let makers = names.compactMap(Options.loopbackClient(named:))
    progress("comparing \(names.joined(separator: ", ")) over loopback to \(url)…")
    let section = try await measureLoopbackComparison(
        baseURL: url, plan: options.loopbackPlan, clients: makers.map { make in { make(url) } })
    print(render([section]))
}

let options = Options(arguments: CommandLine.arguments)
if let (kind, url, file) = options.transfer {
    try await runTransfer(kind: kind, url: url, file: file)
    exit(0)
}
if let (client, count, concurrency) = options.send {
    try await send(client: client, count: count, concurrency: concurrency)
    exit(0)
}
if let names = options.compare {
    try await compare(names, options: options)
    exit(0)
}
if let (subject, seconds) = options.spin {
    await spin(subject, seconds: seconds)
    exit(0)
}
let sections = try await report(options)
print(render(sections))
let failures = sections.flatMap(\.rows).filter { $0.verdict == .fail }
let checks = sections.flatMap(\.rows).filter { $0.verdict == .pass || $0.verdict == .fail }
if checks.isEmpty {
    print("\nno budgets in the sections run")
} else {
    print(
        "\n\(checks.count - failures.count) of \(checks.count) budgets PASS"
            + (failures.isEmpty ? "" : ", \(failures.count) FAIL"))
}
if options.strict && !failures.isEmpty { exit(1) }

import BenchmarkSupport

/// Warms every subject up (a fifth of its iterations), then runs each `rounds` times, `iterations` requests in a
/// row, the rounds visiting the subjects in a rotated order so that a slow spell of the machine is spread over
/// all of them: each subject's median nanoseconds per request over the rounds, by key.
func medianNanosecondsPerRequest(
    _ subjects: [(key: String, subject: InProcessSubject, iterations: Int)], rounds: Int
) async -> [String: Double] {
    for (_, subject, iterations) in subjects { _ = await subject.run(iterations: iterations / 5) }
    var samples: [String: [Double]] = [:]
    let clock = ContinuousClock()
    for round in 0..<rounds {
        for index in subjects.indices {
            let (key, subject, iterations) = subjects[(index + round) % subjects.count]
            let start = clock.now
            _ = await subject.run(iterations: iterations)
            samples[key, default: []].append((clock.now - start).nanoseconds / Double(iterations))
        }
    }
    return samples.mapValues(median)
}

/// The pass-through counts the slopes are fitted over.
let passThroughCounts = [0, 1, 4, 8, 16]

/// Times the in-process subjects and checks the in-process budgets:
/// the default chain adds ≤ 1 µs over the terminal, and each pass-through loader costs ≤ 0.1 µs and ≤ half
/// of what a pass-through middleware costs in swift-openapi-runtime's fold.
///
/// Every subject runs `iterations` requests in a row, once per round; rounds visit the subjects in a rotated
/// order, so that a slow spell of the machine is spread over all of them; each figure is the median over the
/// rounds.
func measureInProcess(rounds: Int, iterations: Int) async -> Section {
    var subjects: [(key: String, subject: InProcessSubject)] = [
        ("terminal", .terminal()),
        ("default", .defaultChain()),
        ("transport", .openAPITransport(CannedTransport())),
    ]
    for link in DefaultChainLink.allCases { subjects.append((link.rawValue, .link(link))) }
    subjects += [
        ("measuring terminal", .measuringTerminal()),
        ("observe", .observed()),
        ("observe measuring", .observed(measuringTerminal: true)),
        ("observed default", .observedDefaultChain()),
        ("trace", .traced()),
        ("print", .printed()),
        ("follow redirects", .followingRedirects()),
    ]
    for count in passThroughCounts {
        subjects.append(("loaders \(count)", .passThroughLoaders(count)))
        subjects.append(("middlewares \(count)", .passThroughMiddlewares(count)))
    }

    let ns = await medianNanosecondsPerRequest(
        subjects.map { ($0.key, $0.subject, iterations) }, rounds: rounds)

    let terminal = ns["terminal"]!
    let defaultChain = ns["default"]!
    let overhead = defaultChain - terminal
    let loaderFit = linearFit(passThroughCounts.map { (Double($0), ns["loaders \($0)"]!) })
    let middlewareFit = linearFit(passThroughCounts.map { (Double($0), ns["middlewares \($0)"]!) })
    let ratio = loaderFit.slope / middlewareFit.slope

    var section = Section(
        title: "In process (canned terminal; median ns per request over \(rounds) rounds of \(iterations))"
    )
    section.rows.append(.info("terminal (CannedResponse) called directly", "\(format(terminal, decimals: 0)) ns"))
    section.rows.append(
        .info(
            "default chain (ApplyEnvironment → Auth → Retry → Throttle)",
            "\(format(defaultChain, decimals: 0)) ns")
    )
    section.rows.append(
        .check(
            "default chain adds over the terminal",
            "\(format(overhead / 1000, decimals: 3)) µs",
            budget: "≤ 1 µs",
            passes: overhead <= 1000
        )
    )
    for link in DefaultChainLink.allCases {
        section.rows.append(
            .info(
                "  of which \(link.rawValue) alone adds",
                "\(format((ns[link.rawValue]! - terminal) / 1000, decimals: 3)) µs")
        )
    }
    // Observation: each figure over the same subject without it (one pass-through loader where a loader is added).
    let passThrough = ns["loaders 1"]!
    let observationRows: [(String, Double)] = [
        ("a terminal that measures and reports (HTTPMetrics, 2 events) adds", ns["measuring terminal"]! - passThrough),
        ("Observe (ignoring observer) adds, over a pass-through loader", ns["observe"]! - passThrough),
        ("  the same over the measuring terminal", ns["observe measuring"]! - ns["measuring terminal"]!),
        ("Observe in front of the default chain adds", ns["observed default"]! - defaultChain),
        ("PropagateTraceContext adds, over a pass-through loader", ns["trace"]! - passThrough),
        ("PrintLoader (discarding sink) adds, over a pass-through loader", ns["print"]! - passThrough),
        ("FollowRedirects (no redirect) adds, over a pass-through loader", ns["follow redirects"]! - passThrough),
    ]
    for (label, added) in observationRows {
        section.rows.append(.info(label, "\(format(added / 1000, decimals: 3)) µs"))
    }
    for count in passThroughCounts {
        section.rows.append(
            .info(
                "\(count) pass-through: loaders | openapi-runtime middlewares",
                "\(format(ns["loaders \(count)"]!, decimals: 0)) ns | \(format(ns["middlewares \(count)"]!, decimals: 0)) ns"
            )
        )
    }
    section.rows.append(
        .info("openapi-runtime: CannedTransport called directly", "\(format(ns["transport"]!, decimals: 0)) ns")
    )
    section.rows.append(
        .info(
            "openapi-runtime: UniversalClient fixed cost (0 middlewares − transport)",
            "\(format((ns["middlewares 0"]! - ns["transport"]!) / 1000, decimals: 3)) µs"
        )
    )
    section.rows.append(
        .info(
            "openapi-runtime: each pass-through middleware (slope)",
            "\(format(middlewareFit.slope / 1000, decimals: 3)) µs")
    )
    section.rows.append(
        .check(
            "each pass-through loader (slope over 0…16)",
            "\(format(loaderFit.slope / 1000, decimals: 3)) µs",
            budget: "≤ 0.1 µs",
            passes: loaderFit.slope <= 100
        )
    )
    section.rows.append(
        .check(
            "pass-through loader ÷ pass-through middleware",
            format(ratio, decimals: 2),
            budget: "≤ 0.5",
            passes: ratio <= 0.5
        )
    )
    return section
}

/// Times single requests to the in-process subjects with cold caches: before each request, a buffer larger
/// than the machine's caches (64 MB) is written over, so that the request's code and data come from memory.
///
/// The hot figures above are for a loop of requests that keeps everything in the caches. Over loopback, the
/// kernel, libcurl and URLSession run for hundreds of µs between two of a client's requests and evict much of
/// what the chain touched, so a request there pays some of its cold cost: each distinct function, type
/// metadata record and object it touches is a fetch from memory. This bounds that cost from above; no budget.
func measureInProcessCold(requests: Int) async -> Section {
    var subjects: [(name: String, subject: InProcessSubject)] = [
        ("terminal (CannedResponse) called directly", .terminal()),
        ("the default chain adds over the terminal", .defaultChain()),
    ]
    for link in DefaultChainLink.allCases {
        subjects.append(("\(link.rawValue) alone adds over the terminal", .link(link)))
    }
    subjects.append(("16 pass-through loaders add over the terminal", .passThroughLoaders(16)))
    let megabytes = 64
    var evicted = [UInt8](repeating: 0, count: megabytes << 20)
    func evictCaches(_ round: Int) {
        evicted.withUnsafeMutableBufferPointer { buffer in
            var index = round % 64  // one byte of every 64-byte line
            while index < buffer.count {
                buffer[index] &+= 1
                index += 64
            }
        }
    }
    for (_, subject) in subjects { _ = await subject.run(iterations: 1_000) }  // warm-up: first-use work
    var samples = [[Double]](repeating: [], count: subjects.count)
    let clock = ContinuousClock()
    for round in 0..<requests {
        for index in subjects.indices {
            let turn = (index + round) % subjects.count
            evictCaches(round)
            let start = clock.now
            _ = await subjects[turn].subject.run(iterations: 1)
            samples[turn].append((clock.now - start).nanoseconds)
        }
    }
    var section = Section(
        title: "In process, cold caches (one request after \(megabytes) MB written over; medians of \(requests))"
    )
    section.rows.append(.info(subjects[0].name, "\(format(median(samples[0]) / 1000, decimals: 1)) µs"))
    for index in subjects.indices.dropFirst() {
        // The rounds visit the subjects in a rotated order: pair each sample with the terminal's of its round.
        let added = zip(samples[index], samples[0]).map { $0 - $1 }
        section.rows.append(
            .info(subjects[index].name, "\(format(median(added) / 1000, decimals: 1)) µs")
        )
    }
    return section
}

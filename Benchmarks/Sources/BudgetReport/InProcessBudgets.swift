import BenchmarkSupport

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
    for count in passThroughCounts {
        subjects.append(("loaders \(count)", .passThroughLoaders(count)))
        subjects.append(("middlewares \(count)", .passThroughMiddlewares(count)))
    }

    for (_, subject) in subjects { _ = await subject.run(iterations: iterations / 5) }  // warm-up
    var samples: [String: [Double]] = [:]
    let clock = ContinuousClock()
    for round in 0..<rounds {
        for index in subjects.indices {
            let (key, subject) = subjects[(index + round) % subjects.count]
            let start = clock.now
            _ = await subject.run(iterations: iterations)
            samples[key, default: []].append((clock.now - start).nanoseconds / Double(iterations))
        }
    }
    let ns = samples.mapValues(median)

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

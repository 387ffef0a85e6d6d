import BenchmarkSupport

/// The new loaders' budgets: an open `CircuitBreaker` refuses a request in ≤ 1 µs, and 1,000 concurrent identical
/// requests through `Deduplicate` make exactly one upstream load.
///
/// The in-process subjects are timed as in ``measureInProcess(rounds:iterations:)`` (rounds in a rotated order,
/// medians); the deduplication runs are separate, each with a fresh chain.
func measureResilience(rounds: Int, iterations: Int, runs: Int) async -> Section {
    let subjects: [(key: String, subject: InProcessSubject)] = [
        ("terminal", .terminal()),
        ("open breaker", await .openCircuitBreaker()),
        ("closed breaker", .closedCircuitBreaker()),
        ("deduplicate", .deduplicateAlone()),
    ]
    let ns = await medianNanosecondsPerRequest(
        subjects.map { ($0.key, $0.subject, iterations) }, rounds: rounds)

    var section = Section(
        title: "New loaders (in process; median ns per request over \(rounds) rounds of \(iterations), "
            + "and \(runs) runs of 1,000 concurrent requests)"
    )
    section.rows.append(
        .info("terminal (CannedResponse) called directly", "\(format(ns["terminal"]!, decimals: 0)) ns"))
    section.rows.append(
        .check(
            "an open CircuitBreaker refuses a request (circuitOpen)",
            "\(format(ns["open breaker"]! / 1000, decimals: 3)) µs",
            budget: "≤ 1 µs",
            passes: ns["open breaker"]! <= 1000
        )
    )
    section.rows.append(
        .info(
            "a closed CircuitBreaker adds over the terminal",
            "\(format((ns["closed breaker"]! - ns["terminal"]!) / 1000, decimals: 3)) µs")
    )
    section.rows.append(
        .info(
            "Deduplicate with nothing to share adds over the terminal",
            "\(format((ns["deduplicate"]! - ns["terminal"]!) / 1000, decimals: 3)) µs")
    )

    var held: [DeduplicationMeasurement] = []
    var slow: [DeduplicationMeasurement] = []
    for _ in 0..<runs {
        held.append(await measureDeduplication(count: 1_000, latency: nil))
        slow.append(await measureDeduplication(count: 1_000, latency: .milliseconds(1)))
    }
    let loads = held.map(\.upstreamLoads).max() ?? 0
    let failed = (held + slow).map { $0.requests - $0.succeeded }.max() ?? 0
    section.rows.append(
        .check(
            "Deduplicate: upstream loads for 1,000 concurrent identical requests (most in any run)", "\(loads)",
            budget: "1", passes: loads == 1)
    )
    section.rows.append(
        .check("Deduplicate: requests that failed (most in any run)", "\(failed)", budget: "0", passes: failed == 0)
    )
    section.rows.append(
        .info(
            "  time until all 1,000 completed",
            "\(format(median(held.map(\.totalTime.nanoseconds)) / 1e6, decimals: 1)) ms")
    )
    section.rows.append(
        .info(
            "  with a terminal that answers after 1 ms: upstream loads (median, most)",
            "\(format(median(slow.map { Double($0.upstreamLoads) }), decimals: 0)), "
                + "\(slow.map(\.upstreamLoads).max() ?? 0)")
    )
    return section
}

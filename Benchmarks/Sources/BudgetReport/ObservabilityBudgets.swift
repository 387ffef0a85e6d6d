import BenchmarkSupport

/// Runs each subject `iterations` requests in a row per round, `rounds` rounds, the rounds visiting the subjects in a
/// rotated order (after a warm-up of a fifth of the iterations each): wall-clock and CPU nanoseconds per request,
/// each [subject][round]. On a machine other processes keep busy, the wall-clock time includes the time the process
/// waited for a core; the CPU time (the process's, `getrusage`) does not.
func interleavedNanosecondsPerRequest(
    _ subjects: [InProcessSubject], rounds: Int, iterations: Int
) async -> (wall: [[Double]], cpu: [[Double]]) {
    for subject in subjects { _ = await subject.run(iterations: iterations / 5) }
    var wall = [[Double]](repeating: [], count: subjects.count)
    var cpu = wall
    let clock = ContinuousClock()
    for round in 0..<rounds {
        for index in subjects.indices {
            let turn = (index + round) % subjects.count
            let cpuStart = processCPUTime()
            let start = clock.now
            _ = await subjects[turn].run(iterations: iterations)
            wall[turn].append((clock.now - start).nanoseconds / Double(iterations))
            cpu[turn].append((processCPUTime() - cpuStart).nanoseconds / Double(iterations))
        }
    }
    return (wall, cpu)
}

/// The median of the per-round differences `subject − baseline` in µs, and its 95% interval, as the tables show it.
func addedMicroseconds(_ subject: [Double], over baseline: [Double]) -> (median: Double, shown: String) {
    let added = zip(subject, baseline).map { ($0 - $1) / 1000 }
    let interval = medianConfidenceInterval(added).map {
        " (95% CI \(format($0.low, decimals: 3))–\(format($0.high, decimals: 3)))"
    }
    return (median(added), "\(format(median(added), decimals: 3)) µs\(interval ?? "")")
}

/// Issue 25's observability budget: the adapters of Integrations/Observability — `HTTPEventLogger` and
/// `MetricsObserver()` in one `Observe`, `TraceLoads()` and `TraceAttempts()` — add ≤ 1 µs per load to the default chain in
/// process when logging is below the logger's level and no tracer is installed (and no metrics backend is
/// bootstrapped). The chain ends in the measuring canned terminal, which emits each attempt's events as a real
/// terminal does, so that the observers see every event they would. Each adapter alone, and `PrintLoader(logger:)`,
/// are shown beside it. The figure is the median of the per-round differences in CPU time, with its 95% interval (the
/// wall-clock figure beside it).
func measureObservability(rounds: Int, iterations: Int) async -> Section {
    let budgeted: Set<ObservabilityAdapter> = [.logging, .metrics, .tracing]
    var subjects: [(name: String, subject: InProcessSubject)] = [
        ("the default chain over the measuring terminal", .observabilityChain([])),
        ("the three adapters", .observabilityChain(budgeted)),
    ]
    for adapter in ObservabilityAdapter.allCases {
        subjects.append(("\(adapter.rawValue), alone,", .observabilityChain([adapter])))
    }
    subjects.append(
        ("the three, logger and metrics behind an Observe each (a variant)", .observabilityChainWithTwoObserves()))
    subjects.append(("Observe(an observer that ignores every event)", .observedMeasuredDefaultChain()))
    let (wall, samples) = await interleavedNanosecondsPerRequest(
        subjects.map(\.subject), rounds: rounds, iterations: iterations)
    var section = Section(
        title: "In process, the observability adapters (default chain over the measuring canned terminal; "
            + "\(rounds) rounds of \(iterations), rotated; medians of per-round differences in CPU time, 95% CIs; "
            + "wall-clock in brackets)")
    section.rows.append(
        .info(
            subjects[0].name,
            "\(format(median(samples[0]), decimals: 0)) ns CPU per load [\(format(median(wall[0]), decimals: 0)) ns]"))
    let all = addedMicroseconds(samples[1], over: samples[0])
    section.rows.append(
        .check(
            "logging + metrics + tracing adapters add (logger at info, no backend, no tracer)",
            "\(all.shown) [\(addedMicroseconds(wall[1], over: wall[0]).shown)]",
            budget: "≤ 1 µs", passes: all.median <= 1))
    for index in subjects.indices.dropFirst(2) {
        section.rows.append(
            .info(
                "  \(subjects[index].name) adds",
                "\(addedMicroseconds(samples[index], over: samples[0]).shown) "
                    + "[\(format(addedMicroseconds(wall[index], over: wall[0]).median, decimals: 3)) µs]"))
    }
    return section
}

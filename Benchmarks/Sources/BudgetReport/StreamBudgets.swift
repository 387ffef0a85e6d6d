import BenchmarkSupport
import Foundation

/// The median of `values` with its 95% interval: "123.4 (95% CI 120.1–125.0)".
func shownMedian(_ values: [Double], decimals: Int) -> String {
    let interval = medianConfidenceInterval(values).map {
        " (95% CI \(format($0.low, decimals: decimals))–\(format($0.high, decimals: decimals)))"
    }
    return format(median(values), decimals: decimals) + (interval ?? "")
}

/// Issue 24's JSON Lines budget: `Connection.jsonLines(for:)` decodes at ≥ 0.8× the throughput of a plain loop
/// that decodes the same lines from the chain's own line stream (`Connection.lines(for:)` and a `JSONDecoder`). Both
/// read a body of `lines` copies of the 213-byte person, in process, through the default chain over a terminal that
/// answers with it in memory (streamed in 64 KiB chunks). Every round reads it once each way, and once without
/// decoding, in a random order; the figure is the median of the per-round ratios, with its 95% interval.
func measureJSONLines(rounds: Int, lines: Int, seed: UInt64) async throws -> Section {
    let subject = JSONLinesSubject(lines: lines)
    let readings = JSONLinesReading.allCases
    for reading in readings { _ = try await subject.read(reading) }  // warm-up
    var seconds = [JSONLinesReading: [Double]]()  // CPU
    var wallSeconds = [JSONLinesReading: [Double]]()
    var order = SeededGenerator(seed: seed)
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        for reading in readings.shuffled(using: &order) {
            let cpuStart = processCPUTime()
            let start = clock.now
            _ = try await subject.read(reading)
            wallSeconds[reading, default: []].append((clock.now - start).nanoseconds / 1e9)
            seconds[reading, default: []].append((processCPUTime() - cpuStart).nanoseconds / 1e9)
        }
    }
    let megabytes = Double(subject.byteCount) / 1e6
    var section = Section(
        title: "In process, JSON Lines through Connection (\(lines) lines of the 213-byte person, "
            + "\(format(megabytes, decimals: 1)) MB; default chain over a canned body; \(rounds) rounds in random "
            + "orders; throughput per CPU second, medians, 95% CIs; wall-clock ratio beside it)")
    for reading in readings {
        let rates = seconds[reading]!.map { megabytes / $0 }
        let perLine = seconds[reading]!.map { $0 * 1e9 / Double(lines) }
        section.rows.append(
            .info(
                reading.rawValue,
                "\(shownMedian(rates, decimals: 1)) MB/s, \(format(median(perLine), decimals: 0)) ns/line"))
    }
    let ratios = zip(seconds[.plainLoop]!, seconds[.jsonLines]!).map { $0 / $1 }
    let wallRatios = zip(wallSeconds[.plainLoop]!, wallSeconds[.jsonLines]!).map { $0 / $1 }
    section.rows.append(
        .check(
            "jsonLines ÷ lines + JSONDecoder in a loop, throughput",
            "\(shownMedian(ratios, decimals: 3)) [wall \(shownMedian(wallRatios, decimals: 3))]",
            budget: "≥ 0.8", passes: median(ratios) >= 0.8))
    return section
}

/// Issue 24's Server-Sent Events budget: `ServerSentEventParser` parses ≥ 100 MB/s (10⁶ bytes per second of the
/// process's CPU time, so that a busy machine's waits for a core are not counted) in a release build, in process, fed 64 KiB chunks of a body in memory; for each of three shapes of stream, `rounds` parses of about
/// `bytes` bytes, interleaved. The figure is the median over the rounds, with its 95% interval.
func measureServerSentEvents(rounds: Int, bytes: Int) async throws -> Section {
    let shapes = EventStreamShape.allCases
    let bodies = shapes.map { shape in
        let (body, events) = shape.body(bytes: bytes)
        return (chunks: chunked(body), count: body.count, events: events)
    }
    for body in bodies { precondition(parseEventStream(body.chunks) == body.events, "the parser lost events") }
    var rates = [[Double]](repeating: [], count: shapes.count)  // per CPU second
    var wallRates = rates
    let clock = ContinuousClock()
    for round in 0..<rounds {
        for index in shapes.indices {
            let turn = (index + round) % shapes.count
            let cpuStart = processCPUTime()
            let start = clock.now
            let events = parseEventStream(bodies[turn].chunks)
            let seconds = (clock.now - start).nanoseconds / 1e9
            let cpuSeconds = (processCPUTime() - cpuStart).nanoseconds / 1e9
            precondition(events == bodies[turn].events)
            rates[turn].append(Double(bodies[turn].count) / 1e6 / cpuSeconds)
            wallRates[turn].append(Double(bodies[turn].count) / 1e6 / seconds)
        }
    }
    // The parser as the product runs it: Connection.events(for:) over the default chain and a canned body.
    let subject = EventStreamSubject(.jsonEvents, bytes: bytes)
    _ = try await subject.read()
    var throughConnection: [Double] = []
    for _ in 0..<rounds {
        let cpuStart = processCPUTime()
        let events = try await subject.read()
        precondition(events == subject.eventCount)
        throughConnection.append(Double(subject.byteCount) / 1e6 / ((processCPUTime() - cpuStart).nanoseconds / 1e9))
    }
    var section = Section(
        title: "In process, the Server-Sent Events parser (\(format(Double(bytes) / 1e6, decimals: 0)) MB per parse "
            + "in 64 KiB chunks, \(rounds) rounds rotated; MB per CPU second, medians, 95% CIs; wall-clock in brackets)"
    )
    for index in shapes.indices {
        let perEvent = rates[index].map { Double(bodies[index].count) / Double(bodies[index].events) / $0 * 1e3 }
        section.rows.append(
            .check(
                "parser throughput, \(shapes[index].rawValue)",
                "\(shownMedian(rates[index], decimals: 1)) MB/s, \(format(median(perEvent), decimals: 0)) ns/event "
                    + "[\(format(median(wallRates[index]), decimals: 1)) MB/s]",
                budget: "≥ 100 MB/s", passes: median(rates[index]) >= 100))
    }
    section.rows.append(
        .info(
            "Connection.events(for:) over a canned body, \(EventStreamShape.jsonEvents.rawValue)",
            "\(shownMedian(throughConnection, decimals: 1)) MB/s"))
    return section
}

/// Issue 24's memory budget: a 1 GiB response streamed through `Connection` (the default chain, its chunks read
/// and dropped) raises the process's resident memory by < 32 MiB above the idle (warmed-up) process, over
/// `URLSessionLoader` and over `AsyncHTTPClientLoader`; `rounds` streams each, each in a child process of its own
/// (``runChild(_:url:file:)``), in a random order.
func measureConnectionStream(baseURL: URL, rounds: Int, seed: UInt64) throws -> Section {
    let source = baseURL.appending(path: String(transferFilePath.dropFirst()))
    let kinds: [TransferKind] = [.connectionStream, .ahcConnectionStream]
    var runs = [TransferKind: [TransferRun]]()
    var order = SeededGenerator(seed: seed)
    for round in 0..<rounds {
        for kind in kinds.shuffled(using: &order) {
            progress("connection stream: round \(round + 1) of \(rounds), \(kind.rawValue)…")
            runs[kind, default: []].append(try runChild(kind, url: source, file: URL(fileURLWithPath: "/dev/null")))
        }
    }
    let size = runs[.connectionStream]?.first?.bytes ?? 0
    var section = Section(
        title: "Through Connection, a streamed response (\(format(Double(size) / 1_073_741_824, decimals: 2)) GiB "
            + "from nginx, chunks read and dropped; \(rounds) rounds in random orders, each in a process of its own)")
    for (kind, label) in [
        (TransferKind.connectionStream, "URLSessionLoader"), (.ahcConnectionStream, "AsyncHTTPClientLoader"),
    ] {
        let raises = runs[kind]?.compactMap(\.peakRaise) ?? []
        let largest = raises.max()
        section.rows.append(
            .check(
                "peak RSS rise over \(label) (the largest of \(rounds): \(raises.map { format(Double($0) / 1_048_576, decimals: 1) }.joined(separator: ", ")) MiB)",
                largest.map { "\(format(Double($0) / 1_048_576, decimals: 1)) MiB" } ?? "unknown (no /proc)",
                budget: "< 32 MiB", passes: largest.map { $0 < 32 * 1_048_576 } ?? false))
        let rates = (runs[kind] ?? []).map { Double($0.bytes) / $0.seconds / 1_048_576 }
        section.rows.append(.info("  throughput over \(label)", "\(shownMedian(rates, decimals: 0)) MiB/s"))
    }
    return section
}

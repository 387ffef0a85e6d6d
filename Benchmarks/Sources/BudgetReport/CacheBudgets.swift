import BenchmarkSupport
import Foundation
import HTTP

/// Times the cache in process and checks its budget: a hit costs ≤ 2 µs.
///
/// A hit is a whole load through `Cache --> CannedResponse` whose response is stored and fresh: it never reaches
/// the terminal. Rounds visit the subjects in a rotated order; each figure is the median over the rounds.
func measureCache(rounds: Int, iterations: Int) async -> Section {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("budget-cache-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let subjects: [(key: String, subject: InProcessSubject, iterations: Int)] = [
        ("hit", .cacheHit(), iterations),
        ("disk hit", .cacheHit(store: DiskCacheStore(directory: directory)), max(1, iterations / 20)),
        ("terminal", .cacheableTerminal(), iterations),
        ("reload", .cacheReload(), iterations),
    ]
    // The warm-up's first load of each cache stores the response, so every timed load is a hit.
    let ns = await medianNanosecondsPerRequest(subjects, rounds: rounds)

    var section = Section(title: "Cache (in process; median ns per request over \(rounds) rounds of \(iterations))")
    section.rows.append(
        .check(
            "a cache hit (MemoryCacheStore), per load",
            "\(format(ns["hit"]! / 1000, decimals: 3)) µs",
            budget: "≤ 2 µs",
            passes: ns["hit"]! <= 2000
        )
    )
    section.rows.append(
        .info(
            "a cache hit (DiskCacheStore: a file read), per load", "\(format(ns["disk hit"]! / 1000, decimals: 1)) µs"))
    section.rows.append(
        .info("terminal (CannedResponse) called directly", "\(format(ns["terminal"]!, decimals: 0)) ns"))
    section.rows.append(
        .info(
            "a reload (sent on, stored again) adds over the terminal",
            "\(format((ns["reload"]! - ns["terminal"]!) / 1000, decimals: 3)) µs")
    )
    return section
}

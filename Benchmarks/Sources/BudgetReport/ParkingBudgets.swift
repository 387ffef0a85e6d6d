import BenchmarkSupport

/// Parks 1k, 10k and 100k requests in each ``ParkingCase`` and checks the scale budgets: under 2 KB of heap
/// per parked request at every size, and time that grows linearly (the time per request at 100k at most
/// twice that at 1k, where a quadratic queue would take a hundred times as long).
func measureParking(runs: Int, counts: [Int]) async -> Section {
    var section = Section(
        title: "Scale (requests parked until the first one is released; medians of \(runs) runs)"
    )
    _ = await measureParking(.throttle, count: 1_000)  // warm-up: the cooperative pool's threads, malloc's arenas
    for parkingCase in [.floor] + ParkingCase.all {
        let isFloor = parkingCase.name == ParkingCase.floor.name
        var timePerRequest: [Int: Double] = [:]
        for count in counts {
            var results: [ParkingMeasurement] = []
            for _ in 0..<runs { results.append(await measureParking(parkingCase, count: count)) }
            let bytes = median(results.map(\.heapBytesPerRequest))
            let resident = median(results.map { Double($0.residentBytes) / Double(count) })
            let total = median(results.map(\.totalTime.nanoseconds))
            timePerRequest[count] = total / Double(count)
            section.rows.append(
                .info(
                    "\(parkingCase.name), \(count / 1000)k parked: total time",
                    "\(format(total / 1e6, decimals: 1)) ms (\(format(total / Double(count) / 1000, decimals: 2)) µs/req)"
                )
            )
            let figure = "\(parkingCase.name), \(count / 1000)k parked: heap/request (RSS Δ/request)"
            let measured = "\(format(bytes, decimals: 0)) B (\(format(resident, decimals: 0)) B)"
            section.rows.append(
                isFloor ? .info(figure, measured) : .check(figure, measured, budget: "< 2048 B", passes: bytes < 2048)
            )
        }
        if !isFloor, let smallest = counts.min(), let largest = counts.max(), smallest < largest {
            let growth = timePerRequest[largest]! / timePerRequest[smallest]!
            section.rows.append(
                .check(
                    "\(parkingCase.name): time/request at \(largest / 1000)k ÷ at \(smallest / 1000)k",
                    format(growth, decimals: 2),
                    budget: "≤ 2 (linear)",
                    passes: growth <= 2
                )
            )
        }
    }
    return section
}

/// 1,000 concurrent requests with an expired token through the default chain: exactly one call may reach the
/// token endpoint.
func measureRefreshStorm(runs: Int) async -> Section {
    var section = Section(title: "Refresh storm (1,000 concurrent requests, expired token; medians of \(runs) runs)")
    var results: [RefreshStormMeasurement] = []
    for _ in 0..<runs { results.append(await measureRefreshStorm(count: 1_000)) }
    let calls = results.map(\.tokenRequests).max() ?? 0
    let failed = results.map { $0.requests - $0.succeeded }.max() ?? 0
    let time = median(results.map(\.totalTime.nanoseconds))
    section.rows.append(.info("time until all 1,000 completed", "\(format(time / 1e6, decimals: 1)) ms"))
    section.rows.append(.check("token-endpoint calls (most in any run)", "\(calls)", budget: "1", passes: calls == 1))
    section.rows.append(.check("requests that failed (most in any run)", "\(failed)", budget: "0", passes: failed == 0))
    return section
}

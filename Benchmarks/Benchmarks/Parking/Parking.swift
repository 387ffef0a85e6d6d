import Benchmark
import BenchmarkSupport

// Requests parked until released, 1k, 10k and 100k at once: the floor (a terminal that holds every request),
// then each of ParkingCase.all (today: a Throttle with one slot, held by the first request). Wall clock is the
// whole run (send all, wait until all are parked, release, wait for all); the custom metric is the heap in use
// per parked request at the moment all are parked (mallinfo2; see heapBytesInUse()).
let benchmarks: @Sendable () -> Void = {
    let heapPerRequest = BenchmarkMetric.custom("heap bytes per parked request", useScalingFactor: false)
    for parkingCase in [.floor] + ParkingCase.all {
        for count in [1_000, 10_000, 100_000] {
            Benchmark(
                "\(parkingCase.name): \(count) parked",
                configuration: .init(
                    metrics: [.wallClock, .peakMemoryResident, .mallocCountTotal, heapPerRequest],
                    timeUnits: .milliseconds,
                    warmupIterations: 1,
                    maxDuration: isQuickRun ? .milliseconds(200) : .seconds(2),
                    maxIterations: isQuickRun ? 1 : count >= 100_000 ? 3 : 10
                )
            ) { benchmark async in
                let measurement = await measureParking(parkingCase, count: count)
                benchmark.measurement(heapPerRequest, Int(measurement.heapBytesPerRequest.rounded()))
            }
        }
    }
}

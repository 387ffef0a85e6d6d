import HTTP
import Testing

extension ManualClock {
    /// Loads `request` through `loader`, advancing this clock by `step` whenever something sleeps on it, so
    /// that every retry wait ends at once; ``requestedDurations`` then lists the waits asked for.
    func load(
        _ request: HTTPRequest, through loader: HTTPLoader, advancingBy step: Duration = .seconds(3600)
    ) async -> HTTPResult {
        let load = Task { await loader.load(request) }
        let finished = Locked(false)
        let driver = Task {
            while !finished.value {
                if sleeperCount > 0 { advance(by: step) }
                await Task.yield()
            }
        }
        let result = await load.value
        finished.withLock { $0 = true }
        await driver.value
        return result
    }
}

import HTTP
import HTTPTestSupport
import Testing

extension ManualClock {
    /// Loads `request` through `loader`, moving this clock by `step` whenever something sleeps on it, so that every
    /// retry wait ends at once; ``requestedDurations`` then lists the waits asked for.
    func load(
        _ request: HTTPRequest, through loader: HTTPLoader, advancingBy step: Duration = .seconds(3600),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> HTTPResult {
        try await movingOnEverySleep(by: step) {
            try await Task { await loader.load(request) }.finished(sourceLocation: sourceLocation)
        }
    }
}

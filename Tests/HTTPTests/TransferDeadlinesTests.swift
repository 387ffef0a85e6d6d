import Foundation
import HTTPTestSupport
import Testing

@testable import HTTP

/// The thread that fires `URLSessionLoader`'s deadlines: each handler runs once, at or after its time, in the order
/// of the deadlines; a cancelled one never runs; a deadline set after a later one wakes the thread for it.
@Suite(.noHang)
struct TransferDeadlinesTests {
    /// What the deadlines' handlers did: the identifiers in the order they ran, and when each ran.
    private final class Firings: Sendable {
        let runs = Locked<[(id: Int, at: ContinuousClock.Instant)]>([])
        func record(_ id: Int) { runs.withLock { $0.append((id, .now)) } }
        var ids: [Int] { runs.value.map(\.id) }
    }

    @Test func randomDeadlinesFireOnceInOrderAndCancelledOnesNever() async throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        let firings = Firings()
        var due: [Int: ContinuousClock.Instant] = [:]
        var kept: [Int] = []
        var cancelled: Set<Int> = []
        // 300 deadlines over 0–250 ms, a random half cancelled at once or after others were set: more cancelled
        // than pending, so the heap is rebuilt on the way.
        var deadlines: [(id: Int, deadline: TransferDeadlines.Deadline)] = []
        for id in 0..<300 {
            let after = Duration.milliseconds(Int.random(in: 0...250, using: &random))
            let deadline = TransferDeadlines.shared.schedule(after: after) { firings.record(id) }
            due[id] = deadline.due
            deadlines.append((id, deadline))
        }
        for (id, deadline) in deadlines.shuffled(using: &random) {
            // A deadline due at once may have fired before its cancel: it then counts as kept.
            if Bool.random(using: &random), deadline.cancelIfPending() { cancelled.insert(id) } else { kept.append(id) }
        }
        #expect(cancelled.count > 100, "seed \(seed)")
        let wanted = Set(kept)
        try await eventually("seed \(seed): \(firings.ids.count) fired") { Set(firings.ids).isSuperset(of: wanted) }
        let runs = firings.runs.value
        let fired = runs.map(\.id)
        #expect(Set(fired).count == fired.count, "seed \(seed): a handler ran twice")
        #expect(cancelled.isDisjoint(with: fired), "seed \(seed): a cancelled deadline fired")
        for run in runs { #expect(run.at >= due[run.id]!, "seed \(seed): deadline \(run.id) fired early") }
        #expect(
            fired == fired.sorted { (due[$0]!, $0) < (due[$1]!, $1) },
            "seed \(seed): out of order")
        // Nothing runs late for a cancelled one: deadlines fire in order, so once one set after the last due time
        // has fired, every earlier one that was going to fire has.
        _ = TransferDeadlines.shared.schedule(after: .milliseconds(260)) { firings.record(-1) }
        try await eventually("seed \(seed): the closing deadline did not fire") { firings.ids.last == -1 }
        #expect(firings.ids == fired + [-1], "seed \(seed): a cancelled deadline fired")
    }

    @Test func anEarlierDeadlineWakesTheThreadSleepingForALaterOne() async throws {
        let firings = Firings()
        let late = TransferDeadlines.shared.schedule(after: .seconds(3_600)) { firings.record(0) }
        defer { late.cancel() }
        let start = ContinuousClock.now
        _ = TransferDeadlines.shared.schedule(after: .milliseconds(20)) { firings.record(1) }
        try await eventually("fired: \(firings.ids)") { firings.ids == [1] }
        #expect(firings.runs.value[0].at - start >= .milliseconds(20))
    }

    @Test func aDeadlineInThePastFiresAtOnceAndACancelAfterItsRunChangesNothing() async throws {
        let firings = Firings()
        let deadline = TransferDeadlines.shared.schedule(after: .seconds(-5)) { firings.record(7) }
        try await eventually("fired: \(firings.ids)") { firings.ids == [7] }
        #expect(!deadline.cancelIfPending())
        #expect(firings.ids == [7])
    }
}

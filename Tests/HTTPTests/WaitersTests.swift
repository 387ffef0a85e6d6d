import Foundation
import Testing

@testable import HTTP

/// An answer with fields, written on the answering thread and read on the woken one.
private final class Note: Sendable {
    let text: String
    let number: Int

    init(_ number: Int) {
        self.number = number
        text = "note \(number)"
    }
}

@Suite(.noHang) struct WaitersTests {
    @Test func aParkedRequestTakesItsAnswerOnceAndALaterCancellationChangesNothing() {
        var waiters = Waiters<String>()
        let first = waiters.nextID()
        let second = waiters.nextID()
        #expect(second > first)

        waiters.answerUnparked(first, with: "at once")
        #expect(waiters.count == 0)
        #expect(waiters.takeAnswer(first) == "at once")
        #expect(waiters.takeAnswer(first) == nil)

        // Nothing parked under `second`: answering it (a cancellation that lost the race) leaves no answer.
        #expect(waiters.answer(second, with: "cancelled") == nil)
        #expect(waiters.takeAnswer(second) == nil)
    }

    @Test func answeringEveryoneResumesThemInArrivalOrderWithOneAnswer() async throws {
        let table = Locked(Waiters<String>())
        let woken = Locked([(id: UInt64, answer: String?)]())
        let count = 20
        var ids: [UInt64] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            // A request takes its identifier when it arrives and parks a little later, so parking order can
            // differ from arrival order; park one at a time, shuffled. Answers follow the identifiers.
            for id in (0..<count).map({ _ in table.withLock { $0.nextID() } }).shuffled() {
                ids.append(id)
                group.addTask {
                    await withCheckedContinuation { continuation in table.withLock { $0.park(id, continuation) } }
                    let answer = table.withLock { $0.takeAnswer(id) }
                    woken.withLock { $0.append((id, answer)) }
                }
                try await eventually { [parked = ids.count] in table.withLock { $0.count } == parked }
            }
            let continuations = table.withLock { waiters in
                let all = waiters.answerAll(with: "granted")
                // A cancellation after the answer must not replace it.
                #expect(waiters.answer(ids[0], with: "cancelled") == nil)
                return all
            }
            #expect(continuations.count == count)
            // Resume one at a time: each wakes before the next is resumed.
            for (index, continuation) in continuations.enumerated() {
                continuation.resume()
                try await eventually { woken.withLock { $0.count } > index }
            }
        }
        #expect(woken.withLock { $0.map(\.id) } == ids.sorted())
        #expect(woken.withLock { $0.allSatisfy { $0.answer == "granted" } })
        #expect(table.withLock { $0.count } == 0)
    }

    /// The hand-over `Waiters` exists for: the answer is built on another thread and the continuation resumed
    /// before the waiting task has suspended, so the task goes on without a job switch. Read through the
    /// continuation, ThreadSanitizer reports the answer's fields as racing in a few percent of such waits;
    /// through the table's lock it sees the order. The suite runs under ThreadSanitizer with
    /// `halt_on_error=1`, so this test fails loudly if the hand-over ever stops being visible.
    @Test func anAnswerBuiltOnAnotherThreadBeforeTheWaiterSuspendsIsHandedOverThroughTheLock() async {
        let table = Locked(Waiters<Note>())
        let rounds = 2_000
        var sum = 0
        for round in 0..<rounds {
            let id = table.withLock { $0.nextID() }
            await withCheckedContinuation { continuation in
                table.withLock { $0.park(id, continuation) }
                Task.detached { table.withLock { $0.answer(id, with: Note(round)) }?.resume() }
            }
            let note = table.withLock { $0.takeAnswer(id) }
            #expect(note?.text == "note \(round)")
            sum += note?.number ?? 0
        }
        #expect(sum == rounds * (rounds - 1) / 2)
        #expect(table.withLock { $0.count } == 0)
    }
}

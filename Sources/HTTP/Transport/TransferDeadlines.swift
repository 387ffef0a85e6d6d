import Foundation

/// Fires the deadlines of ``URLSessionLoader``'s transfers, to the millisecond, on a thread of its own.
///
/// Not a Dispatch timer: on Linux, Swift concurrency's global executor runs on Dispatch's global queues, so a timer
/// whose handler goes to one of them (or to a queue that targets them) waits behind every task of the process. Under a
/// busy process — a test suite running hundreds of tests at once on two cores — such a handler ran 170 ms and more
/// than 500 ms late, so that swift-corelibs-foundation's own whole-second timeout ended the transfer first. A
/// deadline's handler only hands an event to its transfer's state machine, so one thread serves every transfer.
///
/// Waits use the monotonic clock where the C library lets a condition variable wait on it (Linux): a change of
/// the wall clock does not move a deadline (``ThreadSignal``).
final class TransferDeadlines: @unchecked Sendable {
    // Safety: `heap`, `handlers` and `nextID` are read and written only with `signal`'s lock held.

    /// The one instance (made, and its thread started, with the first deadline).
    static let shared = TransferDeadlines()

    /// A deadline, cancelled with ``cancel()``.
    struct Deadline: TransferTimer, Sendable {
        /// When the handler runs, at the earliest.
        let due: ContinuousClock.Instant
        fileprivate let id: UInt64
        fileprivate let owner: TransferDeadlines

        func cancel() { _ = cancelIfPending() }

        /// Cancels the deadline: `true` if its handler will not run, `false` if it has run or is running.
        func cancelIfPending() -> Bool { owner.cancel(id) }
    }

    private struct Entry {
        let due: ContinuousClock.Instant
        let id: UInt64

        func precedes(_ other: Entry) -> Bool { due < other.due || (due == other.due && id < other.id) }
    }

    private let signal = ThreadSignal()
    /// The pending deadlines, a binary min-heap by due time; cancelled ones stay until they come up, or until they
    /// outnumber the live ones (then the heap is rebuilt).
    private var heap: [Entry] = []
    /// The handlers of the deadlines that were not cancelled, by identifier.
    private var handlers: [UInt64: @Sendable () -> Void] = [:]
    private var nextID: UInt64 = 0

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "HTTP transfer deadlines"
        thread.start()
    }

    /// Runs `handler` on the deadlines' thread once `duration` has passed (at once for a negative one, after a week at
    /// most), unless the deadline is cancelled first.
    func schedule(after duration: Duration, _ handler: @escaping @Sendable () -> Void) -> Deadline {
        let due = ContinuousClock.now.advanced(by: min(max(duration, .zero), .seconds(7 * 24 * 3_600)))
        let (id, isFirst) = signal.withLock { () -> (UInt64, Bool) in
            nextID &+= 1
            handlers[nextID] = handler
            push(Entry(due: due, id: nextID))
            return (nextID, heap[0].id == nextID)
        }
        if isFirst { signal.wake() }
        return Deadline(due: due, id: id, owner: self)
    }

    private func cancel(_ id: UInt64) -> Bool {
        signal.withLock {
            guard handlers.removeValue(forKey: id) != nil else { return false }
            if heap.count > 64, heap.count > 2 * handlers.count { rebuild() }
            return true
        }
    }

    /// The thread's loop: fires what is due, then sleeps until the next deadline or a new earlier one.
    private func run() {
        while true {
            var due: [@Sendable () -> Void] = []
            let now = ContinuousClock.now
            let next = signal.withLock { () -> ContinuousClock.Instant? in
                while let first = heap.first {
                    guard let handler = handlers[first.id] else {
                        popFirst()  // cancelled
                        continue
                    }
                    guard first.due <= now else { return first.due }
                    popFirst()
                    handlers[first.id] = nil
                    due.append(handler)
                }
                return nil
            }
            if !due.isEmpty {
                for handler in due { handler() }
                continue
            }
            signal.wait(for: next.map { now.duration(to: $0) })
        }
    }

    // MARK: - The heap (with the lock held)

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(from: 0)
    }

    private func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < heap.count, heap[left].precedes(heap[first]) { first = left }
            if right < heap.count, heap[right].precedes(heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }

    private func rebuild() {
        heap.removeAll { handlers[$0.id] == nil }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }
}

package import Foundation

/// The state of an ``HTTPBodyStream``, as a value: what is buffered, how the body ended, whether the transfer should
/// be paused and whether the transport has been told, who waits. Events go in, actions come out; there is no lock,
/// no I/O, no continuation and no clock in here. `HTTPBodyStream` holds the machine under its lock, and performs
/// the actions — writing and reading the spill file, calling the transport's closures, resuming the consumer —
/// itself.
///
/// The rules it keeps:
/// - the consumer takes chunks in arrival order: those in memory first, then those spilled to the file;
/// - at most ``bufferLimit`` bytes are held in memory before the transfer is paused (a transport that can pause), or
///   before the rest goes to the spill file (one that cannot); it resumes once the consumer has taken half;
/// - the transport is told about pausing one call at a time, by one thread at a time, until it has the decision
///   last made: two threads deciding in turn under the lock could otherwise call it in the other order outside it;
/// - a deliver that decides to pause returns only once the transport has been told (``Action/stored(wake:pause:)``
///   with ``PauseCall/awaitCaller``), so a transport that reads on until told never runs far past the limit; a
///   deliver made from inside a pause call, on the calling thread, makes its call there, nested;
/// - the body ends once: complete, failed or cancelled. A cancellation drops what was not taken; after a failure, the
///   bytes that arrived before it are still handed over, then the error.
package struct BodyStreamStateMachine {
    /// Who makes a call: the driver passes the identity of its thread, so that a deliver made from inside a pause
    /// call (a transport that reads on at once when resumed) is not told to wait for itself.
    package typealias Caller = ObjectIdentifier

    /// What the thread that made a change is to do about the transport's pause closure.
    package enum PauseCall: Equatable, Sendable {
        /// Nothing: the transport already has the decision, or another thread's loop will tell it.
        case none
        /// Run the loop of pause calls: send ``Event/pauseCallDue(_:)`` and call the closure with each
        /// ``Action/callPause(_:)`` until ``Action/pauseCallsDone``.
        case call
        /// Another thread is calling the closure and its loop will make this call: wait until it is done
        /// (``isCallingPause(otherThan:)`` turns false).
        case awaitCaller
    }

    package enum Event {
        /// The transport connected its closures; `pausable` when it gave a pause closure.
        case connect(pausable: Bool)
        /// The transport delivers a chunk (never empty).
        case deliver(Data, caller: Caller)
        /// The driver wrote `count` bytes to the spill file, as ``Action/writeSpill(_:)`` asked.
        case spillWritten(Int, caller: Caller)
        /// The consumer asks for the next chunk.
        case read
        /// A read decided to resume the transfer (``Action/chunk(_:resumes:)``): the consumer, on the thread it
        /// runs on now, asks whether it is to call the pause closure.
        case resumeDue(Caller)
        /// The driver read `count` bytes back from the spill file, as ``Action/readSpill(upTo:)`` asked.
        case spillRead(Int)
        /// The transport ended the body, complete (`nil`) or failed; or the driver failed it.
        case finish(HTTPError?)
        /// The consumer cancelled the stream: `error` is the cancellation it ends with.
        case cancel(HTTPError)
        /// The thread running the loop of pause calls asks for the next call.
        case pauseCallDue(Caller)
    }

    package enum Action {
        case none
        /// A chunk delivered after the end: dropped.
        case drop
        /// Write the chunk at the end of the spill file (creating it if there is none), then send
        /// ``Event/spillWritten(_:caller:)``, or ``Event/finish(_:)`` with the failure.
        case writeSpill(Data)
        /// A chunk is stored: resume the waiting consumers when `wake`, then see to `pause`.
        case stored(wake: Bool, pause: PauseCall)
        /// Hand this chunk to the consumer; when `resumes`, the transfer is to be resumed: send
        /// ``Event/resumeDue(_:)`` from the thread that goes on (a task may change threads at the `await` in between,
        /// and the thread that calls the closure must be the one the machine knows).
        case chunk(Data, resumes: Bool)
        /// See to the pause closure (the answer to ``Event/resumeDue(_:)``): ``PauseCall/call`` or
        /// ``PauseCall/none`` — a read never waits for another thread.
        case pause(PauseCall)
        /// Read up to this many bytes back from the spill file, hand them over, and send ``Event/spillRead(_:)``.
        case readSpill(upTo: Int)
        /// The body has ended: the iteration ends (`nil`) or throws.
        case end(HTTPError?)
        /// Nothing to take yet: park the consumer until a ``stored(wake:pause:)`` or ``finished`` wakes it.
        case wait
        /// The spill file has been read to its end: delete it.
        case removeSpill
        /// The transfer was cancelled before it connected: cancel it now.
        case cancelTransfer
        /// The body ended with this event: resume the waiting consumers when `wake`, delete the spill file when
        /// `removeSpill`, cancel the transfer when `cancelTransfer`.
        case finished(wake: Bool, removeSpill: Bool, cancelTransfer: Bool)
        /// Call the transport's pause closure with this value, then send ``Event/pauseCallDue(_:)`` again.
        case callPause(Bool)
        /// The transport has the decision last made: the loop ends.
        case pauseCallsDone
    }

    /// The most bytes held in memory for the consumer before the transfer pauses or the rest spills.
    package let bufferLimit: Int
    private(set) var chunks: [Data] = []
    private var head = 0
    /// The bytes in memory that the consumer has not taken.
    package private(set) var bufferedBytes = 0
    /// The bytes in the spill file that the consumer has not taken.
    package private(set) var spilledBytes = 0
    /// Every byte the transport delivered before the end, taken or not.
    package private(set) var deliveredBytes: Int64 = 0
    /// How the body ended, once it has: `.some(nil)` when it is complete.
    package private(set) var end: HTTPError??
    /// Whether the transport gave a pause closure.
    private var isPausable = false
    /// Whether the transfer should be paused: decided by deliveries and reads.
    package private(set) var isPauseDecided = false
    /// What the transport was last told.
    package private(set) var isPauseApplied = false
    /// The thread running the loop of pause calls, while one is, and how many loops it runs: a deliver made from
    /// inside a pause call (a transport that reads on at once when resumed) runs a nested loop on the same thread.
    package private(set) var pauseCaller: Caller?
    private var pauseCallDepth = 0
    /// Consumers parked until something arrives.
    package private(set) var waitingConsumers = 0

    package init(bufferLimit: Int) {
        self.bufferLimit = Swift.max(1, bufferLimit)
    }

    /// Whether the body has ended (complete, failed or cancelled).
    package var isEnded: Bool { end != nil }

    /// Whether a thread other than `caller` is running the loop of pause calls (``PauseCall/awaitCaller``).
    package func isCallingPause(otherThan caller: Caller) -> Bool {
        pauseCaller.map { $0 != caller } ?? false
    }

    private var hasUnreadBytes: Bool { head < chunks.count || spilledBytes > 0 }

    /// Whether a ``Event/read`` would take something now (a chunk, the spill file's bytes, or the end) rather than
    /// wait: a consumer that finds it so need not park.
    package var isReadReady: Bool { hasUnreadBytes || end != nil }

    package mutating func handle(_ event: Event) -> Action {
        switch event {
        case .connect(let pausable):
            isPausable = pausable
            if case .some(.some(let error)) = end, error.code == .cancelled { return .cancelTransfer }
            return .none

        case .deliver(let chunk, let caller):
            guard end == nil else { return .drop }
            deliveredBytes += Int64(chunk.count)
            if spilledBytes > 0 || (!isPausable && bufferedBytes > bufferLimit) { return .writeSpill(chunk) }
            chunks.append(chunk)
            bufferedBytes += chunk.count
            return stored(caller: caller)

        case .spillWritten(let count, let caller):
            guard end == nil else { return .none }
            spilledBytes += count
            return stored(caller: caller)

        case .read:
            if head < chunks.count {
                let chunk = chunks[head]
                head += 1
                bufferedBytes -= chunk.count
                if head == chunks.count {
                    chunks.removeAll(keepingCapacity: true)
                    head = 0
                } else if head > 64, head * 2 > chunks.count {
                    chunks.removeFirst(head)
                    head = 0
                }
                var resumes = false
                if isPauseDecided, bufferedBytes <= bufferLimit / 2 {
                    isPauseDecided = false
                    resumes = true
                }
                return .chunk(chunk, resumes: resumes)
            }
            if spilledBytes > 0 { return .readSpill(upTo: 64 * 1024) }
            if let end { return .end(end) }
            waitingConsumers += 1
            return .wait

        case .resumeDue(let caller):
            // When another thread is calling, its loop makes this call; a read never waits for it.
            guard isPausable, isPauseApplied != isPauseDecided else { return .pause(.none) }
            return .pause(claimPauseCalls(caller) ? .call : .none)

        case .spillRead(let count):
            guard spilledBytes > 0 else { return .none }
            spilledBytes = Swift.max(0, spilledBytes - count)
            return spilledBytes == 0 ? .removeSpill : .none

        case .finish(let error):
            return finish(error, cancelTransfer: false)

        case .cancel(let error):
            // A body that arrived completely but is not consumed yet is dropped too.
            if case .some(.none) = end, hasUnreadBytes { end = nil }
            guard end == nil else { return .none }
            return finish(error, cancelTransfer: true)

        case .pauseCallDue(let caller):
            guard pauseCaller == caller else { return .pauseCallsDone }  // not the thread running the loop
            guard isPausable, isPauseApplied != isPauseDecided else {
                pauseCallDepth -= 1
                if pauseCallDepth == 0 { pauseCaller = nil }
                return .pauseCallsDone
            }
            isPauseApplied = isPauseDecided
            return .callPause(isPauseApplied)
        }
    }

    /// After a chunk was stored, in memory or in the spill file: wake the consumer, and pause when over the limit.
    private mutating func stored(caller: Caller) -> Action {
        let wake = waitingConsumers > 0
        waitingConsumers = 0
        guard bufferedBytes > bufferLimit, !isPauseDecided, isPausable else {
            return .stored(wake: wake, pause: .none)
        }
        isPauseDecided = true
        return .stored(wake: wake, pause: claimPauseCalls(caller) ? .call : .awaitCaller)
    }

    private mutating func finish(_ error: HTTPError?, cancelTransfer: Bool) -> Action {
        guard end == nil else { return .none }
        end = .some(error)
        let removeSpill = error?.code == .cancelled
        if removeSpill {
            // Cancelled: what was received and not taken is dropped, and iteration ends at once. (After a
            // failure, the bytes that arrived before it are still handed over, then the error.)
            chunks = []
            head = 0
            bufferedBytes = 0
            spilledBytes = 0
        }
        isPauseDecided = false
        let wake = waitingConsumers > 0
        waitingConsumers = 0
        return .finished(wake: wake, removeSpill: removeSpill, cancelTransfer: cancelTransfer)
    }

    /// Whether `caller` is now the one thread calling the pause closure: no other thread is calling it (the same
    /// thread may be, further up its stack: then this is a nested loop).
    private mutating func claimPauseCalls(_ caller: Caller) -> Bool {
        guard pauseCaller == nil || pauseCaller == caller else { return false }
        pauseCaller = caller
        pauseCallDepth += 1
        return true
    }
}

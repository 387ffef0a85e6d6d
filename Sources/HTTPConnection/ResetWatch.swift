import HTTP

/// The streams and listings a connection has open, for ``Connection/reset(mode:)`` to end: a stream has no end a
/// reset could wait for (an event stream, a long export), so a reset through the connection ends them at once with
/// `HTTPError.Code.resetInProgress` rather than let the old session's data flow on after it.
final class OpenTransfers: Sendable {
    private struct Registered {
        weak var watch: ResetWatch?
    }

    private struct State {
        var nextID: UInt64 = 0
        var watches: [UInt64: Registered] = [:]
        /// Resets through the connection that have begun and not returned: a transfer that opens meanwhile is
        /// ended at once.
        var resetsRunning = 0
    }

    private let state = Locked(State())

    /// A new identifier for a watch.
    fileprivate func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Registers `watch` under `id`; returns whether a reset is running (the watch is then reset already).
    fileprivate func register(_ watch: ResetWatch, as id: UInt64) -> Bool {
        state.withLock { state in
            state.watches[id] = Registered(watch: watch)
            return state.resetsRunning > 0
        }
    }

    fileprivate func remove(_ id: UInt64) {
        state.withLock { _ = $0.watches.removeValue(forKey: id) }
    }

    /// A reset begins: every open transfer ends, and those that open until ``resetEnded()`` end at once.
    func resetBegan() {
        let watches = state.withLock { state -> [ResetWatch] in
            state.resetsRunning += 1
            return state.watches.values.compactMap(\.watch)
        }
        for watch in watches { watch.reset() }
    }

    func resetEnded() {
        state.withLock { $0.resetsRunning -= 1 }
    }

    /// The number of transfers registered (for tests).
    var count: Int { state.withLock { $0.watches.values.count { $0.watch != nil } } }
}

/// One open stream's or listing's part in its connection's resets: whether one has ended it, and what stops it.
final class ResetWatch: Sendable {
    private struct State {
        var isReset = false
        var stop: (@Sendable () -> Void)?
    }

    private let state = Locked(State())
    private let transfers: OpenTransfers
    private let id: UInt64

    init(_ transfers: OpenTransfers) {
        self.transfers = transfers
        id = transfers.makeID()
        if transfers.register(self, as: id) { state.withLock { $0.isReset = true } }
    }

    deinit {
        transfers.remove(id)
    }

    /// Whether a reset through the connection has ended the transfer.
    var isReset: Bool { state.withLock { $0.isReset } }

    /// Sets what stops the transfer when a reset ends it; runs it at once when one already has.
    func onReset(_ stop: @escaping @Sendable () -> Void) {
        let isReset = state.withLock { state -> Bool in
            if !state.isReset { state.stop = stop }
            return state.isReset
        }
        if isReset { stop() }
    }

    fileprivate func reset() {
        let stop = state.withLock { state -> (@Sendable () -> Void)? in
            state.isReset = true
            defer { state.stop = nil }
            return state.stop
        }
        stop?()
    }
}

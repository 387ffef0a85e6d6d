package import HTTP

// The loaders of WritingALoader.md, as the article writes them (Tests/HTTPTests/DocumentationExamplesTests.swift
// checks that every sample of the article is here or there; `package` is ignored by that comparison). They live in
// the shared test support so that the every-order reset test and the chaos stress test put a loader written only
// from the article in their chains.

/// A stand-in for `Synchronization.Mutex` (not imported here) with the same `withLock`, built on the package's
/// pthread-based `Locked`. The samples use `Mutex`, as readers should; but on Linux ThreadSanitizer cannot see
/// `Mutex`'s locking and would report the samples' contended accesses as races (see `Locked` in
/// Sources/HTTP/Chain/Locked.swift), and the test suite runs under ThreadSanitizer.
package final class Mutex<Value>: Sendable {
    private let lock: Locked<Value>

    package init(_ value: Value) {
        lock = Locked(value)
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock(body)
    }
}

// WritingALoader.md, "Override only what you change".
/// Counts the requests sent to each host since the last reset.
// Safety: HTTPLoader is an open class, so Swift cannot check a subclass for Sendable. This one's only
// mutable state is `counts`, which lives in a Mutex.
package final class RequestsPerHost: HTTPLoader, @unchecked Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// The number of requests sent to `host` since the last reset.
    package func count(for host: String) -> Int {
        counts.withLock { $0[host, default: 0] }
    }

    package override func load(_ request: HTTPRequest) async -> HTTPResult {
        counts.withLock { $0[request.host ?? "", default: 0] += 1 }
        return await super.load(request)
    }

    package override func forgetState() async {
        counts.withLock { $0 = [:] }
    }
}

// WritingALoader.md, "Hold requests, and take part in a reset".
/// Holds requests while closed and lets them through once opened.
///
/// A held request completes exactly once: it is sent on when the gate opens, fails with `.cancelled` as soon
/// as its task is cancelled, or fails with `.resetInProgress` when the chain is reset.
// Safety: HTTPLoader is an open class, so Swift cannot check a subclass for Sendable. All of this one's
// mutable state is in `state`, a Mutex.
package final class Gate: HTTPLoader, @unchecked Sendable {
    private enum Decision: Sendable {
        case send, cancel, refuse
    }

    private struct State {
        var isOpen = true
        var nextTicket = 0
        var held: [(ticket: Int, continuation: CheckedContinuation<Decision, Never>)] = []
    }

    private let state = Mutex(State())

    /// The number of requests being held.
    package var heldCount: Int { state.withLock { $0.held.count } }

    /// Holds the requests that arrive from now on.
    package func close() {
        state.withLock { $0.isOpen = false }
    }

    /// Sends every held request on, and lets later ones through.
    package func open() {
        let held = state.withLock { state in
            state.isOpen = true
            return takeHeld(&state)
        }
        for continuation in held { continuation.resume(returning: .send) }
    }

    package override func load(_ request: HTTPRequest) async -> HTTPResult {
        let ticket = state.withLock { state -> Int? in
            guard !state.isOpen else { return nil }
            state.nextTicket += 1
            return state.nextTicket
        }
        // A loader's own reset traffic (a logout's revocation) is never held: the reset would wait for it.
        guard let ticket, !request.isPartOfReset else { return await super.load(request) }

        let decision = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Decision? in  // decide under the lock…
                    if Task.isCancelled { return .cancel }
                    if isResetting { return .refuse }  // checked where it parks: see failHeldLoads
                    if state.isOpen { return .send }
                    state.held.append((ticket, continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }  // …act outside it
            }
        } onCancel: {
            let continuation = state.withLock { state in
                state.held.firstIndex { $0.ticket == ticket }.map { state.held.remove(at: $0).continuation }
            }
            continuation?.resume(returning: .cancel)
        }

        switch decision {
        case .send: return await super.load(request)
        case .cancel: return .failure(HTTPError(.cancelled, request: request))
        case .refuse: return .failure(resetRefusal(of: request))
        }
    }

    /// A reset has begun: fails every held request with `.resetInProgress`. It must not wait. `isResetting` is
    /// already true when this runs, and `load` checks it under the lock this takes, so a request either parked in
    /// time to be failed here or sees the reset and does not park. The gate stays closed or open, as it was.
    package override func failHeldLoads(_ mode: ResetMode) {
        let held = state.withLock { takeHeld(&$0) }
        for continuation in held { continuation.resume(returning: .refuse) }
    }

    private func takeHeld(_ state: inout State) -> [CheckedContinuation<Decision, Never>] {
        defer { state.held = [] }
        return state.held.map(\.continuation)
    }
}

// WritingALoader.md, "Send again after an answer: count the whole load".
/// Sends a request once more when the server answers `503 Service Unavailable` and its body can be sent again.
package final class RetryOnceWhenUnavailable: HTTPLoader, @unchecked Sendable {  // Sendable: it has no state
    package override func load(_ request: HTTPRequest) async -> HTTPResult {
        await withLoadCounted {
            let first = await super.load(request)
            guard first.response?.status == .serviceUnavailable, request.body.isReplayable else { return first }
            return await super.load(request)  // refused if a reset has begun since the first answer
        }
    }
}

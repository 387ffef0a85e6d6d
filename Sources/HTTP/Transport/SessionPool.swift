#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
#else
import Foundation
#endif

/// The sessions ``URLSessionLoader`` lends to transfers that must not share a session with other requests: a
/// streamed response, and a request with a server-trust evaluator or a client identity of its own.
///
/// Each session carries one such transfer at a time, so a stream's pause, or a stream that holds its connection
/// for as long as the server sends, never holds back another request (URLSession queues a host's requests beyond
/// its connection limit, per session). When the transfer ends the session comes back here with its idle
/// connections, and the next transfer with the same TLS settings takes it: consecutive streams reuse connections
/// instead of opening and closing one each, and a request with an evaluator only ever reuses a connection whose
/// handshake was checked with the same settings.
///
/// At most ``idleLimit`` sessions wait idle; beyond that the one idle longest is invalidated (with its
/// connections).
final class SessionPool: Sendable {
    /// A session lent to one transfer, and the delegate that routes its tasks' callbacks.
    struct Lease: Sendable {
        let session: URLSession
        let delegate: SessionDelegate
        let tls: TLSSettings
    }

    private struct State {
        /// The sessions no transfer uses, the one returned last at the end.
        var idle: [Lease] = []
        /// Set when the loader goes away: sessions returned from then on are invalidated.
        var isClosed = false
    }

    /// The most idle sessions kept: enough for the streams a busy client runs at once, few enough that an idle
    /// pool holds little.
    static let idleLimit = 16

    private let state = Locked(State())
    private let makeSession: @Sendable (URLSessionConfiguration, SessionDelegate) -> URLSession

    /// - Parameter makeSession: Makes a session with a configuration and a delegate.
    init(makeSession: @escaping @Sendable (URLSessionConfiguration, SessionDelegate) -> URLSession) {
        self.makeSession = makeSession
    }

    /// A session for one transfer with `tls`: the idle one with those settings returned last, or a new one with
    /// `configuration`.
    func lease(for tls: TLSSettings, configuration: @autoclosure () -> URLSessionConfiguration) -> Lease {
        let reused = state.withLock { state -> Lease? in
            guard let index = state.idle.lastIndex(where: { $0.tls == tls }) else { return nil }
            return state.idle.remove(at: index)
        }
        if let reused { return reused }
        let delegate = SessionDelegate()
        return Lease(session: makeSession(configuration(), delegate), delegate: delegate, tls: tls)
    }

    /// Takes back a session whose transfer has ended (its task completed), to lend again.
    func giveBack(_ lease: Lease) {
        let invalidated = state.withLock { state -> [Lease] in
            guard !state.isClosed else { return [lease] }
            state.idle.append(lease)
            guard state.idle.count > Self.idleLimit else { return [] }
            return [state.idle.removeFirst()]
        }
        for lease in invalidated { lease.session.finishTasksAndInvalidate() }
    }

    /// Invalidates the idle sessions, and each session lent out once it comes back.
    func close() {
        let idle = state.withLock { state -> [Lease] in
            state.isClosed = true
            defer { state.idle = [] }
            return state.idle
        }
        for lease in idle { lease.session.finishTasksAndInvalidate() }
    }

    /// The number of idle sessions (for tests).
    var idleCount: Int { state.withLock { $0.idle.count } }
}

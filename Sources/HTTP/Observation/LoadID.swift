import Synchronization

/// The identity of one load: one call of ``HTTPLoader/load(_:)`` at the top of a chain, with all its attempts.
///
/// ``HTTPRequest/id`` identifies a request *value*: copies share it, so four concurrent loads of the same request
/// have one `id`. A `LoadID` identifies each of those loads, and is kept by everything that belongs to one of them
/// — its retries, an authentication replay, the requests each attempt sends — so a log or an observer can tell
/// concurrent loads apart and still group a load's attempts (told apart by ``HTTPRequest/attemptNumber``).
///
/// The loaders that log or report a load stamp it on the request when it has none: ``Observe``, ``PrintLoader``
/// and ``PropagateTraceContext``. Read it with ``HTTPRequest/loadID``; it is `nil` when no such loader is in the
/// chain above. Identities come from a counter: unique in the process, cheap, and in the order loads started.
///
/// ```
/// → #17 GET https://api.example.com/people/42
/// → #18 GET https://api.example.com/people/42
/// ← #18 200 OK GET https://api.example.com/people/42 · 213 bytes · 40.2 ms (head 38.9 ms)
/// ```
public struct LoadID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number: the first identity handed out in a process is 1.
    public let rawValue: UInt64

    /// An identity with the given number (for tests and for identities read back from logs).
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// A new identity, never handed out before in this process.
    package static func next() -> LoadID {
        LoadID(rawValue: counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// The last number handed out. Relaxed ordering is enough: only uniqueness matters, not an order with other
    /// memory operations.
    private static let counter = Atomic<UInt64>(0)

    public static func < (lhs: LoadID, rhs: LoadID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// `#` and the number, as log lines show it: `#17`.
    public var description: String { "#\(rawValue)" }
}

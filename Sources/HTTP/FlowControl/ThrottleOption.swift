/// Whether a request waits for a ``Throttle`` slot; see ``HTTPRequest/throttle``.
@frozen
public enum ThrottleOption: HTTPRequestOption, Sendable, Hashable {
    /// Wait for a slot like every other request (the default).
    case always
    /// Skip the queue: go downstream at once, without taking a slot. For requests that must never wait
    /// behind bulk traffic, such as a token refresh or a health check.
    case never

    public static let defaultOptionValue: ThrottleOption = .always
}

/// The lane a request waits in at a ``Throttle``; see ``HTTPRequest/throttlePriority``.
@frozen
public enum ThrottlePriority: Int, HTTPRequestOption, Sendable, Hashable, Comparable, CaseIterable {
    /// Background work: prefetching, analytics.
    case low = 0
    /// Most requests (the default).
    case normal = 1
    /// What the user is waiting for right now.
    case high = 2

    public static let defaultOptionValue: ThrottlePriority = .normal

    public static func < (lhs: ThrottlePriority, rhs: ThrottlePriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension HTTPRequest {
    /// Whether this request waits for a ``Throttle`` slot; ``ThrottleOption/always`` by default.
    public var throttle: ThrottleOption {
        get { self[option: ThrottleOption.self] }
        set { self[option: ThrottleOption.self] = newValue }
    }

    /// The lane this request waits in at a ``Throttle``; ``ThrottlePriority/normal`` by default.
    public var throttlePriority: ThrottlePriority {
        get { self[option: ThrottlePriority.self] }
        set { self[option: ThrottlePriority.self] = newValue }
    }
}

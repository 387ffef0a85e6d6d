/// Something that happened to a load, delivered to the ``HTTPEventObserver``s installed with ``Observe``.
///
/// Every event names its load (``loadID``) and carries the request as the loader that emitted it had it, so
/// ``HTTPRequest/attemptNumber`` tells which attempt it concerns. What else it carries depends on its ``kind``:
///
/// | kind | emitted by | ``result`` | other fields |
/// |---|---|---|---|
/// | ``Kind/loadStarted`` | ``Observe`` | — | — |
/// | ``Kind/attemptStarted`` | the terminal, as it hands the request to the transport | — | — |
/// | ``Kind/responseHeadReceived`` | the terminal, when the transport tells | the head: status and fields, no body | — |
/// | ``Kind/attemptFinished`` | the terminal, when the transfer ended | the attempt's | ``metrics`` |
/// | ``Kind/retryScheduled`` | ``Retry``, before it waits | the attempt being retried | ``delay`` |
/// | ``Kind/redirectFollowed`` | ``FollowRedirects``, before the next hop | the redirect | ``request``: the next hop |
/// | ``Kind/loadFinished`` | ``Observe`` | the load's | ``duration``, ``metrics`` |
/// | ``Kind/credentialObtained``, ``Kind/credentialRefreshed`` | an authentication loader, when the flow this load started ended with a credential | — | ``duration``: the flow's |
/// | ``Kind/credentialFailed`` | an authentication loader, when the flow this load started failed | the failure | ``duration``: the flow's |
///
/// For one load they come in this order: `loadStarted`, then for each attempt `attemptStarted`,
/// `responseHeadReceived` (where the transport reports it) and `attemptFinished`, with `retryScheduled` between
/// attempts and `redirectFollowed` between the hops of a redirected load, and `loadFinished` last, exactly once. A
/// load that never reaches the terminal (refused by a reset, cancelled while queued, invalid) goes from
/// `loadStarted` to `loadFinished`. A credential flow (a login, a token refresh, an API key fetched) is reported
/// once, on the load whose arrival started it, before that load's attempt; the loads that waited for the same flow
/// report nothing.
///
/// Kinds are values of an extensible type, like ``HTTPError/Code``: more will come (a wait in a queue), so a
/// `switch` over them needs a `default`.
public struct HTTPEvent: Sendable {
    /// What happened. New kinds may be added; loaders outside this module may define their own.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        /// The number of a kind this module defines (its position in ``builtInNames``, from 1), or 0 for one defined
        /// elsewhere: two built-in kinds compare by number, which observers do for every event of every load.
        private let code: UInt8

        public init(rawValue: String) {
            self.rawValue = rawValue
            self.code = Self.builtInNames.firstIndex(of: rawValue).map { UInt8($0 + 1) } ?? 0
        }

        /// A kind this module defines: its number and name, made without looking the name up.
        private init(code: UInt8, _ name: String) {
            self.rawValue = name
            self.code = code
        }

        /// The kinds this module defines, in the order of their numbers.
        private static let builtInNames = [
            "loadStarted", "attemptStarted", "responseHeadReceived", "attemptFinished", "retryScheduled",
            "redirectFollowed", "loadFinished", "credentialObtained", "credentialRefreshed", "credentialFailed",
        ]

        public static func == (lhs: Kind, rhs: Kind) -> Bool {
            // A kind made from a built-in name has that kind's number, so numbers decide whenever one side has one.
            lhs.code != 0 || rhs.code != 0 ? lhs.code == rhs.code : lhs.rawValue == rhs.rawValue
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(rawValue)
        }

        public var description: String { rawValue }

        /// A load entered the ``Observe`` loader: the first event of every load.
        public static var loadStarted: Kind { Kind(code: 1, "loadStarted") }
        /// The terminal is handing an attempt to the transport.
        public static var attemptStarted: Kind { Kind(code: 2, "attemptStarted") }
        /// The status and header fields of an attempt's response arrived; the body follows. Only transports that
        /// see the head before the body emit it.
        public static var responseHeadReceived: Kind { Kind(code: 3, "responseHeadReceived") }
        /// An attempt's transfer ended, with a response or an error; ``HTTPEvent/metrics`` has its timings.
        public static var attemptFinished: Kind { Kind(code: 4, "attemptFinished") }
        /// ``Retry`` will send the request again after ``HTTPEvent/delay``.
        public static var retryScheduled: Kind { Kind(code: 5, "retryScheduled") }
        /// ``FollowRedirects`` follows a redirect: ``HTTPEvent/result`` is the `3xx`, ``HTTPEvent/request`` the
        /// request it sends next.
        public static var redirectFollowed: Kind { Kind(code: 6, "redirectFollowed") }
        /// The load completed: the last event of every load.
        public static var loadFinished: Kind { Kind(code: 7, "loadFinished") }
        /// An authentication loader (a `CredentialLoader` of `HTTPAuth`: OAuth, BasicAuth, a scheme of your own)
        /// obtained a credential in a flow this load started: a login, saved credentials read, a key fetched.
        public static var credentialObtained: Kind { Kind(code: 8, "credentialObtained") }
        /// An authentication loader replaced a credential that was due or refused, in a flow this load started: a
        /// token refresh.
        public static var credentialRefreshed: Kind { Kind(code: 9, "credentialRefreshed") }
        /// A credential flow this load started failed; ``HTTPEvent/result`` has the failure.
        public static var credentialFailed: Kind { Kind(code: 10, "credentialFailed") }
    }

    /// What happened.
    public var kind: Kind
    /// The load it happened to.
    public var loadID: LoadID
    /// The request as the emitting loader had it: the attempt's copy, with what the loaders above added.
    public var request: HTTPRequest
    /// When it happened.
    public var instant: ContinuousClock.Instant
    /// The result it concerns: see the table in ``HTTPEvent``.
    public var result: HTTPResult?
    /// For ``Kind/retryScheduled``: how long ``Retry`` waits before the next attempt.
    public var delay: Duration?
    /// For ``Kind/loadFinished``: the time since ``Kind/loadStarted``, every attempt and wait included; for the
    /// credential kinds, the flow's.
    public var duration: Duration?

    /// Creates an event; loaders emit them with ``HTTPRequest/emit(_:result:delay:duration:)``.
    public init(
        kind: Kind,
        loadID: LoadID,
        request: HTTPRequest,
        instant: ContinuousClock.Instant = .now,
        result: HTTPResult? = nil,
        delay: Duration? = nil,
        duration: Duration? = nil
    ) {
        self.kind = kind
        self.loadID = loadID
        self.request = request
        self.instant = instant
        self.result = result
        self.delay = delay
        self.duration = duration
    }

    /// The transfer metrics of ``result``: its response's, or its error's (``HTTPError/metrics``).
    public var metrics: HTTPMetrics? {
        switch result {
        case .success(let response): response.metrics
        case .failure(let error): error.metrics ?? error.response?.metrics
        case nil: nil
        }
    }
}

extension HTTPEvent: CustomStringConvertible {
    /// `"#17 attemptFinished GET https://example.com/ (attempt 2)"`, with secrets redacted as in
    /// ``HTTPRequest/description``.
    public var description: String {
        let attempt = request.attemptNumber > 1 ? " (attempt \(request.attemptNumber))" : ""
        return "\(loadID) \(kind) \(request)\(attempt)"
    }
}

package import Foundation
package import HTTP

/// A ``CredentialLoader``'s protocol as a value: which requests go out with which credential, which wait for a flow,
/// which fail, and when a flow starts. No `await`, no I/O, no lock and no clock of its own — time comes with each
/// event. The loader holds one behind its lock, performs the flows its ``Arrival/start(_:_:)`` asks for, and reports
/// their ends with ``flowEnded(_:with:at:)``.
///
/// ```
/// state            request arrives                              flow ends                  reset
/// ───────────────  ───────────────────────────────────────────  ─────────────────────────  ───────────────────
/// no credential    start (missing), wait                        —                          forget
/// usable           send with it                                 —                          forget
/// due              start (due), wait                            —                          forget
/// refused (a 401   start (refused), wait; the refusal limit     —                          forget
///   for it)        reached: fail
/// flow running     wait                                         success: usable, answer    drop the flow,
///                                                               all; failure: fail all     fail all waiting
///                                                               (a failure that forgets
///                                                               the credential: no
///                                                               credential)
/// ```
///
/// A `401` for a credential that has been replaced since (an older version) is not a refusal of the current one: the
/// request goes out again with the current credential. A refused credential is never sent again: it stays, as the
/// input of the refresh that replaces it (an OAuth refresh token outlives a revoked access token), but it is due from
/// then on, and a new version, so the refusals of requests sent with it meanwhile are of an older one.
package struct CredentialStateMachine<Credential: Sendable>: Sendable {
    /// One flow.
    package struct FlowID: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: UInt64
        package var description: String { "flow \(rawValue)" }
    }

    /// What a flow does.
    package indirect enum Purpose: Sendable {
        /// Get a credential: there is none.
        case obtain
        /// Replace this credential: it is due, or the server refused it.
        case refresh(Credential, CredentialContext.Trigger)

        package var trigger: CredentialContext.Trigger {
            switch self {
            case .obtain: .missing
            case .refresh(_, let trigger): trigger
            }
        }
    }

    /// A credential ready to send, with its version: a `401` for an older version is not a refusal of the current one.
    package struct Grant: Sendable {
        package let credential: Credential
        package let version: UInt64
    }

    /// Why a request gets no credential: `HTTPError`'s code, a message, and the error behind it, if any.
    package struct Refusal: Sendable {
        package let code: HTTPError.Code
        package let message: String
        package let underlyingError: (any Error & Sendable)?
    }

    /// What a request that needs a credential does.
    package indirect enum Arrival: Sendable {
        /// Go out with this credential.
        case send(Grant)
        /// Wait for the flow in progress.
        case wait
        /// Wait for a new flow, which the loader starts.
        case start(FlowID, Purpose)
        /// Fail at once.
        case refuse(Refusal)
    }

    /// What the requests waiting for a flow are told.
    package indirect enum Answer: Sendable {
        case send(Grant)
        case refuse(Refusal)
    }

    /// What a ``CredentialLoader`` reports as its situation.
    package enum Situation: Sendable, Hashable {
        case idle, authorizing, authorized, needsRefresh
    }

    /// Who holds the credential, for messages: "the API key".
    private let credentialName: String
    /// At most this many refusals of a fresh credential within its window; `nil`: no limit.
    private let refusalLimit: RefreshLimit?
    private let isDue: @Sendable (Credential, Date) -> Bool

    package private(set) var credential: Credential? {
        get { if case .some(let credential) = held { credential } else { nil } }
        set { held = newValue.map(Held.some) ?? .none }
    }
    private var held = Held.none
    /// Grows whenever the credential changes (replaced or forgotten).
    package private(set) var version: UInt64 = 0
    /// The flow in progress, and what it does.
    package private(set) var flow: (id: FlowID, purpose: Purpose)?
    private var isRefreshRequested = false
    /// When the server refused a credential this machine had handed out, within the refusal limit's window.
    private var refusalTimes: [Date] = []
    private var lastFlowID: UInt64 = 0

    /// - Parameters:
    ///   - credentialName: The credential as messages name it.
    ///   - credential: A credential to start with.
    ///   - refusalLimit: At most this many refusals of fresh credentials within its window; `nil` for no limit.
    ///   - isDue: Whether a credential needs replacing before it is used at a time.
    package init(
        credentialName: String,
        credential: Credential?,
        refusalLimit: RefreshLimit?,
        isDue: @escaping @Sendable (Credential, Date) -> Bool
    ) {
        self.credentialName = credentialName
        self.refusalLimit = refusalLimit
        self.isDue = isDue
        self.credential = credential
    }

    /// The credential, boxed. With it, and the enums that carry a credential, indirect, the machine's layout does not
    /// depend on `Credential`: copying it (and the loader's state around it) is fixed-layout code, not code that asks
    /// `Credential`'s metadata how to copy each field.
    private indirect enum Held: Sendable {
        case none
        case some(Credential)
    }

    // MARK: - Requests

    /// The credential to send a request with at once, or `nil` when it has to go through
    /// ``requestArrived(refusing:response:at:)``: no flow, and a credential that is not due. The fast path.
    package func grant(usableAt now: Date) -> Grant? {
        guard flow == nil, !isRefreshRequested, let credential, !isDue(credential, now) else { return nil }
        return Grant(credential: credential, version: version)
    }

    /// A request needs a credential. `refused` is the version the server just answered with `response` (a refusal):
    /// still the current one, it is refreshed; an older one, the request goes again with the current credential.
    package mutating func requestArrived(
        refusing refused: UInt64? = nil, response: HTTPResponse? = nil, at now: Date
    ) -> Arrival {
        if let refused, refused == version, let current = credential {
            // The server refused the current credential: replace it — unless fresh credentials keep being refused.
            if let refusalLimit {
                refusalTimes.removeAll { now.timeIntervalSince($0) >= refusalLimit.window.seconds }
                if refusalTimes.count >= refusalLimit.maximumRefreshes {
                    return .refuse(
                        Refusal(
                            code: .cannotAuthenticate,
                            message: "the server refused \(refusalTimes.count + 1) of \(credentialName) within "
                                + "\(refusalLimit.window), each just after it was obtained; not replacing it again "
                                + "until \(refusalLimit.window) after the first",
                            underlyingError: nil))
                }
                refusalTimes.append(now)
            }
            // Kept as the refresh's input, never sent again: due, and a new version.
            isRefreshRequested = true
            version += 1
            if flow != nil { return .wait }
            return start(.refresh(current, response.map { .refused($0) } ?? .due))
        }
        if flow != nil { return .wait }
        guard let credential else { return start(.obtain) }
        if isRefreshRequested || isDue(credential, now) { return start(.refresh(credential, .due)) }
        return .send(Grant(credential: credential, version: version))
    }

    /// Marks the current credential as due: the next request replaces it first. Does nothing without one.
    package mutating func setNeedsRefresh() {
        if credential != nil { isRefreshRequested = true }
    }

    private mutating func start(_ purpose: Purpose) -> Arrival {
        lastFlowID += 1
        let id = FlowID(rawValue: lastFlowID)
        flow = (id, purpose)
        return .start(id, purpose)
    }

    // MARK: - Flows

    /// Flow `id` ended with `outcome`: the answer for every waiting request, or `nil` when the flow is no longer the
    /// current one (a reset dropped it), whose outcome changes nothing.
    package mutating func flowEnded(_ id: FlowID, with outcome: Result<Credential, any Error>, at now: Date) -> Answer?
    {
        guard let flow, flow.id == id else { return nil }
        self.flow = nil
        switch outcome {
        case .success(let new):
            (credential, isRefreshRequested) = (new, false)
            version += 1
            return .send(Grant(credential: new, version: version))
        case .failure(let failure as CredentialFailure):
            if failure.forgetsCredential {
                (credential, isRefreshRequested) = (nil, false)
                version += 1
            }
            return .refuse(
                Refusal(code: .cannotAuthenticate, message: failure.message, underlyingError: failure.underlyingError))
        case .failure(let error):
            // The error is the HTTPError's underlying error, which its description names: not named here again.
            let verb = if case .obtain = flow.purpose { "obtaining" } else { "replacing" }
            return .refuse(
                Refusal(code: .cannotAuthenticate, message: "\(verb) \(credentialName) failed", underlyingError: error))
        }
    }

    // MARK: - Reset

    /// Phase 1 of a reset: the flow in progress, if any, is dropped (its outcome will change nothing). Returns it, for
    /// the loader to interrupt.
    package mutating func dropFlow() -> FlowID? {
        defer { flow = nil }
        return flow?.id
    }

    /// Phase 3 of a reset: forgets the credential, a requested refresh and the refusals counted; returns the
    /// credential, for the scheme to forget too.
    package mutating func forget() -> Credential? {
        defer {
            (credential, isRefreshRequested, refusalTimes) = (nil, false, [])
            version += 1
        }
        return credential
    }

    // MARK: - Observing

    /// Where the machine is at `now`.
    package func situation(at now: Date) -> Situation {
        if flow != nil { return .authorizing }
        guard let credential else { return .idle }
        return isRefreshRequested || isDue(credential, now) ? .needsRefresh : .authorized
    }
}

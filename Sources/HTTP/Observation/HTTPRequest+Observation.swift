/// What the observing loaders put on a request: the identity of its load and the observers installed above.
struct LoadObservation: Sendable {
    var id: LoadID
    /// In the order they were installed: the one nearest the head of the chain first.
    var observers: [any HTTPEventObserver]
}

extension HTTPRequest {
    /// The identity of the load this request belongs to, stamped by the first of ``Observe``, ``PrintLoader`` or
    /// ``PropagateTraceContext`` it passed through; `nil` when none of them is above. Every attempt and replay of a
    /// load carries the same identity.
    public var loadID: LoadID? {
        observation?.id
    }

    /// Whether an ``HTTPEventObserver`` is installed above: emitting an event that nobody receives costs a look at
    /// the request (and, with observers, asking them whether they want it), and a loader can skip building what only an
    /// event would need.
    public var isObserved: Bool {
        observation.map { !$0.observers.isEmpty } ?? false
    }

    /// Sends an event about this request to the observers installed above with ``Observe``, if any.
    ///
    /// A loader calls it as things happen to a load: ``Retry`` for ``HTTPEvent/Kind/retryScheduled``, a terminal
    /// for the attempt's events (see ``HTTPEvent``). The event is built only when an observer of the load is
    /// interested in its kind (``HTTPEventObserver/isInterested(in:)``): otherwise this is one look at the request and
    /// a question to each observer, and `result` is not evaluated.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - result: The result it concerns, if any.
    ///   - delay: For ``HTTPEvent/Kind/retryScheduled``, the wait before the next attempt.
    ///   - duration: How long what the event reports took (a credential flow's time).
    public func emit(
        _ kind: HTTPEvent.Kind, result: @autoclosure () -> HTTPResult? = nil, delay: Duration? = nil,
        duration: Duration? = nil
    ) {
        guard let observation else { return }
        observation.observers.deliver(kind) {
            HTTPEvent(
                kind: kind, loadID: observation.id, request: self, result: result(), delay: delay, duration: duration)
        }
    }

    /// The load's identity, stamped first when the request has none; with `observer`, which then receives the events
    /// emitted below.
    ///
    /// Stamping writes the request: it copies the request's storage unless this request is its only owner.
    package mutating func observe(with observer: (any HTTPEventObserver)? = nil) -> LoadID {
        observe(with: observer.map { [$0] } ?? [])
    }

    /// The load's identity, stamped first when the request has none; with `observers`, which then receive the events
    /// emitted below, after those installed above.
    package mutating func observe(with observers: [any HTTPEventObserver]) -> LoadID {
        let existing = observation
        if let existing, observers.isEmpty { return existing.id }
        var stamped: LoadObservation
        if let existing {
            stamped = existing
            stamped.observers += observers
        } else {
            // The list is the caller's own, shared rather than copied.
            stamped = LoadObservation(id: .next(), observers: observers)
        }
        observation = stamped
        return stamped.id
    }
}

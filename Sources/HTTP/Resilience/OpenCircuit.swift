import Foundation

/// The state of a ``CircuitBreaker``'s circuit for one origin.
@frozen
public enum CircuitState: Sendable, Hashable, CustomStringConvertible {
    /// Requests go through, and their failures are counted.
    case closed
    /// Requests fail at once with ``HTTPError/Code/circuitOpen`` until the open time has passed.
    case open
    /// One request, the trial, goes through; the others fail at once until it is answered. A success closes the
    /// circuit, a failure opens it again.
    case halfOpen

    public var description: String {
        switch self {
        case .closed: "closed"
        case .open: "open"
        case .halfOpen: "half-open"
        }
    }
}

/// A change of a ``CircuitBreaker``'s circuit for one origin, as ``CircuitBreaker/transitions()`` reports it.
public struct CircuitTransition: Sendable, Hashable, CustomStringConvertible {
    /// The origin whose circuit changed.
    public let origin: Origin
    /// The state it left.
    public let from: CircuitState
    /// The state it entered.
    public let to: CircuitState

    public init(origin: Origin, from: CircuitState, to: CircuitState) {
        self.origin = origin
        self.from = from
        self.to = to
    }

    /// `"https://api.example.com: closed → open"`.
    public var description: String { "\(origin): \(from) → \(to)" }
}

/// Why a ``CircuitBreaker`` failed a request at once: the ``HTTPError/underlyingError`` of its
/// ``HTTPError/Code/circuitOpen`` errors, also reached through ``HTTPError/openCircuit``.
///
/// ```swift
/// if case .failure(let error) = result, let open = error.openCircuit {
///     print("\(open.origin) is failing; try again in \(open.retryAfter)")
/// }
/// ```
public struct OpenCircuit: Error, Sendable, CustomStringConvertible {
    /// The origin whose circuit is open.
    public let origin: Origin
    /// ``CircuitState/open``, or ``CircuitState/halfOpen`` while the trial request is in flight.
    public let state: CircuitState
    /// The failure that opened the circuit: a response with a failure status, or a transport error. Its request
    /// is the one that failed, not the one refused.
    public let lastFailure: HTTPResult
    /// How long from the refusal until the breaker lets the next trial through. Zero while a trial is in flight:
    /// its answer decides.
    public let retryAfter: Duration

    public init(origin: Origin, state: CircuitState, lastFailure: HTTPResult, retryAfter: Duration) {
        self.origin = origin
        self.state = state
        self.lastFailure = lastFailure
        self.retryAfter = retryAfter
    }

    /// `"the circuit for https://api.example.com is open; next trial in 4.2 s; last failure: HTTP 503"`.
    public var description: String {
        let trial =
            retryAfter > .zero
            ? "next trial in \(String(format: "%.1f", retryAfter.secondsClampedToRetryRange)) s"
            : "a trial request is in flight"
        let failure =
            switch lastFailure {
            case .success(let response): "HTTP \(response.status)"
            case .failure(let error): "\(error.code) (\(error.message))"
            }
        return "the circuit for \(origin) is \(state); \(trial); last failure: \(failure)"
    }
}

extension HTTPError.Code {
    /// A ``CircuitBreaker`` failed the request at once, without sending it, because the origin has been failing;
    /// the error's ``HTTPError/openCircuit`` says when it lets a trial through.
    public static let circuitOpen = HTTPError.Code(rawValue: "circuitOpen")
}

extension HTTPError {
    /// Why a ``CircuitBreaker`` refused the request (for ``Code/circuitOpen`` errors), or `nil`.
    public var openCircuit: OpenCircuit? {
        underlyingError as? OpenCircuit
    }
}

public import Foundation

/// Decides, from the result of an attempt, whether a request is sent again and after how long.
///
/// ``Retry`` asks the request's strategy (``HTTPRequest/retryStrategy``), or its own default, after every
/// attempt. ``Backoff`` is the standard strategy; write your own for an API with its own rules:
///
/// ```swift
/// struct RetryOnConflict: HTTPRetryStrategy {
///     func retryDecision(for result: HTTPResult, context: RetryContext) -> RetryDecision {
///         guard context.attempt < 3, result.response?.status == .conflict else { return .doNotRetry }
///         return .retry(after: .milliseconds(100 * context.attempt))
///     }
/// }
/// ```
///
/// To add rules to the standard strategy rather than replace it, combine them: with
/// `.firstDecision(of: [RetryOnConflict(), .standard])` (``FirstDecisionStrategy``) the first strategy that
/// decides to retry wins.
///
/// A strategy only decides; ``Retry`` still refuses to repeat requests that are not idempotent (see
/// ``HTTPRequest/isIdempotent``), never retries cancelled or reset requests, and spends its
/// ``RetryBudget``.
public protocol HTTPRetryStrategy: Sendable {
    /// Whether to send the request again, and when.
    ///
    /// - Parameters:
    ///   - result: The result of the attempt that just completed.
    ///   - context: The attempt's number and the current time.
    func retryDecision(for result: HTTPResult, context: RetryContext) -> RetryDecision

    /// Whether the strategy might retry a response with this status. ``Retry`` does not ask for a decision
    /// (nor read the clock) about a response whose status the strategy never retries — the common case of a
    /// success. The default is `true`: every response is put to ``retryDecision(for:context:)``.
    func mayRetry(_ status: HTTPStatus) -> Bool
}

extension HTTPRetryStrategy {
    public func mayRetry(_ status: HTTPStatus) -> Bool { true }
}

/// What a retry strategy decided.
@frozen
public enum RetryDecision: Sendable, Hashable {
    /// Send the request again after waiting this long.
    case retry(after: Duration)
    /// Return the result as it is.
    case doNotRetry
}

/// What a strategy knows when it decides.
public struct RetryContext: Sendable {
    /// The number of the attempt that just completed: 1 after the first.
    public var attempt: Int
    /// The wall-clock time, for `Retry-After` dates and rate-limit reset times.
    public var now: Date

    public init(attempt: Int, now: Date) {
        self.attempt = attempt
        self.now = now
    }
}

/// The per-request retry strategy option; see ``HTTPRequest/retryStrategy``.
public enum RetryOption: HTTPRequestOption {
    /// `nil`: the ``Retry`` loader's default strategy applies.
    public static let defaultOptionValue: (any HTTPRetryStrategy)? = nil
}

/// Whether a request may be repeated; see ``HTTPRequest/isIdempotent``.
public enum IdempotencyOption: HTTPRequestOption {
    /// `nil`: decided by the method.
    public static let defaultOptionValue: Bool? = nil
}

/// The per-request idempotency key; see ``HTTPRequest/idempotencyKey``.
public enum IdempotencyKeyOption: HTTPRequestOption {
    public static let defaultOptionValue: String? = nil
}

/// The attempt number of a request copy; see ``HTTPRequest/attemptNumber``.
public enum AttemptNumberOption: HTTPRequestOption {
    public static let defaultOptionValue = 1
}

extension HTTPRequest {
    /// The strategy ``Retry`` uses for this request, or `nil` for the loader's default.
    ///
    /// Set ``Backoff/never`` to turn retrying off for one request.
    public var retryStrategy: (any HTTPRetryStrategy)? {
        get { self[option: RetryOption.self] }
        set { self[option: RetryOption.self] = newValue }
    }

    /// Whether sending this request twice has the same effect as sending it once, which is what allows
    /// ``Retry`` to repeat it.
    ///
    /// By default this follows the method (`GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE`, `TRACE` are; `POST`
    /// and `PATCH` are not) and is `true` for any request with an ``idempotencyKey``. Set it to `true` only
    /// when you know the server tolerates duplicates.
    public var isIdempotent: Bool {
        get { self[option: IdempotencyOption.self] ?? (method.isIdempotent || idempotencyKey != nil) }
        set { self[option: IdempotencyOption.self] = newValue }
    }

    /// A key the server uses to recognise repeats of this request, sent as the `Idempotency-Key` header field
    /// on every attempt; a request with a key may be retried whatever its method.
    ///
    /// ```swift
    /// var payment = HTTPRequest(method: .post, path: "/payments", body: JSONBody(order))
    /// payment.idempotencyKey = UUID().uuidString   // the same key on every attempt
    /// ```
    public var idempotencyKey: String? {
        get { self[option: IdempotencyKeyOption.self] }
        set { self[option: IdempotencyKeyOption.self] = newValue }
    }

    /// Which attempt this copy of the request is: 1 for the first, 2 for the first retry, and so on.
    ///
    /// ``Retry`` sets it on each copy it sends, so `response.request.attemptNumber` (or
    /// `error.request.attemptNumber`) tells the caller how many attempts were made.
    public var attemptNumber: Int {
        get { self[option: AttemptNumberOption.self] }
        set { self[option: AttemptNumberOption.self] = newValue }
    }
}

/// Precedence of ``-->(_:_:)``: right-associative, so `a --> b --> c` links `b` to `c` first.
precedencegroup LoaderChainingPrecedence {
    higherThan: NilCoalescingPrecedence
    associativity: right
}

/// Links two loaders: the right-hand one becomes the left-hand one's ``HTTPLoader/nextLoader``.
infix operator --> : LoaderChainingPrecedence

/// Links `lhs` to `rhs` and returns `lhs`, the head of the chain, with its own type.
///
/// ```swift
/// let chain = ApplyEnvironment(environment: .production) --> ResetGuard() --> URLSessionLoader()
/// ```
@discardableResult
public func --> <Head: HTTPLoader>(lhs: Head, rhs: HTTPLoader) -> Head {
    lhs.nextLoader = rhs
    return lhs
}

/// Links `lhs` to an optional next loader (nothing, when it is `nil`) and returns `lhs` with its own type.
///
/// Lets an optional link sit in the middle of a chain: in
/// `ResetGuard() --> (verbose ? PrintLoader() : nil) --> URLSessionLoader()` the result is a `ResetGuard`.
@discardableResult
public func --> <Head: HTTPLoader>(lhs: Head, rhs: HTTPLoader?) -> Head {
    if let rhs { lhs.nextLoader = rhs }
    return lhs
}

/// Links optional loaders: a `nil` head leaves `rhs` as the head, and a `nil` `rhs` leaves `lhs` unlinked.
///
/// Lets optional links (`debug ? PrintLoader() : nil`) sit in a chain without unwrapping; the result is
/// optional because either side may be missing.
@discardableResult
public func --> <Head: HTTPLoader>(lhs: Head?, rhs: HTTPLoader?) -> HTTPLoader? {
    guard let lhs else { return rhs }
    lhs.nextLoader = rhs
    return lhs
}

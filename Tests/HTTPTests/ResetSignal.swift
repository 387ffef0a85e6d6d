import HTTP

/// A pass-through loader at the head of a chain, whose ``HTTPLoader/isResetting`` tells a test that a reset has begun
/// there — and so that every loader below refuses new loads.
final class ResetSignal: HTTPLoader, @unchecked Sendable {}

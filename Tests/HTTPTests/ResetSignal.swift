import HTTP

/// A pass-through loader that tells when a reset has begun at it: put it at the head of a chain to know that every
/// loader below refuses new loads.
final class ResetSignal: HTTPLoader, @unchecked Sendable {
    private let begun = Locked(false)

    /// Whether a reset has begun and not ended.
    var isResetting: Bool { begun.value }

    override func beginReset(_ mode: ResetMode) { begun.withLock { $0 = true } }
    override func endReset() { begun.withLock { $0 = false } }
}

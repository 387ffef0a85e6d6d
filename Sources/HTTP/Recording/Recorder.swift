public import Foundation
import Synchronization

/// A loader that records the traffic passing through it in a ``Cassette``, with secrets redacted, for a
/// ``ReplayLoader`` to answer tests with, or for a browser's developer tools to show (``Cassette/harData(creator:)``).
///
/// Put it right above the terminal, so that it records requests as they are sent — with the server filled in by
/// ``ApplyEnvironment``, credentials by `Auth`, each retry by ``Retry`` — and results as they arrive:
///
/// ```swift
/// let recorder = Recorder(file: cassetteURL)
/// let chain = ApplyEnvironment(environment: .staging) --> Retry() --> recorder --> URLSessionLoader()
/// ```
///
/// Each request that passes becomes an ``Cassette/Entry``: the request as sent, the response (or the failure),
/// when it started and how long the rest of the chain took. Values the ``redaction`` hides — the `Authorization`
/// and `Cookie` header fields, tokens and passwords in query items, form and JSON bodies — are replaced by
/// `<redacted>` before anything is stored, and never reach the cassette. Loads that were cancelled, refused by a
/// reset or invalid are not recorded: nothing was exchanged with a server.
///
/// ## Writing the file
///
/// With a `file`, the cassette is written after every entry, atomically (a new file replaces the old one): before
/// the load returns, or — when another load is writing the file — by that load, which writes again until the file
/// holds every entry. So a test that crashes keeps what it recorded. Each write rewrites the whole file, which
/// suits the tens or hundreds of requests of a test; for long captures, record without a file and call
/// ``save(to:)`` at the end. A write that fails does not fail the load: ``writeError`` keeps the error, the next
/// entry tries again, and ``save(to:)`` throws it.
///
/// ## Reset
///
/// During a reset the recorder refuses loads with ``HTTPError/Code/resetInProgress`` (except a loader's own reset
/// traffic, such as a logout's token revocation, which it records), and waits for the loads it passed on, so that
/// their entries are written when the reset returns. A reset keeps the recorded entries.
// Safety: configuration is immutable (`let`); mutable state is behind locks (`Locked`) and atomics.
public final class Recorder: HTTPLoader, @unchecked Sendable {
    /// Which values are hidden before an entry is stored.
    public let redaction: Redaction
    /// The file the cassette is written to after each entry, if any.
    public let file: URL?
    private let now: @Sendable () -> Date

    private struct State {
        var cassette: Cassette
        /// Counts the entries added; `writtenVersion` is the count the file holds.
        var version = 0
        var writtenVersion = 0
        /// Whether a load is writing the file; another load that adds an entry meanwhile leaves the writing to it.
        var isWriting = false
        var writeError: (any Error)?
    }

    private let state: Locked<State>
    /// Held while the file is written, so that writes happen one at a time, each with the latest cassette.
    private let fileLock = Locked(())
    private let nextSequence = Atomic<Int>(0)
    /// Counted until each load's entry is stored, so that a reset returns after it even when this is the chain's
    /// head.
    private var inFlight: InFlightLoads { participation.inFlight }

    /// - Parameters:
    ///   - file: Where to write the cassette after each entry; `nil` to keep it in memory until ``save(to:)``.
    ///     An existing file is replaced when the first entry is written.
    ///   - redaction: Which values to hide; ``Redaction/standard`` by default. It is stored in the cassette, and a
    ///     replay hides the same values in the requests it matches.
    ///   - now: The current time, for each entry's start and duration; tests pass a controllable one.
    public init(
        file: URL? = nil, redaction: Redaction = .standard, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.file = file
        self.redaction = redaction
        self.now = now
        self.state = Locked(State(cassette: Cassette(redaction: redaction)))
    }

    /// The traffic recorded so far, in the order the requests arrived.
    public var cassette: Cassette { state.withLock { $0.cassette } }

    /// The error of the last write to ``file`` that failed, or `nil` once a write has succeeded.
    public var writeError: (any Error)? { state.withLock { $0.writeError } }

    /// The file, and how many entries the cassette holds.
    public override var configurationDescription: String {
        let count = state.withLock { $0.cassette.entries.count }
        return "file: \(file?.path ?? "none"), entries: \(count), redaction: \(redaction.summary)"
    }

    /// Saves the cassette to `file`, by default the recorder's own, atomically.
    ///
    /// - Throws: The error of the write; ``CassetteError`` when there is neither a `file` nor the recorder's own.
    public func save(to file: URL? = nil) throws {
        guard let destination = file ?? self.file else {
            throw CassetteError(message: "the recorder has no file to save to; pass one")
        }
        if destination == self.file {
            try writeLatest()
        } else {
            try cassette.write(to: destination)
        }
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        inFlight.begin()
        defer { inFlight.end() }
        let sequence = nextSequence.add(1, ordering: .relaxed).oldValue
        let startedAt = now()
        let result = await loadNext(request)
        if Cassette.Entry.records(result) {
            record(sequence: sequence, request: request, result: result, startedAt: startedAt)
        }
        return result
    }

    /// Adds the entry in sequence order, and writes the file unless another load is writing it.
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    private func record(sequence: Int, request: HTTPRequest, result: HTTPResult, startedAt: Date) {
        let duration = Duration(clampingSeconds: now().timeIntervalSince(startedAt), to: .zero ... .century)
        let entry = Cassette.Entry(
            sequence: sequence, request: request, result: result, startedAt: startedAt, duration: duration,
            redaction: redaction)
        let writes = state.withLock { state -> Bool in
            // Entries arrive roughly in order: the place is found from the end.
            var index = state.cassette.entries.endIndex
            while index > 0, state.cassette.entries[index - 1].sequence > sequence { index -= 1 }
            state.cassette.entries.insert(entry, at: index)
            state.version += 1
            guard file != nil, !state.isWriting else { return false }
            state.isWriting = true
            return true
        }
        guard writes else { return }
        // Writes until the file holds every entry, including those added by other loads meanwhile, or a write
        // fails (the next entry tries again).
        while true {
            try? writeLatest()
            let isCurrent = state.withLock { state -> Bool in
                guard state.writeError == nil, state.writtenVersion < state.version else {
                    state.isWriting = false
                    return true
                }
                return false
            }
            if isCurrent { return }
        }
    }

    /// Writes the latest cassette to ``file``.
    private func writeLatest() throws {
        guard let file else { return }
        try fileLock.withLock { _ in
            let (cassette, version) = state.withLock { ($0.cassette, $0.version) }
            do {
                try cassette.write(to: file)
                state.withLock { state in
                    state.writtenVersion = max(state.writtenVersion, version)
                    state.writeError = nil
                }
            } catch {
                state.withLock { $0.writeError = error }
                throw error
            }
        }
    }
}

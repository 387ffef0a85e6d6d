import Foundation
import HTTP

/// An evaluator for tests: records what it was shown in `log` and refuses servers whose host is in `refusedHosts`.
struct RecordingEvaluator: ServerTrustEvaluator {
    struct Refused: Error, CustomStringConvertible {
        let host: String
        var description: String { "\(host) is on the test's list" }
    }

    /// Tells evaluators apart; two with the same name are equal.
    var name = "recording"
    var refusedHosts: Set<String> = []
    var defaultEvaluation: DefaultTrustEvaluation = .required
    /// Each evaluation appends "evaluate HOST:PORT (N certificates)".
    let log = Locked<[String]>([])

    func evaluate(_ trust: ServerTrust) throws {
        log.withLock {
            $0.append("evaluate \(trust.host):\(trust.port) (\(trust.certificateChain.count) certificates)")
        }
        if refusedHosts.contains(trust.host) { throw Refused(host: trust.host) }
    }

    static func == (lhs: RecordingEvaluator, rhs: RecordingEvaluator) -> Bool {
        lhs.name == rhs.name && lhs.refusedHosts == rhs.refusedHosts && lhs.defaultEvaluation == rhs.defaultEvaluation
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(refusedHosts)
        hasher.combine(defaultEvaluation)
    }
}

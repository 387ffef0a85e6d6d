#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
#else
import Foundation
#endif

// The objects a URLSession transfer works with, which `URLSessionTransferStateMachine` only holds and hands back in
// its actions, each named by what the driver does with it. The machine holds them as these protocols, so that it is
// one type, not a generic one compiled for every holder: `TransferContext` gives it URLSession's objects, and the
// machine's tests give it named values, so that every state can be reached without a session, a task, a
// continuation, a timer or a file.

/// The load waiting for the transfer's outcome (a stream: for its head).
protocol TransferWaiter {
    /// Resumes the load with `outcome`; called once.
    func complete(with outcome: TransferContext.Outcome)
}

/// The URLSession task: cancelled, and paused by a stream.
protocol TransferTask: AnyObject, Sendable {
    func cancel()
    func suspend()
    func resume()
}

/// The timer that times the transfer out at its deadline.
protocol TransferTimer {
    func cancel()
}

/// The file a download is written to.
protocol TransferFile: AnyObject {
    func write(_ data: Data) throws
    func close() throws
}

extension CheckedContinuation: TransferWaiter where T == TransferContext.Outcome, E == Never {
    func complete(with outcome: TransferContext.Outcome) {
        resume(returning: outcome)
    }
}

extension URLSessionTask: TransferTask {}

extension FileWriter: TransferFile {}

/// The objects a URLSession transfer works with, which ``URLSessionTransferStateMachine`` only holds and hands back
/// in its actions: the load's continuation, the URLSession task, the deadline timer, the body stream, the file being
/// written and the session delegate's registration. ``TransferContext`` names URLSession's types; the machine's
/// tests name plain values, so that every state can be reached without a session, a task or a continuation.
protocol URLSessionTransferResources {
    /// Resumed once with the transfer's outcome (or, for a stream, its head).
    associatedtype Waiter
    /// The URLSession task: cancelled, and paused by a stream.
    associatedtype Task
    /// The timer that times the transfer out at its deadline.
    associatedtype Timer
    /// The body stream handed to the load with the head; held weakly, so that dropping it stops the transfer.
    associatedtype Stream: AnyObject
    /// The file a download is written to.
    associatedtype File
    /// Where the task is registered to have its callbacks routed to the transfer.
    associatedtype Registration
}

import HTTP

/// Runs `operation` in a task of its own and returns its result — or `nil` as soon as the calling task is
/// cancelled, without waiting for `operation` (which is cancelled too). For waits on the user, which a
/// delegate might not end promptly when cancelled. `running` counts the operation until it has ended, also after
/// this has returned `nil`.
func interruptible<Value: Sendable>(
    counting running: InFlightLoads, _ operation: @escaping @Sendable () async -> Value
) async -> Value? {
    // The value is handed over under the lock rather than through the continuation: when `operation` finishes
    // before this task has suspended, the continuation resumes it without a job switch, a hand-over that
    // ThreadSanitizer cannot see (it reported the value's fields as racing); the mutex it can.
    let handover = Locked<(waiter: CheckedContinuation<Void, Never>?, value: Value?)>((nil, nil))
    let worker = Locked<Task<Void, Never>?>(nil)
    let finish: @Sendable (Value?) -> Void = { value in
        handover.withLock { handover -> CheckedContinuation<Void, Never>? in
            guard let waiter = handover.waiter else { return nil }
            handover.waiter = nil
            handover.value = value
            return waiter
        }?.resume()
    }
    await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            handover.withLock { $0.waiter = continuation }
            running.begin()
            let task = Task {
                defer { running.end() }
                finish(await operation())
            }
            worker.withLock { $0 = task }
            if Task.isCancelled {
                task.cancel()
                finish(nil)
            }
        }
    } onCancel: {
        worker.value?.cancel()
        finish(nil)
    }
    return handover.withLock { $0.value }
}

import Foundation

/// A task executor with a thread of its own, for a task whose code under test a ``ThreadLatch`` holds: blocking that
/// thread leaves the cooperative pool (two threads on a two-core machine) to the rest of the suite, so that two tests
/// that each hold a thread cannot starve the tasks that would release them.
///
/// ```swift
/// let load = Task(executorPreference: DedicatedThreadExecutor()) { await chain.load(request) }
/// ```
///
/// The thread lives as long as the test process (a job may be enqueued on it whenever a task that prefers it
/// resumes); it sleeps while it has nothing to run. Make one per test that blocks.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {  // Sendable: state behind `condition`
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    public init(name: String = "DedicatedThreadExecutor") {
        let thread = Thread { [self] in
            while true { runNextJob() }
        }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func runNextJob() {
        condition.lock()
        while jobs.isEmpty { condition.wait() }
        let job = jobs.removeFirst()
        condition.unlock()
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}

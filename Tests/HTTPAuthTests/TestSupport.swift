import Foundation
import HTTP
import HTTPAuth
@_exported import HTTPTestSupport

/// A delegate that answers from a script, optionally holding each answer until the test releases it.
///
/// ``release()`` lets through every question asked so far, also one whose task has not reached its wait yet:
/// a test that waits only for the loader's waiting requests cannot release too early and hang.
final class ScriptedDelegate: BasicAuthDelegate {
    private struct State {
        var answers: [BasicCredentials?]
        var asked = 0
        /// Questions up to this number are released.
        var released = 0
        var held: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Box<State>
    let holdsAnswers: Bool

    init(answers: [BasicCredentials?], holdsAnswers: Bool = false) {
        state = Box(State(answers: answers))
        self.holdsAnswers = holdsAnswers
    }

    var timesAsked: Int { state.withLock { $0.asked } }
    var heldCount: Int { state.withLock { $0.held.count } }

    func credentials(for loader: BasicAuth) async -> BasicCredentials? {
        let (answer, number) = state.withLock { state -> (BasicCredentials?, Int) in
            state.asked += 1
            return (state.answers.isEmpty ? nil : state.answers.removeFirst(), state.asked)
        }
        if holdsAnswers {
            await withCheckedContinuation { continuation in
                let releasedAlready = state.withLock { state -> Bool in
                    guard number > state.released else { return true }
                    state.held.append(continuation)
                    return false
                }
                if releasedAlready { continuation.resume() }
            }
        }
        return answer
    }

    /// Lets every answer asked for so far through, held or about to be.
    func release() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = state.asked
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
}

let ann = BasicCredentials(username: "ann", password: "s3cret")
let bob = BasicCredentials(username: "bob", password: "hunter2")

func basicRequest(_ path: String = "/reports", host: String = "api.example.com") -> HTTPRequest {
    var request = HTTPRequest(host: host, path: path)
    request.authenticationMethod = .basic
    return request
}

let httpbinURL: URL? = ProcessInfo.processInfo.environment["HTTPBIN_URL"].flatMap(URL.init(string:))

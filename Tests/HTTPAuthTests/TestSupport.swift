import Foundation
import HTTP
import HTTPAuth
@_exported import HTTPTestSupport

/// A delegate that answers from a script, optionally holding each answer until the test releases it.
final class ScriptedDelegate: BasicAuthDelegate {
    private struct State {
        var answers: [BasicCredentials?]
        var asked = 0
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
        let answer = state.withLock { state -> BasicCredentials? in
            state.asked += 1
            return state.answers.isEmpty ? nil : state.answers.removeFirst()
        }
        if holdsAnswers {
            await withCheckedContinuation { continuation in state.withLock { $0.held.append(continuation) } }
        }
        return answer
    }

    /// Lets every held answer through.
    func release() {
        for continuation in state.withLock({ state in
            defer { state.held = [] }; return state.held
        }) {
            continuation.resume()
        }
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

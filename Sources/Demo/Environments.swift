import Foundation
import HTTP
import HTTPAuth
import HTTPConnection

/// The app's model.
struct Person: Decodable, Sendable {
    struct Address: Decodable, Sendable {
        var city: String
    }

    var id: Int
    var name: String
    var email: String
    var address: Address
}

/// The error body the API sends with a 4xx.
struct APIProblem: Decodable, Sendable {
    var code: String
    var message: String
}

extension Request where Response == Person {
    /// `connection.request(.person(42))`.
    static func person(_ id: Int) -> Request<Person> {
        Request(underlyingRequest: HTTPRequest(path: "/people/\(id)")).decodingErrors(as: APIProblem.self)
    }
}

/// Where the app runs, and the chain each place gets.
enum AppEnvironment {
    /// An in-memory backend and verbose logging: works on a plane.
    case development
    /// The real server, with retries and a throttle.
    case production(ServerEnvironment)

    func makeConnection(log: @escaping @Sendable (String) -> Void) -> Connection {
        switch self {
        case .development:
            return Connection(loader: PrintLoader(sink: log) --> DevelopmentBackend())
        case .production(let server):
            let chain =
                ResetGuard()
                --> ApplyEnvironment(environment: server)
                --> Retry()
                --> Throttle(maximumNumberOfRequests: 6)
                --> PrintLoader(sink: log)
                --> DemoTransport.makeTerminal()
            return Connection(loader: chain)
        }
    }
}

/// A terminal loader that answers the app's API from memory.
final class DevelopmentBackend: HTTPLoader, @unchecked Sendable {  // Sendable: no stored state
    override func load(_ request: HTTPRequest) async -> HTTPResult {
        let person = #"{"id":42,"name":"Dev Person","email":"dev@localhost","address":{"city":"Localhost"}}"#
        guard request.path == "/people/42" else {
            let problem = #"{"code":"not_found","message":"The development backend only knows person 42"}"#
            return .success(HTTPResponse(request: request, status: .notFound, body: Data(problem.utf8)))
        }
        return .success(HTTPResponse(request: request, status: .ok, body: Data(person.utf8)))
    }
}

/// Stands in for a login screen: answers BasicAuth's questions from a list, and counts them.
final class DemoLogin: BasicAuthDelegate {
    private let state: Shared<(answers: [BasicCredentials], asked: Int)>

    init(answers: [BasicCredentials]) {
        state = Shared((answers, 0))
    }

    var timesAsked: Int { state.withLock { $0.asked } }

    func credentials(for loader: BasicAuth) async -> BasicCredentials? {
        state.withLock { state in
            state.asked += 1
            return state.answers.isEmpty ? nil : state.answers.removeFirst()
        }
    }
}

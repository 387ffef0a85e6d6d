import Foundation
import HTTP
import HTTPConnection
import HTTPTestSupport
import Testing

// Every `swift` block of Sources/HTTPConnection/HTTPConnection.docc (HTTPConnection.md,
// RequestsAndConnections.md) is in this file, verbatim, and `DocumentationTests.samplesMatchTheArticles` fails
// when one is not. Declarations the articles make at file scope are the test module's own `Person`,
// `APIProblem` and `.person(_:)`.

// RequestsAndConnections.md, "Describe each endpoint once" (and HTTPConnection.md, "Overview").
struct Person: Decodable, Sendable {
    var id: Int
    var name: String
}

extension Request where Response == Person {
    static func person(_ id: Int) -> Request<Person> {
        Request(underlyingRequest: HTTPRequest(path: "/people/\(id)"))
    }
}

// RequestsAndConnections.md, "Decide what a status means".
struct APIProblem: Decodable, Sendable {
    var code: String
    var message: String
}

// RequestsAndConnections.md, "Send it".
func showPerson(using connection: Connection) async {
    do {
        let person = try await connection.request(.person(42))
        print(person.name)
    } catch let error as HTTPError where error.code == .cancelled {
        // the task was cancelled
    } catch {
        print(error)  // HTTPError, ResponseError or ServerError: each says what went wrong
    }
}

// RequestsAndConnections.md, "Read the response with the value".
func loadPerson(using connection: Connection) async throws -> (Person, etag: String?) {
    let person = try await connection.response(for: .person(42))
    return (person.value, person.headers["ETag"])
}

// RequestsAndConnections.md, "Walk through pages".
struct PeoplePage: Decodable, Sendable {
    var people: [Person]
    var nextCursor: String?
}

func allNames(using connection: Connection) async throws -> [String] {
    let first = Request<PeoplePage>(underlyingRequest: HTTPRequest(path: "/people"))
    let pages = connection.pages(for: first) { last in
        last.value.nextCursor.map { HTTPRequest(path: "/people", query: [URLQueryItem(name: "after", value: $0)]) }
    }
    var names: [String] = []
    for try await page in pages { names += page.people.map(\.name) }
    return names
}

// RequestsAndConnections.md, "One chain per environment".
enum AppEnvironment {
    case development
    case staging
    case production

    func makeConnection() -> Connection {
        switch self {
        case .development:
            let backend = MockLoader()
                .then(status: .ok, body: Data(#"{"id":42,"name":"Dev Person"}"#.utf8))
            return Connection(loader: PrintLoader() --> backend)
        case .staging:
            return Connection(loader: Self.network(host: "staging.example.com", verbose: true))
        case .production:
            return Connection(loader: Self.network(host: "api.example.com", verbose: false))
        }
    }

    private static func network(host: String, verbose: Bool) -> HTTPLoader {
        ResetGuard()
            --> ApplyEnvironment(environment: ServerEnvironment(host: host, pathPrefix: "/v1"))
            --> Retry()
            --> Throttle(maximumNumberOfRequests: 6)
            --> (verbose ? PrintLoader() : nil)
            --> URLSessionLoader()
    }
}

// RequestsAndConnections.md, "Test with a mock in one line".
@Test func showsThePersonsName() async throws {
    let mock = MockLoader().then(status: .ok, body: Data(#"{"id":42,"name":"Zoë"}"#.utf8))
    let connection = Connection(loader: mock)
    #expect(try await connection.request(.person(42)).name == "Zoë")
    #expect(mock.receivedRequests.first?.path == "/people/42")
}

// Equality for the tests' assertions (synthesized, so it must sit in the declaring file).
extension Person: Equatable {}
extension APIProblem: Equatable {}

@Suite(.noHang) struct DocumentationTests {
    @Test func statusSamples() throws {
        // RequestsAndConnections.md, "Decide what a status means".
        let lookup = Request<Person?>(underlyingRequest: HTTPRequest(path: "/people/42")) { response in
            response.status == .notFound ? nil : try JSONDecoder().decode(Person.self, from: response.body)
        }.accepting(.notFound)

        let strict = Request<Person>.person(42).decodingErrors(as: APIProblem.self)

        let notFound = HTTPResponse(
            request: HTTPRequest(host: "example.com"),
            status: .notFound,
            body: Data(#"{"code":"not_found","message":"gone"}"#.utf8)
        )
        #expect(try lookup.decode(notFound) == nil)
        #expect(throws: ServerError<APIProblem>.self) { try strict.decode(notFound) }
    }

    @Test func sendSampleRunsAgainstAMock() async {
        let mock = MockLoader().then(status: .ok, body: Data(#"{"id":42,"name":"Zoë"}"#.utf8))
        await showPerson(using: Connection(loader: mock))
        #expect(mock.receivedRequests.map(\.path) == ["/people/42"])
    }

    @Test func responseSampleReadsTheETag() async throws {
        let mock = MockLoader().then(
            status: .ok, headers: ["ETag": "\"v1\""], body: Data(#"{"id":42,"name":"Zoë"}"#.utf8))
        let (person, etag) = try await loadPerson(using: Connection(loader: mock))
        #expect(person.name == "Zoë" && etag == "\"v1\"")
    }

    @Test func pagesSampleFollowsTheCursor() async throws {
        let mock = MockLoader()
            .then(status: .ok, body: Data(#"{"people":[{"id":1,"name":"Ann"}],"nextCursor":"c2"}"#.utf8))
            .then(status: .ok, body: Data(#"{"people":[{"id":2,"name":"Bo"}]}"#.utf8))
        #expect(try await allNames(using: Connection(loader: mock)) == ["Ann", "Bo"])
        #expect(mock.receivedRequests.map { $0.query.first?.value } == [nil, "c2"])
    }

    @Test func environmentsAreChains() async throws {
        let person = try await AppEnvironment.development.makeConnection().request(.person(42))
        #expect(person.name == "Dev Person")
        let staging = AppEnvironment.staging.makeConnection().loader
        #expect(staging.nextLoader?.nextLoader?.nextLoader?.nextLoader is PrintLoader)
        let production = AppEnvironment.production.makeConnection().loader
        #expect(production.nextLoader?.nextLoader?.nextLoader?.nextLoader is URLSessionLoader)
    }

    @Test(arguments: ["HTTPConnection.md", "RequestsAndConnections.md"])
    func samplesMatchTheArticles(article: String) throws {
        let catalog = DocumentationSamples.catalog(of: "HTTPConnection", fromTestFile: #filePath)
        let missing = try DocumentationSamples.samplesMissing(
            from: #filePath, article: catalog.appendingPathComponent(article))
        #expect(missing.isEmpty, "\(article): samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

import Foundation
import HTTP
import HTTPConnection
import HTTPTestSupport
import Testing

// Every `swift` block of Sources/HTTPConnection/HTTPConnection.docc (HTTPConnection.md,
// RequestsAndConnections.md, StreamsDownloadsAndUploads.md) is in this file, verbatim, and
// `DocumentationTests.samplesMatchTheArticles` fails when one is not. Declarations the articles make at file scope are the test module's own `Person`,
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

// StreamsDownloadsAndUploads.md, "Read JSON Lines".
struct Reading: Decodable, Sendable {
    var sensor: String
    var value: Double
}

extension Request where Response == Reading {
    static var readings: Request<Reading> {
        Request(underlyingRequest: HTTPRequest(path: "/readings"))
    }
}

func printReadings(using connection: Connection) async throws {
    for try await reading in connection.jsonLines(for: .readings) {
        print(reading.sensor, reading.value)
    }
}

// StreamsDownloadsAndUploads.md, "See the head first".
func exportPeople(using connection: Connection) async throws -> [Person] {
    let request = Request<Data>(underlyingRequest: HTTPRequest(path: "/people/export"))
    let export = try await connection.stream(request.decodingErrors(as: APIProblem.self))
    print(export.status, export.headers["Content-Type"] ?? "")
    var people: [Person] = []
    for try await person in export.jsonLines(of: Person.self) { people.append(person) }
    return people
}

// StreamsDownloadsAndUploads.md, "Follow Server-Sent Events".
struct Quote: Decodable, Sendable {
    var symbol: String
    var price: Double
}

func followQuotes(using connection: Connection) async throws -> [Quote] {
    let quotes = Request<Quote>(underlyingRequest: HTTPRequest(path: "/quotes"))
    var received: [Quote] = []
    for try await quote in connection.events(for: quotes, eventType: "quote") {
        received.append(quote)
    }
    return received  // the server answered 204 No Content: the feed is over
}

func printNotifications(using connection: Connection) async throws {
    let notifications = Request<ServerSentEvent>(underlyingRequest: HTTPRequest(path: "/notifications"))
    for try await event in connection.events(for: notifications) {
        print(event.type, event.lastEventID, event.data)
    }
}

// StreamsDownloadsAndUploads.md, "What can go wrong".
func tail(using connection: Connection) async {
    do {
        let tail = Request<String>(underlyingRequest: HTTPRequest(path: "/logs/tail"))
        for try await line in connection.lines(for: tail, maximumLineLength: 64 * 1024) {
            print(line)
        }
    } catch let error as ResponseError where error.line != nil {
        print("line \(error.line ?? 0) is not text:", error)
    } catch {
        print(error)  // a status other than 2xx, a line too long, the connection lost, a reset
    }
}

// StreamsDownloadsAndUploads.md, "Download to a file".
extension Request where Response == Data {
    static func video(_ id: Int) -> Request<Data> {
        Request(underlyingRequest: HTTPRequest(path: "/videos/\(id).mp4"))
    }
}

func downloadVideo(using connection: Connection, to destination: URL) async throws -> DownloadedFile {
    try await connection.download(.video(42), to: destination) { progress in
        print(progress.fractionCompleted ?? 0)
    }
}

// StreamsDownloadsAndUploads.md, "Upload a file or a sequence".
struct Receipt: Decodable, Sendable {
    var id: String
}

func uploadVideo(_ movie: URL, using connection: Connection) async throws -> Receipt {
    let upload = Request<Receipt>(underlyingRequest: HTTPRequest(method: .put, path: "/videos"))
    return try await connection.upload(upload, fromFile: movie, contentType: "video/mp4")
}

// StreamsDownloadsAndUploads.md, "Callbacks and Combine".
func startDownload(using connection: Connection, to destination: URL) -> HTTPTask {
    connection.download(.video(42), to: destination) { result in
        switch result {
        case .success(let file): print("saved to", file.fileURL.path)
        case .failure(let error): print(error)
        }
    }
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

    @Test func streamSamplesReadJSONLinesAndLines() async throws {
        let readings = MockLoader().then(
            status: .ok, body: Data("{\"sensor\":\"t1\",\"value\":21.5}\r\n{\"sensor\":\"t2\",\"value\":3}".utf8))
        try await printReadings(using: Connection(loader: readings))
        #expect(readings.receivedRequests.map(\.path) == ["/readings"])

        let export = MockLoader().then(
            status: .ok, headers: ["Content-Type": "application/x-ndjson"],
            body: Data("{\"id\":1,\"name\":\"Ann\"}\n{\"id\":2,\"name\":\"Bo\"}\n".utf8))
        #expect(try await exportPeople(using: Connection(loader: export)).map(\.name) == ["Ann", "Bo"])

        let logs = MockLoader().then(status: .ok, body: Data("one\ntwo".utf8)).then(status: .notFound)
        await tail(using: Connection(loader: logs))
        await tail(using: Connection(loader: logs))
        #expect(logs.receivedRequests.count == 2)
    }

    @Test func eventsSampleFollowsTheFeedAcrossAReconnection() async throws {
        let events: HTTPHeaders = ["Content-Type": "text/event-stream"]
        let feed = MockLoader()
            .then(
                status: .ok, headers: events,
                body: Data("retry: 0\nevent: quote\nid: 1\ndata: {\"symbol\":\"A\",\"price\":1.5}\n\n: ping\n\n".utf8)
            )
            .then(
                status: .ok, headers: events,
                body: Data("event: quote\nid: 2\ndata: {\"symbol\":\"B\",\"price\":2}\n\n".utf8)
            )
            .then(status: .noContent)
        let quotes = try await followQuotes(using: Connection(loader: feed))
        #expect(quotes.map(\.symbol) == ["A", "B"])
        #expect(feed.receivedRequests.map { $0.headers["Last-Event-ID"] } == [nil, "1", "2"])

        let notifications = MockLoader()
            .then(status: .ok, headers: events, body: Data("retry: 0\nevent: hello\nid: 3\ndata: world\n\n".utf8))
            .then(status: .noContent)
        try await printNotifications(using: Connection(loader: notifications))
        #expect(notifications.receivedRequests.map { $0.headers["Last-Event-ID"] } == [nil, "3"])
    }

    @Test func transferSamplesDownloadAndUpload() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "conn-doc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let connection = Connection(
            loader: MockLoader()
                .then(status: .ok, body: Data("movie".utf8))
                .then(status: .created, body: Data(#"{"id":"v1"}"#.utf8))
                .then(status: .ok, body: Data("again".utf8)))
        let file = try await downloadVideo(using: connection, to: folder.appending(path: "42.mp4"))
        #expect(try Data(contentsOf: file.fileURL) == Data("movie".utf8))
        #expect(try await uploadVideo(file.fileURL, using: connection).id == "v1")
        let task = startDownload(using: connection, to: folder.appending(path: "again.mp4"))
        try await eventually { task.isFinished }
        #expect(try Data(contentsOf: folder.appending(path: "again.mp4")) == Data("again".utf8))
    }

    @Test(arguments: ["HTTPConnection.md", "RequestsAndConnections.md", "StreamsDownloadsAndUploads.md"])
    func samplesMatchTheArticles(article: String) throws {
        let catalog = DocumentationSamples.catalog(of: "HTTPConnection", fromTestFile: #filePath)
        let missing = try DocumentationSamples.samplesMissing(
            from: #filePath, article: catalog.appendingPathComponent(article))
        #expect(missing.isEmpty, "\(article): samples not tested here:\n\(missing.joined(separator: "\n---\n"))")
    }
}

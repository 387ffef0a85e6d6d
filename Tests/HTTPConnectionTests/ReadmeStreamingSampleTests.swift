import Foundation
import HTTP
import HTTPConnection
import Testing

// The sample proposed for README.md's "Streaming, downloads, pages, events" section, kept identical so that the
// README's lines are known to compile and run (the README itself is edited by its owner). `Reading` is the one of
// DocumentationTests.swift, the same as the README's.

private func streamingDownloadsPagesEvents(using connection: Connection, saveTo destination: URL) async throws {
    // Each request says what it yields and how, as for request(_:): here one JSON value per line
    let readings = Request<Reading>(underlyingRequest: HTTPRequest(path: "/readings"))

    // JSON Lines, each line decoded as the body arrives (backpressure: the transfer goes as fast as you read); a status
    // the request does not accept throws before the first element, as request(_:) would
    for try await reading in connection.jsonLines(for: readings) {
        print(reading.sensor, reading.value)
    }

    // A download to a file, with progress; resumed with Range / If-Range when the connection drops
    let video = Request<Data>(underlyingRequest: HTTPRequest(path: "/videos/42.mp4"))
    let file = try await connection.download(video, to: destination) { progress in
        print(progress.fractionCompleted ?? 0)
    }
    print(file.status, file.headers["Content-Type"] ?? "", file.fileURL.path)

    // Pages: one load per page, following Link: <…>; rel="next" until there is none
    for try await names in connection.pages(for: Request<[String]>(underlyingRequest: HTTPRequest(path: "/names"))) {
        print(names)
    }

    // Server-Sent Events, each event's data decoded as the request's type (Request<ServerSentEvent>: the events
    // themselves), resumed through the chain with Last-Event-ID until the server answers 204
    let notifications = Request<String>(underlyingRequest: HTTPRequest(path: "/notifications"))
    for try await text in connection.events(for: notifications) {
        print(text)
    }
}

@Suite(.noHang) struct ReadmeStreamingSampleTests {
    @Test func theSampleRunsAgainstAMock() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let mock = MockLoader()
            .then(status: .ok, body: Data("{\"sensor\":\"t1\",\"value\":21.5}\n".utf8))
            .then(status: .ok, headers: ["Content-Type": "video/mp4"], body: Data("movie".utf8))
            .then(status: .ok, headers: ["Link": "</names?page=2>; rel=\"next\""], body: Data(#"["Ann"]"#.utf8))
            .then(status: .ok, body: Data(#"["Bo"]"#.utf8))
            .then(
                status: .ok, headers: ["Content-Type": "text/event-stream"],
                body: Data("retry: 0\nid: 1\ndata: hi\n\n".utf8)
            )
            .then(status: .noContent)
        let connection = Connection(loader: ApplyEnvironment(environment: ServerEnvironment(host: "h")) --> mock)
        try await streamingDownloadsPagesEvents(using: connection, saveTo: folder.appending(path: "42.mp4"))
        #expect(try Data(contentsOf: folder.appending(path: "42.mp4")) == Data("movie".utf8))
        #expect(
            mock.receivedRequests.map(\.path) == [
                "/readings", "/videos/42.mp4", "/names", "/names", "/notifications", "/notifications",
            ])
        #expect(mock.receivedRequests.last?.headers["Last-Event-ID"] == "1")
    }
}

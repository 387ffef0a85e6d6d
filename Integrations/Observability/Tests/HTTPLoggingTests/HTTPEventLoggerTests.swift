import Foundation
import HTTP
import HTTPLogging
import InMemoryLogging
import Logging
import ObservabilityTestSupport
import Testing

/// A logger that keeps what it is given, at `level` and above.
func inMemoryLogger(level: Logger.Level = .trace) -> (Logger, InMemoryLogHandler) {
    let handler = InMemoryLogHandler()
    var logger = Logger(label: "http-client") { _ in handler }
    logger.logLevel = level
    return (logger, handler)
}

extension InMemoryLogHandler.Entry {
    /// The message and every metadata key and value, as text.
    var rendered: String {
        "\(level) \(message) "
            + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}

@Suite(.noHang) struct HTTPEventLoggerTests {
    @Test func aLoadIsLoggedFromStartToFinishWithStructuredMetadata() async throws {
        let (logger, handler) = inMemoryLogger()
        let mock = MockLoader().then(status: .ok, body: Data(count: 213))
        let chain = Observe(HTTPEventLogger(logger: logger)) --> mock

        let result = await chain.load(HTTPRequest(host: "api.example.com", path: "/people/42"))

        let load = try #require(result.response?.request.loadID)
        let entries = handler.entries
        #expect(
            entries.map(\.message.description) == [
                "HTTP request started", "HTTP attempt started", "HTTP attempt finished", "HTTP request finished",
            ])
        #expect(entries.map(\.level) == [.debug, .trace, .trace, .debug])
        for entry in entries {
            #expect(entry.metadata["http.load_id"]?.description == "\(load.rawValue)")
            #expect(entry.metadata["http.request.method"]?.description == "GET")
            #expect(entry.metadata["url.full"]?.description == "https://api.example.com/people/42")
            #expect(entry.metadata["http.request.resend_count"] == nil)
        }
        let finished = try #require(entries.last)
        #expect(finished.metadata["http.response.status_code"]?.description == "200")
        #expect(finished.metadata["error.type"] == nil)
        let duration = try #require(finished.metadata["http.client.load.duration"].flatMap { Double("\($0)") })
        #expect(duration >= 0 && duration < 60)
        #expect(entries[2].metadata["http.client.request.duration"].flatMap { Double("\($0)") } != nil)
    }

    @Test(arguments: [
        (HTTPStatus.ok, Logger.Level.debug), (.notModified, .debug), (.notFound, .notice), (.unauthorized, .notice),
        (.serviceUnavailable, .warning), (HTTPStatus(rawValue: 799), .warning),
    ])
    func aFinishedLoadIsLoggedAtTheLevelOfItsStatus(status: HTTPStatus, level: Logger.Level) async throws {
        let (logger, handler) = inMemoryLogger(level: .debug)
        let chain = Observe(HTTPEventLogger(logger: logger)) --> MockLoader().then(status: status)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        let finished = try #require(handler.entries.last)
        #expect(finished.message == "HTTP request finished")
        #expect(finished.level == level)
        #expect(finished.metadata["http.response.status_code"]?.description == "\(status.rawValue)")
        #expect(finished.metadata["error.type"]?.description == (status.rawValue >= 400 ? "\(status.rawValue)" : nil))
    }

    @Test func aFailureIsAnErrorWithItsCodeAndItsMessageRedacted() async throws {
        let (logger, handler) = inMemoryLogger(level: .info)
        let chain = Observe(HTTPEventLogger(logger: logger)) --> MockLoader().then(failureQuotingSecrets)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        let entries = handler.entries
        #expect(entries.count == 1)  // the start and the attempt are below the logger's level
        let failed = try #require(entries.first)
        #expect(failed.level == .error)
        #expect(failed.message == "HTTP request failed")
        #expect(failed.metadata["error.type"]?.description == "cannotConnect")
        let message = try #require(failed.metadata["error.message"]?.description)
        #expect(message.hasPrefix("could not connect to https://"))
        #expect(Secrets.found(in: message).isEmpty, "\(message)")
    }

    @Test func aCancelledLoadIsNotAnError() async throws {
        let (logger, handler) = inMemoryLogger(level: .debug)
        let mock = MockLoader().then(heldUntilCancelled)
        let chain = Observe(HTTPEventLogger(logger: logger)) --> mock

        let load = Task { await chain.load(HTTPRequest(host: "api.example.com")) }
        try await eventually("\(mock.receivedRequests.count) received") { mock.receivedRequests.count == 1 }
        load.cancel()
        let result = try await load.finished()

        #expect(result.error?.code == .cancelled)
        let finished = try #require(handler.entries.last)
        #expect(finished.level == .debug)
        #expect(finished.metadata["error.type"]?.description == "cancelled")
    }

    @Test func aRetryIsANoticeAndLaterAttemptsCountTheirResends() async throws {
        let (logger, handler) = inMemoryLogger()
        let mock = MockLoader().then(status: .serviceUnavailable).then(status: .ok)
        let chain = Observe(HTTPEventLogger(logger: logger)) --> retryAtOnce(attempts: 2) --> mock

        let result = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(result.response?.status == .ok)
        let entries = handler.entries
        let retry = try #require(entries.first { $0.message == "HTTP retry scheduled" })
        #expect(retry.level == .notice)
        #expect(retry.metadata["http.response.status_code"]?.description == "503")
        #expect(retry.metadata["http.retry.delay"].flatMap { Double("\($0)") } == 0)
        let attempts = entries.filter { $0.message == "HTTP attempt finished" }
        #expect(attempts.map { $0.metadata["http.request.resend_count"]?.description } == [nil, "1"])
        #expect(entries.last?.metadata["http.request.resend_count"]?.description == "1")
        #expect(Set(entries.compactMap { $0.metadata["http.load_id"]?.description }).count == 1)
    }

    @Test func aRedirectIsLoggedWithWhereItLeads() async throws {
        let (logger, handler) = inMemoryLogger()
        let mock = MockLoader()
            .then(status: .found, headers: ["Location": "https://cdn.example.com/a/42.png?token=\(Secrets.queryToken)"])
            .then(status: .ok)
        let chain = Observe(HTTPEventLogger(logger: logger)) --> FollowRedirects() --> mock

        _ = await chain.load(HTTPRequest(host: "api.example.com", path: "/avatars/42"))

        let redirect = try #require(handler.entries.first { $0.message == "HTTP redirect followed" })
        #expect(redirect.level == .debug)
        #expect(redirect.metadata["url.full"]?.description == "https://api.example.com/avatars/42")
        #expect(redirect.metadata["http.response.status_code"]?.description == "302")
        let next = try #require(redirect.metadata["http.redirect.url"]?.description)
        #expect(next.hasPrefix("https://cdn.example.com/a/42.png?token="))
        #expect(!next.contains(Secrets.queryToken))
    }

    @Test func anUnknownMethodIsOtherWithTheOriginalBeside() async throws {
        let (logger, handler) = inMemoryLogger()
        let chain = Observe(HTTPEventLogger(logger: logger)) --> MockLoader().then(status: .ok)

        _ = await chain.load(HTTPRequest(method: HTTPMethod(rawValue: "PURGE"), host: "api.example.com"))

        let started = try #require(handler.entries.first)
        #expect(started.metadata["http.request.method"]?.description == "_OTHER")
        #expect(started.metadata["http.request.method_original"]?.description == "PURGE")
    }

    @Test func belowTheLoggersLevelNothingIsWritten() async throws {
        let (logger, handler) = inMemoryLogger(level: .info)
        let chain =
            Observe(HTTPEventLogger(logger: logger)) --> retryAtOnce(attempts: 1) --> MockLoader().then(status: .ok)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(handler.entries.isEmpty)
    }

    @Test func itIsInterestedOnlyInKindsThatCanReachTheLoggersLevel() {
        let custom = HTTPEvent.Kind(rawValue: "servedFromCache")
        let kinds: [HTTPEvent.Kind] = [
            .loadStarted, .attemptStarted, .responseHeadReceived, .attemptFinished, .retryScheduled, .redirectFollowed,
            .loadFinished, .credentialObtained, .credentialRefreshed, .credentialFailed, custom,
        ]
        func interests(at level: Logger.Level, levels: HTTPEventLogger.Levels = .standard) -> [HTTPEvent.Kind] {
            let observer = HTTPEventLogger(logger: inMemoryLogger(level: level).0, levels: levels)
            return kinds.filter { observer.isInterested(in: $0) }
        }

        #expect(interests(at: .trace) == kinds)
        #expect(
            interests(at: .debug) == [
                .loadStarted, .retryScheduled, .redirectFollowed, .loadFinished, .credentialObtained,
                .credentialRefreshed, .credentialFailed,
            ])
        // A finish may be a failure (`error`), so it is wanted until the logger is above every outcome's level.
        #expect(
            interests(at: .info) == [
                .retryScheduled, .loadFinished, .credentialObtained, .credentialRefreshed, .credentialFailed,
            ])
        #expect(interests(at: .warning) == [.loadFinished, .credentialFailed])
        #expect(interests(at: .critical) == [])
        let chosen = HTTPEventLogger.Levels(loadFailed: .notice, credentialFailed: .notice)
        #expect(interests(at: .warning, levels: chosen) == [.loadFinished])  // a 5xx is still a warning
    }

    @Test func itIsInterestedInALoadsFinishOnlyWhenItsOutcomeReachesTheLoggersLevel() {
        let request = HTTPRequest(host: "api.example.com")
        let outcomes: [(HTTPResult, Logger.Level)] = [
            (.success(HTTPResponse(request: request, status: .ok)), .debug),
            (.success(HTTPResponse(request: request, status: .notFound)), .notice),
            (.success(HTTPResponse(request: request, status: .badGateway)), .warning),
            (.failure(HTTPError(.cannotConnect, request: request)), .error),
            (.failure(HTTPError(.cancelled, request: request)), .debug),
            (.failure(HTTPError(.resetInProgress, request: request)), .debug),
        ]
        for level in Logger.Level.allCases {
            let observer = HTTPEventLogger(logger: inMemoryLogger(level: level).0)
            for (result, logged) in outcomes {
                #expect(
                    observer.isInterested(in: .loadFinished, result: result) == (level <= logged),
                    "logger at \(level), \(result.response?.status.rawValue ?? 0) \(result.error?.code.rawValue ?? "")")
            }
        }
    }

    @Test func withOtherObserversInOneObserveEachGetsWhatItWouldAlone() async throws {
        let (logger, handler) = inMemoryLogger(level: .info)
        let recorder = KindRecorder()
        let chain =
            Observe(HTTPEventLogger(logger: logger), recorder) --> retryAtOnce(attempts: 2)
            --> MockLoader().then(status: .serviceUnavailable).then(status: .notFound)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(handler.entries.map(\.message) == ["HTTP retry scheduled", "HTTP request finished"])
        #expect(handler.entries.map(\.level) == [.notice, .notice])
        #expect(
            recorder.kinds.current == [
                .loadStarted, .attemptStarted, .attemptFinished, .retryScheduled, .attemptStarted, .attemptFinished,
                .loadFinished,
            ])
    }

    @Test func levelsCanBeChosenPerKindOfEvent() async throws {
        let (logger, handler) = inMemoryLogger(level: .info)
        let levels = HTTPEventLogger.Levels(loadStarted: .info, loadSucceeded: .info, attempt: .debug)
        let chain = Observe(HTTPEventLogger(logger: logger, levels: levels)) --> MockLoader().then(status: .ok)

        _ = await chain.load(HTTPRequest(host: "api.example.com"))

        #expect(handler.entries.map(\.message) == ["HTTP request started", "HTTP request finished"])
        #expect(handler.entries.allSatisfy { $0.level == .info })
    }

    @Test func noSecretAppearsInAnyLogEntry() async throws {
        let (logger, handler) = inMemoryLogger()
        let chain =
            Observe(HTTPEventLogger(logger: logger)) --> retryAtOnce(attempts: 2) --> FollowRedirects()
            --> Secrets.server()

        let first = await chain.load(Secrets.request())
        let second = await chain.load(Secrets.request())

        #expect(first.error?.code == .cannotConnect)
        #expect(second.error?.code == .unusableRedirect)
        let rendered = handler.entries.map(\.rendered)
        #expect(rendered.count >= 12)
        for line in rendered { #expect(Secrets.found(in: line).isEmpty, "\(line)") }
        // The URL is there, with its secrets redacted.
        #expect(rendered.contains { $0.contains("url.full=https://api.example.com/people/42?token=") })
    }
}

/// Keeps the kind of every event it is handed.
final class KindRecorder: HTTPEventObserver {
    let kinds = Locked<[HTTPEvent.Kind]>([])

    func handle(_ event: HTTPEvent) {
        kinds.withLock { $0.append(event.kind) }
    }
}

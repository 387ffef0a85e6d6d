#if canImport(Combine)
import Combine
import Foundation
import HTTP
import HTTPConnection
import Testing

// Combine exists only on Apple platforms: these run there. On Linux, scripts/test.sh runs them against OpenCombine
// through PlatformCheck/ (value then finished; failure materialized; cancel stops the load; nothing sent before
// demand).
@Suite(.noHang) struct ConnectionCombineTests {
    @Test func publishesTheValueThenFinishes() async {
        let connection = Connection(loader: MockLoader().then(status: .ok, body: json(#"{"id":1,"name":"A"}"#)))
        let events = Box<[String]>([])
        var cancellables: Set<AnyCancellable> = []
        await withCheckedContinuation { continuation in
            connection.publisher(for: .person(1)).sink { completion in
                events.withLock { $0.append("\(completion)") }
                continuation.resume()
            } receiveValue: { person in
                events.withLock { $0.append("value \(person.name)") }
            }.store(in: &cancellables)
        }
        #expect(events.value == ["value A", "finished"])
    }

    @Test func theResultPublisherMaterializesFailures() async {
        let connection = Connection(loader: MockLoader().then(status: .notFound))
        let outcome = Box<Result<Person, any Error>?>(nil)
        var cancellables: Set<AnyCancellable> = []
        await withCheckedContinuation { continuation in
            connection.resultPublisher(for: .person(1)).sink { _ in
                continuation.resume()
            } receiveValue: { result in
                outcome.withLock { $0 = result }
            }.store(in: &cancellables)
        }
        guard case .failure(let error) = outcome.withLock({ $0 }) else {
            Issue.record("expected a failure")
            return
        }
        #expect((error as? ResponseError)?.status == .notFound)
    }

    @Test func cancellingTheSubscriptionCancelsTheLoad() async throws {
        let handlerCancelled = Box(false)
        let mock = MockLoader().then { request in
            do { try await Task.sleep(for: .seconds(30)) } catch { handlerCancelled.withLock { $0 = true } }
            return .success(HTTPResponse(request: request))
        }
        let received = Box(0)
        let subscription = Connection(loader: mock).publisher(for: .person(1))
            .sink { _ in
                received.withLock { $0 += 1 }
            } receiveValue: { _ in
                received.withLock { $0 += 1 }
            }
        try await eventually { !mock.receivedRequests.isEmpty }
        subscription.cancel()
        try await eventually { handlerCancelled.value }
        #expect(received.value == 0)
    }

    @Test func aJSONLinesPublisherSendsOneElementPerUnitOfDemandThenFinishes() async throws {
        let body = Data((1...5).map { #"{"id":\#($0),"name":"P\#($0)"}"# + "\n" }.joined().utf8)
        let mock = MockLoader().then(status: .ok, body: body)
        let publisher = Connection(loader: mock).jsonLinesPublisher(
            for: Request<Person>(underlyingRequest: HTTPRequest(host: "h")))
        let received = Box<[String]>([])
        let subscription = Box<(any Subscription)?>(nil)
        let subscriber = AnySubscriber<Person, any Error>(
            receiveSubscription: { sub in
                subscription.withLock { $0 = sub }
                sub.request(.max(2))
            },
            receiveValue: { person in
                received.withLock { $0.append(person.name) }
                return .none
            },
            receiveCompletion: { completion in received.withLock { $0.append("\(completion)") } })
        publisher.subscribe(subscriber)
        try await eventually { received.value.count == 2 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(received.value == ["P1", "P2"], "no element beyond the demand")
        subscription.withLock { $0 }?.request(.unlimited)
        try await eventually { received.value.count == 6 }
        #expect(received.value == ["P1", "P2", "P3", "P4", "P5", "finished"])
    }

    @Test func cancellingALinesSubscriptionStopsTheTransfer() async throws {
        let mock = StreamingMock().then(endless: true, [Data("line\n".utf8)])
        let received = Box(0)
        let completions = Box(0)
        let cancellable = Connection(loader: mock.loader).linesPublisher(
            for: Request<String>(underlyingRequest: HTTPRequest(host: "h"))
        )
        .sink { _ in
            completions.withLock { $0 += 1 }
        } receiveValue: { _ in
            received.withLock { $0 += 1 }
        }
        try await eventually { received.value >= 10 }
        cancellable.cancel()
        let producer = try #require(mock.all.first)
        try await eventually { producer.isFinished }
        #expect(producer.cancels == 1)
        #expect(completions.value == 0, "a cancelled subscription gets no completion")
    }

    @Test func aStatusThatIsNotAcceptedFailsTheLinesPublisher() async throws {
        let mock = MockLoader().then(status: .notFound, body: Data("gone".utf8))
        let failure = Box<(any Error)?>(nil)
        let cancellable = Connection(loader: mock).linesPublisher(
            for: Request<String>(underlyingRequest: HTTPRequest(host: "h"))
        )
        .sink { completion in
            if case .failure(let error) = completion { failure.withLock { $0 = error } }
        } receiveValue: { _ in
        }
        try await eventually { failure.withLock { $0 != nil } }
        #expect((failure.withLock { $0 } as? ResponseError)?.status == .notFound)
        withExtendedLifetime(cancellable) {}
    }

    @Test func anEventsPublisherSendsDecodedEventsOfItsTypeThenFinishesAtA204() async throws {
        let events: HTTPHeaders = ["Content-Type": "text/event-stream"]
        let body = "retry: 0\nid: 1\nevent: person\ndata: {\"id\":1,\"name\":\"Ann\"}\n\nevent: ping\ndata: -\n\n"
        let mock = MockLoader()
            .then(status: .ok, headers: events, body: Data(body.utf8))
            .then(status: .noContent)
        let people = Request<Person>(underlyingRequest: HTTPRequest(host: "h", path: "/people"))
        let received = Box<[String]>([])
        let cancellable = Connection(loader: mock).eventsPublisher(for: people, eventType: "person")
            .sink { completion in
                received.withLock { $0.append("\(completion)") }
            } receiveValue: { person in
                received.withLock { $0.append(person.name) }
            }
        try await eventually("\(received.value)") { received.value.count == 2 }
        #expect(received.value == ["Ann", "finished"])
        #expect(mock.receivedRequests.last?.headers["Last-Event-ID"] == "1")
        withExtendedLifetime(cancellable) {}
    }

    @Test func nothingIsSentBeforeThereIsDemand() async {
        let mock = MockLoader().then(status: .ok, body: json(#"{"id":1,"name":"A"}"#))
        let publisher = Connection(loader: mock).publisher(for: .person(1))
        await Task.yield()
        #expect(mock.receivedRequests.isEmpty)
        withExtendedLifetime(publisher) {}
    }
}
#endif

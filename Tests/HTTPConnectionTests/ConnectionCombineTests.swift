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

    @Test func nothingIsSentBeforeThereIsDemand() async {
        let mock = MockLoader().then(status: .ok, body: json(#"{"id":1,"name":"A"}"#))
        let publisher = Connection(loader: mock).publisher(for: .person(1))
        await Task.yield()
        #expect(mock.receivedRequests.isEmpty)
        withExtendedLifetime(publisher) {}
    }
}
#endif

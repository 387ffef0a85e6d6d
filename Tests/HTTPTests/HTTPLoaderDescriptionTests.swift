import Foundation
import Testing

@testable import HTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A composite whose two branches meet again at its last next loader, as a router by host would.
private final class Fork: HTTPLoader, @unchecked Sendable {
    let left: HTTPLoader
    let right: HTTPLoader
    let join: HTTPLoader

    init(left: HTTPLoader, right: HTTPLoader, join: HTTPLoader) {
        self.left = left
        self.right = right
        self.join = join
    }

    override var nextLoaders: [HTTPLoader] { [left, right, join] }
}

/// A composite whose branches never meet.
private final class Split: HTTPLoader, @unchecked Sendable {
    let branches: [HTTPLoader]
    init(_ branches: [HTTPLoader]) { self.branches = branches }
    override var nextLoaders: [HTTPLoader] { branches }
}

/// A loader of an app's own, describing its configuration with a secret in it by mistake.
private final class Careless: HTTPLoader, @unchecked Sendable {
    override var configurationDescription: String { "region: eu, apiKey: s3cr3t" }
}

@Suite(.noHang) struct HTTPLoaderDescriptionTests {
    @Test func aChainIsOneLinePerLoaderWithItsConfiguration() {
        let environment = ServerEnvironment(
            host: "api.example.com", port: 8443, pathPrefix: "/v1", headers: ["X-API-Key": "k3y-value"],
            query: [URLQueryItem(name: "api_key", value: "q-secret")])
        let chain =
            ResetGuard()
            --> ApplyEnvironment(environment: environment)
            --> ModifyRequest { $0 }
            --> Retry(strategy: .constant(delay: .milliseconds(250), maximumNumberOfAttempts: 2), budget: nil)
            --> Throttle(maximumNumberOfRequests: 4)
            --> PrintLoader(redaction: .standard.adding("X-Session"), includesHeaders: true)
            --> MockLoader()

        #expect(
            chain.description == """
                ResetGuard
                --> ApplyEnvironment(environment: https://api.example.com:8443/v1, headers: X-API-Key, query: api_key)
                --> ModifyRequest
                --> Retry(strategy: Backoff(constant: 250 ms, attempts: 2, maximumDelay: 30 s), budget: none)
                --> Throttle(maximumNumberOfRequests: 4, starvationLimit: 8)
                --> PrintLoader(redaction: standard + x-session, includesHeaders: true)
                --> MockLoader
                """)
        #expect(!chain.description.contains("k3y-value") && !chain.description.contains("q-secret"))
        #expect("\(chain)" == chain.description)
    }

    @Test func describesTheStandardStrategyAndBudget() {
        let retry = Retry()
        #expect(
            retry.description == """
                Retry(strategy: Backoff(exponential: 500 ms × 2, attempts: 3, maximumDelay: 30 s, jitter: full), \
                budget: RetryBudget(maximum: 10, perSuccess: 0.1))
                """)
        let custom = Backoff(
            schedule: .immediately, maximumNumberOfAttempts: 2, maximumDelay: .seconds(90),
            retryableStatuses: [.conflict, .serviceUnavailable], retryableCodes: [.timedOut])
        #expect(
            "\(custom)"
                == "Backoff(immediately, attempts: 2, maximumDelay: 90 s, statuses: 409 503, codes: timedOut)")
        let combined: any HTTPRetryStrategy = .firstDecision(of: [Backoff.never])
        #expect(
            "\(combined)" == "firstDecision(of: [Backoff(immediately, attempts: 1, maximumDelay: 30 s)])")
    }

    @Test func throttleShowsItsCurrentLimit() {
        let throttle = Throttle(maximumNumberOfRequests: 2, starvationLimit: 3)
        throttle.maximumNumberOfRequests = 7
        #expect(throttle.description == "Throttle(maximumNumberOfRequests: 7, starvationLimit: 3)")
    }

    @Test func urlSessionLoaderShowsItsTimeoutAndConnections() {
        let configuration = URLSessionLoader.defaultConfiguration
        configuration.timeoutIntervalForRequest = 12.5
        configuration.httpMaximumConnectionsPerHost = 3
        #expect(
            URLSessionLoader(configuration: configuration).description
                == "URLSessionLoader(timeout: 12.5 s, connectionsPerHost: 3)")
    }

    @Test func printLoaderSummarisesItsRedaction() {
        #expect(PrintLoader().description == "PrintLoader(redaction: standard)")
        #expect(PrintLoader(redaction: .none).description == "PrintLoader(redaction: none)")
        #expect(
            PrintLoader(redaction: Redaction(names: ["b", "A"], namesContaining: ["pin"])).description
                == "PrintLoader(redaction: a, b, *pin*)")
        #expect(
            PrintLoader(redaction: .standard.adding(namesContaining: "ssn")).description
                == "PrintLoader(redaction: standard + *ssn*)")
    }

    @Test func branchesThatMeetAgainAreIndentedAndTheChainGoesOnFromTheJoin() {
        let join = Throttle(maximumNumberOfRequests: 1)
        let left = ResetGuard() --> join
        let right = ModifyRequest { $0 } --> PrintLoader() --> join
        let chain = ResetGuard() --> Fork(left: left, right: right, join: join)
        join --> MockLoader()

        #expect(
            chain.description == """
                ResetGuard
                --> Fork
                    ├─ ResetGuard
                    └─ ModifyRequest
                       --> PrintLoader(redaction: standard)
                --> Throttle(maximumNumberOfRequests: 1, starvationLimit: 8)
                --> MockLoader
                """)
    }

    @Test func branchesThatNeverMeetEndTheChain() {
        let chain = Split([ResetGuard() --> MockLoader(), MockLoader()])
        #expect(
            chain.description == """
                Split
                ├─ ResetGuard
                │  --> MockLoader
                └─ MockLoader
                """)
    }

    @Test func aLoaderMetTwiceIsDescribedOnce() {
        let shared = MockLoader()
        let chain = Split([ResetGuard() --> shared, ModifyRequest { $0 } --> shared])
        #expect(
            chain.description == """
                Split
                ├─ ResetGuard
                │  --> MockLoader
                └─ ModifyRequest
                   --> MockLoader (described above)
                """)
    }

    @Test func aCycleEnds() {
        let first = ResetGuard()
        let second = ModifyRequest { $0 }
        first --> second --> first
        #expect(
            first.description == """
                ResetGuard
                --> ModifyRequest
                --> ResetGuard (described above)
                """)
    }

    @Test func aLoaderWithoutConfigurationIsItsTypeName() {
        #expect(MockLoader().description == "MockLoader")
        #expect(HTTPLoader().description == "HTTPLoader")
    }

    @Test func secretsInAnAppsConfigurationAreHidden() {
        #expect(Careless().description == "Careless(region: eu, apiKey: <redacted>)")
    }
}

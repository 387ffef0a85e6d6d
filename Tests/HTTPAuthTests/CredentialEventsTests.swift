import Foundation
import HTTP
import HTTPAuth
import HTTPTestSupport
import Testing

/// A credential loader reports each flow once, on the load whose arrival started it: obtained, refreshed or failed,
/// with the flow's duration — what a metrics observer counts as token refreshes.
@Suite(.noHang) struct CredentialEventsTests {
    /// Hands out `k1`, `k2`, … and fails while `fails` is set.
    final class NumberedKeys: CredentialScheme, @unchecked Sendable {
        let state = Box((issued: 0, fails: false))
        var credentialName: String { "the numbered key" }

        func obtainCredential(_ context: CredentialContext) async throws -> String {
            try state.withLock { state in
                if state.fails { throw CredentialFailure("the key endpoint is down") }
                state.issued += 1
                return "k\(state.issued)"
            }
        }

        func authenticate(_ request: inout HTTPRequest, with key: String) {
            request.headers["X-Key"] = key
        }
    }

    /// Accepts only the newest key.
    final class KeyCheckingServer: HTTPLoader, @unchecked Sendable {
        let scheme: NumberedKeys
        init(scheme: NumberedKeys) { self.scheme = scheme }

        override func load(_ request: HTTPRequest) async -> HTTPResult {
            let newest = "k\(scheme.state.value.issued)"
            return .success(
                HTTPResponse(request: request, status: request.headers["X-Key"] == newest ? .ok : .unauthorized))
        }
    }

    struct Setup {
        let scheme = NumberedKeys()
        let events = Box<[HTTPEvent]>([])
        let loader: CredentialLoader<NumberedKeys>
        let chain: HTTPLoader

        init() {
            loader = CredentialLoader(scheme: scheme, method: .basic, origins: ["api.example.com"], refusalLimit: nil)
            let events = events
            chain = Observe { event in events.withLock { $0.append(event) } } --> loader
                --> KeyCheckingServer(scheme: scheme)
        }

        var credentialEvents: [String] {
            events.value.filter { $0.kind.rawValue.hasPrefix("credential") }.map { "\($0.loadID) \($0.kind)" }
        }

        func request() -> HTTPRequest {
            var request = HTTPRequest(url: URL(string: "https://api.example.com/data")!)
            request.authenticationMethod = .basic
            return request
        }
    }

    @Test func theLoadThatStartsAFlowReportsItOnceBeforeItsAttempt() async throws {
        let setup = Setup()
        #expect(await setup.chain.load(setup.request()).response?.status == .ok)
        #expect(await setup.chain.load(setup.request()).response?.status == .ok)
        let kinds = setup.events.value.filter { $0.loadID == setup.events.value.first?.loadID }.map(\.kind)
        #expect(kinds == [.loadStarted, .credentialObtained, .loadFinished])
        let obtained = try #require(setup.events.value.first { $0.kind == .credentialObtained })
        #expect(obtained.duration != nil && obtained.result == nil)
        #expect(setup.credentialEvents.count == 1, "the second load found a usable key: no flow, no event")
    }

    @Test func aRefreshAfterARefusalIsReportedAsRefreshed() async {
        let setup = Setup()
        #expect(await setup.chain.load(setup.request()).response?.status == .ok)
        setup.scheme.state.withLock { $0.issued += 1 }  // the server moves on to k2: k1 is refused
        #expect(await setup.chain.load(setup.request()).response?.status == .ok)
        #expect(setup.events.value.filter { $0.kind == .credentialRefreshed }.count == 1)
    }

    @Test func aFailedFlowIsReportedWithItsFailure() async throws {
        let setup = Setup()
        setup.scheme.state.withLock { $0.fails = true }
        #expect(await setup.chain.load(setup.request()).error?.code == .cannotAuthenticate)
        let failed = try #require(setup.events.value.first { $0.kind == .credentialFailed })
        #expect(failed.result?.error?.message == "the key endpoint is down")
    }

    /// Twenty loads wait for one flow: one event, on the load that started it.
    @Test func loadsThatWaitedForTheFlowReportNothing() async {
        let setup = Setup()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { _ = await setup.chain.load(setup.request()) } }
        }
        #expect(setup.events.value.filter { $0.kind == .credentialObtained }.count == 1)
        #expect(setup.scheme.state.value.issued == 1)
    }
}

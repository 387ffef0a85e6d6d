import Foundation
import HTTP
import HTTPAuth
import Testing

@Suite(.noHang) struct OAuthStressTests {
    /// 2,000 requests in overlapping waves while tokens expire, the server revokes them, requests are cancelled and the loader is
    /// reset: every request completes exactly once, with an answer from the server or a cancellation/reset.
    @Test func everyRequestCompletesExactlyOnceWhileTokensExpireAndTheLoaderResets() async throws {
        let clock = TestClock()
        let server = FakeAuthorizationServer(clock: clock)
        server.state.withLock { $0.rotatesRefreshTokens = true }
        let delegate = OAuthTestDelegate(server: server)
        var configuration = oauthConfiguration(refreshLimit: .init(maximumRefreshes: 10_000, window: .seconds(1)))
        // The clock moves an hour at every other wave, also between the token endpoint's answer to a login and the
        // check of its ID token: a token issued before such a move is not a replayed one.
        configuration.idTokenMaximumAge = .seconds(30 * 86_400)
        let oauth = OAuth(
            configuration: configuration,
            delegate: delegate,
            now: clock.read
        )
        oauth.nextLoader = server

        // Ten overlapping waves of 200 requests. Into each: every token expires (a proactive refresh) or the
        // server revokes the current one (a reactive refresh), a few requests are cancelled, and the sixth
        // wave meets a reset.
        let waves = 10
        let perWave = 200
        let count = waves * perWave
        let outcomes = Box([String: Int]())
        let finished = await withDeadline(seconds: 120) {
            var previousWave: [Task<Void, Never>] = []
            for wave in 0..<waves {
                let tasks = (0..<perWave).map { offset in
                    let index = wave * perWave + offset
                    return Task {
                        let result = await oauth.load(apiRequest("/item/\(index)"))
                        var outcome = result.response.map { "\($0.status.rawValue)" } ?? "\(result.error!.code)"
                        if let error = result.error, ![.cancelled, .resetInProgress].contains(error.code) {
                            outcome += ": \(error.message)"
                        }
                        outcomes.withLock { $0[outcome, default: 0] += 1 }
                    }
                }
                await Task.yield()
                if wave.isMultiple(of: 2) { clock.advance(by: 3_590) } else { server.revokeAccessTokens() }
                for task in tasks.shuffled().prefix(10) { task.cancel() }
                if wave == 5 { await oauth.reset() }
                for task in previousWave { await task.value }  // bounded by the deadline around the waves
                previousWave = tasks
            }
            for task in previousWave { await task.value }  // bounded by the deadline around the waves
            return true
        }
        // Each load returned exactly once: a continuation resumed twice traps, and one never resumed keeps the run
        // past the deadline.
        try #require(finished == true, "requests still waiting: \(oauth.waitingCount)")
        #expect(outcomes.value.values.reduce(0, +) == count)
        let unexpected = outcomes.value.keys.filter { !["200", "401", "cancelled", "resetInProgress"].contains($0) }
        #expect(unexpected.isEmpty, "\(outcomes.value)")
        #expect((outcomes.value["200"] ?? 0) > 0, "\(outcomes.value)")
        // Logins before and after the reset, and refreshes in between.
        #expect(delegate.loginCount >= 2)
        #expect(server.tokenRequestCount > delegate.loginCount, "no refresh happened")
        #expect(oauth.waitingCount == 0)
        #expect(oauth.situation != .authorizing)
    }
}

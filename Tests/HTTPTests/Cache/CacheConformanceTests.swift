import Foundation
import Testing

@testable import HTTP

/// RFC 9111 conformance, replaying the cases of the public HTTP caching test suite (github.com/http-tests/cache-tests)
/// that apply to a private cache, through ``Cache`` over a ``MockLoader`` with a manual clock.
///
/// Each row names the suite's test id, its kind (`required`: a MUST; `optimal`: a SHOULD or what a good cache does;
/// `check`: a question the suite asks for information) and the section it checks. The suite pauses three seconds
/// where a case says so; here the clock moves three seconds. Left out: cases for shared caches only (`s-maxage`
/// alone, `proxy-revalidate`, `CDN-Cache-Control`, `Surrogate-Control`), the browser's `fetch` cache modes
/// (`immutable`), and the obsolete `Warning` field.
///
/// Also left out: `vary-normalise-lang-order` (optimal behaviour this cache does not have: no field-specific
/// normalisation of `Accept-Language`), and `partial.mjs`, whose cases need bodies this replay does not send —
/// `CachePartialContentTests` replays them, with bodies that match their `Content-Range`.
///
/// Where a `check` asks a question this cache answers the other way, the row says so in `differs`, with the rule it
/// follows; its steps expect this cache's answer.
@Suite(.noHang) struct CacheConformanceTests {
    @Test(arguments: CacheConformanceCase.all)
    func replay(_ row: CacheConformanceCase) async throws {
        let clock = ManualDate()
        let origin = ConformanceOrigin(steps: row.steps, clock: clock)
        let mock = MockLoader()
        // Every request the cache sends is answered by the origin for the step being replayed.
        for _ in 0..<(row.steps.count * 3 + 2) { mock.then { origin.respond(to: $0) } }
        let cache = Cache(store: MemoryCacheStore(), now: clock.closure)
        cache.nextLoader = mock

        for (index, step) in row.steps.enumerated() {
            let place = "\(row.id), request \(index + 1)"
            origin.begin(step: index)
            let headers = HTTPHeaders(step.requestHeaders.map { HTTPHeaders.Field(name: $0.0, value: $0.1) })
            let result = await cache.load(cacheRequest("/" + row.id, method: step.method, headers: headers))
            // A background revalidation belongs to the step that started it.
            var waited = 0
            while cache.backgroundRevalidationCount > 0, waited < 5_000 {
                try await Task.sleep(for: .milliseconds(1))
                waited += 1
            }
            let answered = origin.requests(in: index)
            let sent = answered.map(\.request).filter { $0.throttlePriority != .low }
            check(step, result: result, sent: sent, answered: Set(answered.map(\.number)), at: place)
            if step.pauseAfter { clock.advance(by: 3) }
        }
    }

    @Test func theTableNamesEachCaseOnceAndOnlyChecksDiffer() {
        let ids = CacheConformanceCase.all.map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(CacheConformanceCase.all.allSatisfy { $0.differs == nil || $0.kind == .check })
        #expect(CacheConformanceCase.all.allSatisfy { !$0.steps.isEmpty })
    }

    /// Checks one step: `sent` are the requests the origin got for it, in the foreground; `answered` the numbers of
    /// all the origin's answers during it (background ones too). A response is from the store when it is not one of
    /// those answers.
    private func check(
        _ step: ConformanceStep, result: HTTPResult, sent: [HTTPRequest], answered: Set<Int>, at place: String
    ) {
        let served = result.response.flatMap { $0.headers["Server-Request-Count"] }.flatMap { Int($0) }
        let fromOrigin = served.map { answered.contains($0) } ?? false
        if let expected = step.expect {
            switch expected {
            case .cached:
                #expect(
                    result.response != nil && !fromOrigin,
                    "\(place): expected cached, got \(String(describing: result.response?.cacheStatus))")
            case .notCached:
                #expect(
                    !sent.isEmpty && (result.response == nil || fromOrigin),
                    "\(place): expected not_cached, got \(String(describing: result.response?.cacheStatus))")
            case .lmValidated:
                #expect(
                    sent.contains { $0.headers["If-Modified-Since"] != nil },
                    "\(place): expected lm_validated, the origin got \(sent.map(\.headers))")
            case .etagValidated:
                #expect(
                    sent.contains { $0.headers["If-None-Match"] != nil },
                    "\(place): expected etag_validated, the origin got \(sent.map(\.headers))")
            case .failed:
                #expect(
                    result.error != nil, "\(place): expected the failure, got \(String(describing: result.response))")
            }
        }
        if let method = step.expectMethod {
            #expect(sent.last?.method == method, "\(place): expected the origin to get a \(method)")
        }
        guard step.expectStatus != nil || !step.expectHeaders.isEmpty || !step.expectMissing.isEmpty else { return }
        guard let response = result.response else {
            Issue.record("\(place): expected a response, got \(String(describing: result.error))")
            return
        }
        if let status = step.expectStatus {
            #expect(response.status.rawValue == status, "\(place): status")
        }
        for (name, value) in step.expectHeaders {
            #expect(response.headers[name] == value, "\(place): \(name)")
        }
        for name in step.expectMissing {
            #expect(response.headers[name] == nil, "\(place): \(name) should be missing")
        }
    }
}

// MARK: - The replay

/// What a step expects of the cache, as the suite's `expected_type` says it.
enum ConformanceExpectation: Sendable {
    /// Answered from the store: the origin got no request.
    case cached
    /// The origin got a request (conditional or not), and its answer was used.
    case notCached
    /// The origin got a request with `If-Modified-Since`.
    case lmValidated
    /// The origin got a request with `If-None-Match`.
    case etagValidated
    /// The load failed, as the origin did: no stored response stood in for it.
    case failed
}

/// A field the origin sends: fixed text, or an HTTP-date this many seconds from when it answers.
struct OriginField: Sendable {
    enum Value: Sendable {
        case text(String)
        case date(TimeInterval)
    }

    let name: String
    let value: Value

    static func text(_ name: String, _ value: String) -> OriginField { OriginField(name: name, value: .text(value)) }
    static func date(_ name: String, _ offset: TimeInterval) -> OriginField {
        OriginField(name: name, value: .date(offset))
    }
    /// `Cache-Control: value`.
    static func cc(_ value: String) -> OriginField { .text("Cache-Control", value) }
}

/// One request of a case: what is sent, what the origin answers if it is asked, and what is expected.
struct ConformanceStep: Sendable {
    var method: HTTPMethod = .get
    var requestHeaders: [(String, String)] = []
    var status = 200
    var responseHeaders: [OriginField] = []
    var emptyBody = false
    /// The clock moves three seconds after the step.
    var pauseAfter = false
    /// The origin fails, as a connection closed before the response.
    var disconnect = false
    var expect: ConformanceExpectation?
    var expectStatus: Int?
    var expectHeaders: [(String, String)] = []
    var expectMissing: [String] = []
    var expectMethod: HTTPMethod?
}

/// One case of the suite.
struct CacheConformanceCase: Sendable, CustomTestStringConvertible {
    enum Kind: String, Sendable {
        case required, optimal, check
    }

    /// The suite's test id.
    let id: String
    let kind: Kind
    /// The section the case checks.
    let section: String
    /// For a `check` this cache answers the other way: what the suite asks, and the rule followed instead.
    let differs: String?
    let steps: [ConformanceStep]

    var testDescription: String { "\(id) [\(kind.rawValue), \(section)]" }
}

/// The origin server of a case: answers each request with the response of the step being replayed, and records it.
final class ConformanceOrigin: Sendable {
    private struct State {
        var step = 0
        var received: [(step: Int, request: HTTPRequest)] = []
    }

    private let steps: [ConformanceStep]
    private let clock: ManualDate
    private let state = Locked(State())

    init(steps: [ConformanceStep], clock: ManualDate) {
        self.steps = steps
        self.clock = clock
    }

    func begin(step: Int) { state.withLock { $0.step = step } }

    /// The requests the origin got during `step`, each with the number its answer carries.
    func requests(in step: Int) -> [(number: Int, request: HTTPRequest)] {
        state.withLock { state in
            state.received.enumerated().filter { $0.element.step == step }.map { ($0.offset + 1, $0.element.request) }
        }
    }

    /// The step's response; a `304` when the step expects a validation and the request carries that validator.
    func respond(to request: HTTPRequest) -> HTTPResult {
        let (index, count) = state.withLock { state -> (Int, Int) in
            state.received.append((state.step, request))
            return (state.step, state.received.count)
        }
        let step = steps[index]
        if step.disconnect { return .failure(HTTPError(.invalidResponse, request: request)) }
        var headers = HTTPHeaders()
        for field in step.responseHeaders {
            switch field.value {
            case .text(let text): headers.add(text, for: field.name)
            case .date(let offset): headers.add(clock.httpDate(offset), for: field.name)
            }
        }
        if !headers.contains("Date") { headers.add(clock.httpDate(), for: "Date") }
        headers.add(String(count), for: "Server-Request-Count")
        let validates =
            (step.expect == .lmValidated && request.headers["If-Modified-Since"] != nil)
            || (step.expect == .etagValidated && request.headers["If-None-Match"] != nil)
        if validates {
            return .success(HTTPResponse(request: request, status: .notModified, headers: headers))
        }
        let body = step.emptyBody || request.method == .head ? Data() : Data("origin response \(count)".utf8)
        return .success(
            HTTPResponse(request: request, status: HTTPStatus(rawValue: step.status), headers: headers, body: body))
    }
}

// MARK: - The cases

extension CacheConformanceCase {
    /// Every case replayed.
    static let all: [CacheConformanceCase] = [
        ccFreshness, ccParse, ageParse, expiresFreshness, expiresParse, heuristicFreshness, status, ccResponse,
        ccRequest, pragma, vary, varyParse, headUpdates, stale, headers,
    ].flatMap { $0 }

    private static func row(
        _ id: String, _ kind: Kind, _ section: String, differs: String? = nil, _ steps: ConformanceStep...
    ) -> CacheConformanceCase {
        CacheConformanceCase(id: id, kind: kind, section: section, differs: differs, steps: steps)
    }

    /// A step; every argument has the suite's default.
    private static func step(
        _ response: [OriginField] = [], status: Int = 200, method: HTTPMethod = .get,
        request: [(String, String)] = [], emptyBody: Bool = false, pause: Bool = false, disconnect: Bool = false,
        expect: ConformanceExpectation? = nil, expectStatus: Int? = nil, expectHeaders: [(String, String)] = [],
        expectMissing: [String] = [], expectMethod: HTTPMethod? = nil
    ) -> ConformanceStep {
        ConformanceStep(
            method: method, requestHeaders: request, status: status, responseHeaders: response, emptyBody: emptyBody,
            pauseAfter: pause, disconnect: disconnect, expect: expect, expectStatus: expectStatus,
            expectHeaders: expectHeaders, expectMissing: expectMissing, expectMethod: expectMethod)
    }

    /// A response stored, then three seconds pass, then the same request expects `expected`.
    private static func afterPause(
        _ id: String, _ kind: Kind, _ section: String, differs: String? = nil, _ response: [OriginField],
        _ expected: ConformanceExpectation
    ) -> CacheConformanceCase {
        row(id, kind, section, differs: differs, step(response, pause: true), step(expect: expected))
    }

    /// The suite's fresh response: a day and more of `max-age` and `Expires`.
    private static let fresh: [OriginField] = [
        .date("Expires", 100_000), .cc("max-age=100000"), .date("Last-Modified", 0), .date("Date", 0),
    ]
    /// The suite's stale response: `Expires` in the past, `Last-Modified` long ago.
    private static let staleResponse: [OriginField] = [
        .date("Expires", -5_000), .date("Last-Modified", -100_000), .date("Date", 0),
    ]
    /// The suite's response that becomes stale during the pause after it.
    private static let becomeStale = step([.cc("max-age=2"), .text("Template-A", "1")], pause: true)

    // MARK: cc-freshness.mjs

    private static let ccFreshness: [CacheConformanceCase] = [
        afterPause("freshness-none", .check, "RFC 9111 §4.2.2", [], .notCached),
        afterPause("freshness-max-age", .optimal, "RFC 9111 §5.2.2.1", [.cc("max-age=3600")], .cached),
        row("freshness-max-age-stale", .required, "RFC 9111 §5.2.2.1", becomeStale, step(expect: .notCached)),
        afterPause("freshness-max-age-0", .required, "RFC 9111 §5.2.2.1", [.cc("max-age=0")], .notCached),
        afterPause("freshness-max-age-max-minus-1", .optimal, "RFC 9111 §1.2.2", [.cc("max-age=2147483647")], .cached),
        afterPause("freshness-max-age-max", .optimal, "RFC 9111 §1.2.2", [.cc("max-age=2147483648")], .cached),
        afterPause("freshness-max-age-max-plus-1", .optimal, "RFC 9111 §1.2.2", [.cc("max-age=2147483649")], .cached),
        afterPause("freshness-max-age-max-plus", .optimal, "RFC 9111 §1.2.2", [.cc("max-age=99999999999")], .cached),
        afterPause(
            "freshness-max-age-age", .required, "RFC 9111 §4.2.3",
            [.date("Date", 0), .cc("max-age=3600"), .text("Age", "7200")], .notCached),
        afterPause(
            "freshness-max-age-date", .check, "RFC 9111 §4.2.3", [.date("Date", -7_200), .cc("max-age=3600")],
            .notCached),
        afterPause(
            "freshness-max-age-expires", .optimal, "RFC 9111 §4.2.1",
            [.cc("max-age=3600"), .date("Expires", -7_200), .date("Date", 0)], .cached),
        afterPause(
            "freshness-max-age-expires-invalid", .optimal, "RFC 9111 §4.2.1",
            [.cc("max-age=3600"), .text("Expires", "0"), .date("Date", 0)], .cached),
        afterPause(
            "freshness-max-age-0-expires", .required, "RFC 9111 §4.2.1",
            [.date("Expires", 3_600), .cc("max-age=0"), .date("Date", 0)], .notCached),
        afterPause("freshness-max-age-extension", .optimal, "RFC 9111 §5.2.3", [.cc("foobar, max-age=3600")], .cached),
        afterPause("freshness-max-age-case-insenstive", .optimal, "RFC 9111 §5.2", [.cc("MaX-aGe=3600")], .cached),
        afterPause("freshness-max-age-negative", .required, "RFC 9111 §1.2.2", [.cc("max-age=-3600")], .notCached),
        afterPause(
            "freshness-max-age-s-maxage-private", .required, "RFC 9111 §5.2.2.10", [.cc("s-maxage=3600, max-age=1")],
            .notCached),
        afterPause(
            "freshness-max-age-s-maxage-private-multiple", .required, "RFC 9111 §5.2.2.10",
            [.cc("s-maxage=3600"), .cc("max-age=1")], .notCached),
    ]

    // MARK: cc-parse.mjs

    private static let invalidMaxAge =
        "the suite asks whether it is reused; delta-seconds is 1*DIGIT (RFC 9111 §1.2.2), and a max-age that is not "
        + "is read as stale at once, as an invalid Expires is (§5.3)"

    private static let ccParse: [CacheConformanceCase] = [
        afterPause(
            "freshness-max-age-two-fresh-stale-sameline", .check, "RFC 9111 §4.2.1", [.cc("max-age=1800, max-age=1")],
            .cached),
        afterPause(
            "freshness-max-age-two-fresh-stale-sepline", .check, "RFC 9111 §4.2.1",
            [.cc("max-age=1800"), .cc("max-age=1")], .cached),
        afterPause(
            "freshness-max-age-two-stale-fresh-sameline", .check, "RFC 9111 §4.2.1",
            differs: "the suite asks whether it is reused; §4.2.1 uses the first max-age (or calls it stale)",
            [.cc("max-age=1, max-age=1800")], .notCached),
        afterPause(
            "freshness-max-age-two-stale-fresh-sepline", .check, "RFC 9111 §4.2.1",
            differs: "the suite asks whether it is reused; §4.2.1 uses the first max-age (or calls it stale)",
            [.cc("max-age=1"), .cc("max-age=1800")], .notCached),
        afterPause("freshness-max-age-quoted", .check, "RFC 9111 §5.2", [.cc("max-age=\"3600\"")], .cached),
        afterPause(
            "freshness-max-age-ignore-quoted", .required, "RFC 9111 §5.2",
            [.cc("extension=\"max-age=3600\", max-age=1")], .notCached),
        afterPause(
            "freshness-max-age-ignore-quoted-rev", .required, "RFC 9111 §5.2",
            [.cc("max-age=1, extension=\"max-age=3600\"")], .notCached),
        afterPause(
            "freshness-max-age-space-before-equals", .check, "RFC 9111 §5.2", [.cc("max-age =3600")], .notCached),
        afterPause(
            "freshness-max-age-space-after-equals", .check, "RFC 9111 §5.2", [.cc("max-age= 3600")], .notCached),
        afterPause("freshness-max-age-leading-zero", .required, "RFC 9111 §1.2.2", [.cc("max-age=003600")], .cached),
        afterPause(
            "freshness-max-age-single-quoted", .required, "RFC 9111 §1.2.2", [.cc("max-age='3600'")], .notCached),
        afterPause(
            "freshness-max-age-decimal-zero", .check, "RFC 9111 §1.2.2", differs: invalidMaxAge,
            [.cc("max-age=3600.0")], .notCached),
        afterPause(
            "freshness-max-age-decimal-five", .check, "RFC 9111 §1.2.2", differs: invalidMaxAge,
            [.cc("max-age=3600.5")], .notCached),
        afterPause(
            "freshness-max-age-a100", .check, "RFC 9111 §1.2.2", differs: invalidMaxAge, [.cc("max-age=a3600")],
            .notCached),
        afterPause(
            "freshness-max-age-100a", .check, "RFC 9111 §1.2.2", differs: invalidMaxAge, [.cc("max-age=3600a")],
            .notCached),
    ]

    // MARK: age-parse.mjs

    private static let oldFirstAge =
        "the suite asks whether it is reused; Age is a singleton (RFC 9111 §5.1): its first value, 7200, is used"

    private static func ageCase(
        _ id: String, _ ages: [String], differs: String? = nil, _ expected: ConformanceExpectation
    ) -> CacheConformanceCase {
        afterPause(
            id, .check, "RFC 9111 §5.1", differs: differs,
            [.date("Date", 0), .cc("max-age=3600")] + ages.map { .text("Age", $0) }, expected)
    }

    private static let ageParse: [CacheConformanceCase] = [
        ageCase("age-parse-nonnumeric", ["abc"], .cached),
        ageCase("age-parse-negative", ["-7200"], .cached),
        ageCase("age-parse-float", ["7200.0"], .cached),
        ageCase("age-parse-suffix", ["7200,0"], differs: oldFirstAge, .notCached),
        ageCase("age-parse-suffix-twoline", ["7200", "0"], differs: oldFirstAge, .notCached),
        ageCase("age-parse-prefix", ["0,7200"], .cached),
        ageCase("age-parse-prefix-twoline", ["0", "7200"], .cached),
        ageCase("age-parse-dup-0", ["0, 0"], .cached),
        ageCase("age-parse-dup-0-twoline", ["0", "0"], .cached),
        ageCase("age-parse-dup-old", ["7200, 7200"], differs: oldFirstAge, .notCached),
        ageCase("age-parse-dup-old-twoline", ["7200", "7200"], differs: oldFirstAge, .notCached),
    ]

    // MARK: expires-freshness.mjs

    private static let expiresFreshness: [CacheConformanceCase] = [
        afterPause(
            "freshness-expires-future", .optimal, "RFC 9111 §5.3", [.date("Expires", 30 * 86_400), .date("Date", 0)],
            .cached),
        afterPause(
            "freshness-expires-past", .required, "RFC 9111 §4.2.1", [.date("Expires", -30 * 86_400), .date("Date", 0)],
            .notCached),
        row(
            "freshness-expires-present", .required, "RFC 9111 §4.2.1", step([.date("Expires", 0), .date("Date", 0)]),
            step(expect: .notCached)),
        afterPause(
            "freshness-expires-old-date", .required, "RFC 9111 §4.2.1", [.date("Expires", 300), .date("Date", 400)],
            .notCached),
        afterPause(
            "freshness-expires-invalid", .required, "RFC 9111 §5.3", [.text("Expires", "0"), .date("Date", 0)],
            .notCached),
        row(
            "freshness-expires-invalid-date", .optimal, "RFC 9111 §4.2.1",
            step([.text("Date", "foo"), .date("Expires", 10)]), step(expect: .cached)),
        row(
            "freshness-expires-age-slow-date", .required, "RFC 9111 §4.2.3",
            step([.date("Date", -10), .date("Expires", 10), .text("Age", "25")]), step(expect: .notCached)),
        row(
            "freshness-expires-age-fast-date", .required, "RFC 9111 §4.2.3",
            step([.date("Date", 10), .date("Expires", 20), .text("Age", "15")]), step(expect: .notCached)),
    ]

    // MARK: expires-parse.mjs

    private static func expiresCase(
        _ id: String, _ expires: String, differs: String? = nil, _ expected: ConformanceExpectation
    ) -> CacheConformanceCase {
        afterPause(
            id, .check, "RFC 9110 §5.6.7", differs: differs, [.text("Expires", expires), .date("Date", 0)], expected)
    }

    private static let expiresParse: [CacheConformanceCase] = [
        expiresCase("freshness-expires-wrong-case-weekday", "THU, 18 Aug 2050 02:01:18 GMT", .cached),
        expiresCase("freshness-expires-wrong-case-month", "Thu, 18 AUG 2050 02:01:18 GMT", .cached),
        expiresCase("freshness-expires-wrong-case-tz", "Thu, 18 Aug 2050 02:01:18 gMT", .cached),
        expiresCase("freshness-expires-invalid-utc", "Thu, 18 Aug 2050 02:01:18 UTC", .cached),
        expiresCase("freshness-expires-invalid-2-digit-year", "Thu, 18 Aug 50 02:01:18 GMT", .cached),
        expiresCase("freshness-expires-invalid-no-comma", "Thu 18 Aug 2050 02:01:18 GMT", .cached),
        expiresCase("freshness-expires-invalid-multiple-spaces", "Thu, 18  Aug  2050 02:01:18 GMT", .cached),
        expiresCase("freshness-expires-invalid-date-dashes", "Thu, 18-Aug-2050 02:01:18 GMT", .cached),
        expiresCase(
            "freshness-expires-invalid-time-periods", "Thu, 18 Aug 2050 02.01.18 GMT",
            differs:
                "the suite asks whether it is reused; that is no HTTP-date a recipient can read (RFC 9110 §5.6.7), "
                + "and RFC 9111 §5.3 reads an invalid Expires as a time in the past",
            .notCached),
        expiresCase("freshness-expires-invalid-1-digit-hour", "Thu, 18 Aug 2050 2:01:18 GMT", .cached),
    ]

    // MARK: heuristic-freshness.mjs

    private static func heuristicStatus(
        _ code: Int, cached: Bool, extra: [OriginField] = []
    ) -> CacheConformanceCase {
        let response = [.date("Last-Modified", -86_400), .date("Date", 0)] + extra
        let expected: ConformanceExpectation = cached ? .cached : .notCached
        return row(
            "heuristic-\(code)-\(cached ? "cached" : "not_cached")", cached ? .optimal : .required,
            extra.isEmpty ? "RFC 9111 §4.2.2" : "RFC 9111 §5.2.2.9",
            step(response, status: code, emptyBody: code == 204),
            step(response, status: code, emptyBody: code == 204, expect: expected))
    }

    private static func heuristicDelta(_ delta: Int) -> CacheConformanceCase {
        let tooYoung = delta <= 30
        return afterPause(
            "heuristic-delta-\(delta)", .check, "RFC 9111 §4.2.2",
            differs: tooYoung
                ? "the suite asks whether it is reused; a tenth of \(delta) s (§4.2.2's example) is over in the pause"
                : nil,
            [.date("Last-Modified", -TimeInterval(delta)), .date("Date", 0)], tooYoung ? .notCached : .cached)
    }

    private static let heuristicStatuses: [CacheConformanceCase] = [
        heuristicStatus(200, cached: true), heuristicStatus(201, cached: false), heuristicStatus(202, cached: false),
        heuristicStatus(203, cached: true), heuristicStatus(204, cached: true), heuristicStatus(403, cached: false),
        heuristicStatus(404, cached: true), heuristicStatus(405, cached: true), heuristicStatus(410, cached: true),
        heuristicStatus(414, cached: true), heuristicStatus(501, cached: true), heuristicStatus(502, cached: false),
        heuristicStatus(503, cached: false), heuristicStatus(504, cached: false), heuristicStatus(599, cached: false),
        heuristicStatus(599, cached: true, extra: [.cc("public")]),
    ]

    private static let heuristicDeltas: [Int] = [5, 10, 30, 60, 300, 600, 1_200, 1_800, 3_600, 43_200, 86_400]

    private static let heuristicFreshness: [CacheConformanceCase] =
        heuristicStatuses + heuristicDeltas.map(heuristicDelta)

    // MARK: status.mjs

    /// `status-<code>-fresh` and `status-<code>-stale`: a response with this status and explicit freshness is
    /// reused while fresh, and not once stale.
    private static func statusCases(_ code: Int) -> [CacheConformanceCase] {
        let empty = code == 204
        let freshCase = row(
            "status-\(code)-fresh", .optimal, "RFC 9111 §3", step(fresh, status: code, emptyBody: empty),
            step(fresh, status: code, emptyBody: empty, expect: .cached))
        let staleCase = row(
            "status-\(code)-stale", .required, "RFC 9111 §4.2.1", step(staleResponse, status: code, emptyBody: empty),
            step(emptyBody: empty, expect: .notCached))
        return [freshCase, staleCase]
    }

    private static let statusCodes = [
        200, 203, 204, 299, 301, 302, 303, 307, 308, 400, 404, 410, 499, 500, 502, 503, 504, 599,
    ]

    private static let mustUnderstand: [CacheConformanceCase] = [
        row(
            "status-599-must-understand", .required, "RFC 9111 §5.2.2.3",
            step([.cc("max-age=3600, no-store, must-understand")], status: 599), step(expect: .notCached)),
        row(
            "status-200-must-understand", .optimal, "RFC 9111 §5.2.2.3",
            step([.cc("max-age=3600, no-store, must-understand")]), step(expect: .cached)),
    ]

    private static let status: [CacheConformanceCase] = statusCodes.flatMap(statusCases) + mustUnderstand

    // MARK: cc-response.mjs

    private static let ccResponse: [CacheConformanceCase] = [
        row(
            "cc-resp-private-private", .optimal, "RFC 9111 §5.2.2.7", step([.cc("private, max-age=3600")]),
            step(expect: .cached)),
        row("cc-resp-no-store", .required, "RFC 9111 §5.2.2.5", step([.cc("no-store")]), step(expect: .notCached)),
        row(
            "cc-resp-no-store-case-insensitive", .required, "RFC 9111 §5.2.2.5", step([.cc("No-StOrE")]),
            step(expect: .notCached)),
        row(
            "cc-resp-no-store-fresh", .required, "RFC 9111 §5.2.2.5",
            step([.cc("max-age=10000, no-store"), .date("Expires", 10_000), .date("Date", 0)]),
            step(expect: .notCached)),
        row(
            "cc-resp-no-store-old-new", .required, "RFC 9111 §5.2.2.5",
            step(
                [.cc("max-age=10000"), .date("Expires", 10_000), .date("Date", 0), .text("A", "1")], pause: true),
            step([.cc("no-store"), .date("Date", 0), .text("A", "2")], pause: true),
            step(expect: .cached, expectHeaders: [("A", "1")])),
        row(
            "cc-resp-no-store-old-max-age", .required, "RFC 9111 §5.2.2.5",
            step(
                [.cc("max-age=10000"), .date("Expires", 10_000), .date("Date", 0), .text("A", "1")], pause: true),
            step([.cc("no-store, max-age=0"), .date("Date", 0), .text("A", "2")], pause: true),
            step(expect: .cached, expectHeaders: [("A", "1")])),
        row(
            "cc-resp-no-cache", .required, "RFC 9111 §5.2.2.4",
            step([.cc("max-age=10000, no-cache"), .date("Expires", 10_000), .date("Date", 0)]),
            step(expect: .notCached)),
        row(
            "cc-resp-no-cache-case-insensitive", .required, "RFC 9111 §5.2.2.4",
            step([.cc("max-age=10000, No-CaChE"), .date("Expires", 10_000), .date("Date", 0)]),
            step(expect: .notCached)),
        row(
            "cc-resp-no-cache-revalidate", .optimal, "RFC 9111 §5.2.2.4",
            step([.cc("no-cache"), .text("ETag", "\"abcd\"")]), step(expect: .etagValidated)),
        row(
            "cc-resp-no-cache-revalidate-fresh", .optimal, "RFC 9111 §5.2.2.4",
            step([
                .cc("max-age=10000, no-cache"), .date("Expires", 10_000), .date("Date", 0), .text("ETag", "\"abcd\""),
            ]),
            step(expect: .etagValidated)),
        row(
            "headers-omit-headers-listed-in-Cache-Control-no-cache-single", .check, "RFC 9111 §5.2.2.4",
            step(
                [.cc("no-cache=\"a\""), .text("a", "1"), .text("b", "2"), .cc("max-age=3600"), .date("Date", 0)],
                pause: true),
            step(expect: .cached, expectHeaders: [("b", "2")], expectMissing: ["a"])),
        row(
            "headers-omit-headers-listed-in-Cache-Control-no-cache", .check, "RFC 9111 §5.2.2.4",
            step(
                [
                    .cc("no-cache=\"a, b\""), .text("a", "1"), .text("b", "2"), .text("c", "3"), .cc("max-age=3600"),
                    .date("Date", 0),
                ], pause: true),
            step(expect: .cached, expectHeaders: [("c", "3")], expectMissing: ["a", "b"])),
        row(
            "cc-resp-must-revalidate-fresh", .optimal, "RFC 9111 §5.2.2.2",
            step([.cc("max-age=10000, must-revalidate"), .text("ETag", "\"abcd\"")]), step(expect: .cached)),
        row(
            "cc-resp-must-revalidate-stale", .required, "RFC 9111 §5.2.2.2",
            step([.cc("max-age=2, must-revalidate"), .text("ETag", "\"abcd\"")]),
            step([.cc("max-age=2, must-revalidate"), .text("ETag", "\"abcd\"")], pause: true, expect: .cached),
            step(expect: .etagValidated)),
    ]

    // MARK: cc-request.mjs

    private static func requestCase(
        _ id: String, _ section: String, differs: String? = nil, stored: [OriginField], pause: Bool = false,
        request: String, _ expected: ConformanceExpectation
    ) -> CacheConformanceCase {
        row(
            id, .check, section, differs: differs, step(stored, pause: pause),
            step(request: [("Cache-Control", request)], expect: expected))
    }

    private static let ccRequest: [CacheConformanceCase] = [
        requestCase("ccreq-ma0", "RFC 9111 §5.2.1.1", stored: fresh, pause: true, request: "max-age=0", .notCached),
        requestCase("ccreq-ma1", "RFC 9111 §5.2.1.1", stored: fresh, pause: true, request: "max-age=1", .notCached),
        requestCase(
            "ccreq-magreaterage", "RFC 9111 §5.2.1.1", stored: [.cc("max-age=3600"), .text("Age", "1800")],
            request: "max-age=600", .notCached),
        requestCase(
            "ccreq-max-stale", "RFC 9111 §5.2.1.2", stored: [.cc("max-age=1")], pause: true,
            request: "max-stale=1000", .cached),
        requestCase(
            "ccreq-max-stale-age", "RFC 9111 §5.2.1.2", stored: [.cc("max-age=1500"), .text("Age", "2000")],
            request: "max-stale=1000", .cached),
        requestCase(
            "ccreq-min-fresh", "RFC 9111 §5.2.1.3", stored: [.cc("max-age=1500")], request: "min-fresh=2000",
            .notCached),
        requestCase(
            "ccreq-min-fresh-age", "RFC 9111 §5.2.1.3", stored: [.cc("max-age=1500"), .text("Age", "1000")],
            request: "min-fresh=1000", .notCached),
        requestCase(
            "ccreq-no-cache", "RFC 9111 §5.2.1.4", stored: [.cc("max-age=3600")], request: "no-cache", .notCached),
        requestCase(
            "ccreq-no-cache-lm", "RFC 9111 §5.2.1.4",
            stored: [.cc("max-age=3600"), .date("Last-Modified", -10_000), .date("Date", 0)], request: "no-cache",
            .lmValidated),
        requestCase(
            "ccreq-no-cache-etag", "RFC 9111 §5.2.1.4", stored: [.cc("max-age=3600"), .text("ETag", "\"abc\"")],
            request: "no-cache", .etagValidated),
        requestCase(
            "ccreq-no-store", "RFC 9111 §5.2.1.5",
            differs:
                "the suite asks whether the stored response is bypassed; §5.2.1.5 forbids storing the response to "
                + "this request, and says a stored response may still satisfy it",
            stored: [.cc("max-age=3600")], request: "no-store", .cached),
        row(
            "ccreq-oic", .check, "RFC 9111 §5.2.1.7",
            step(request: [("Cache-Control", "only-if-cached")], expectStatus: 504)),
    ]

    // MARK: pragma.mjs

    private static let pragma: [CacheConformanceCase] = [
        row(
            "pragma-request-no-cache", .check, "RFC 9111 §5.4",
            differs:
                "the suite asks whether the stored response is used; §5.4: without Cache-Control, a request's "
                + "Pragma: no-cache MUST count as Cache-Control: no-cache",
            step([.cc("max-age=3600")]), step(request: [("Pragma", "no-cache")], expect: .notCached)),
        row(
            "pragma-request-extension", .check, "RFC 9111 §5.4", step([.cc("max-age=3600")]),
            step(request: [("Pragma", "unrecognised-extension")], expect: .cached)),
        row(
            "pragma-response-no-cache", .check, "RFC 9111 §5.4",
            step([.cc("max-age=3600"), .text("Pragma", "no-cache")]),
            step(expect: .cached)),
        row(
            "pragma-response-no-cache-heuristic", .check, "RFC 9111 §5.4",
            step([.date("Last-Modified", -10_000), .text("Pragma", "no-cache")]), step(expect: .cached)),
        row(
            "pragma-response-extension", .check, "RFC 9111 §5.4",
            step([.cc("max-age=3600"), .text("Pragma", "unrecognised-extension")]), step(expect: .cached)),
    ]

    // MARK: vary.mjs

    /// A `vary.mjs` case: the first request's response varies on `vary`, the second request expects `expected`.
    private static func varyMatch(
        _ id: String, _ kind: Kind, vary: String, stored: [(String, String)], then: [(String, String)],
        _ expected: ConformanceExpectation
    ) -> CacheConformanceCase {
        let response: [OriginField] = [
            .date("Expires", 5_000), .date("Last-Modified", -3_000), .date("Date", 0), .text("Vary", vary),
        ]
        return row(id, kind, "RFC 9111 §4.1", step(response, request: stored), step(request: then, expect: expected))
    }

    private static let vary: [CacheConformanceCase] = [
        varyMatch("vary-match", .optimal, vary: "Foo", stored: [("Foo", "1")], then: [("Foo", "1")], .cached),
        varyMatch("vary-no-match", .required, vary: "Foo", stored: [("Foo", "1")], then: [("Foo", "2")], .notCached),
        varyMatch("vary-omit", .required, vary: "Foo", stored: [("Foo", "1")], then: [], .notCached),
        row(
            "vary-invalidate", .optimal, "RFC 9111 §4.1",
            step(
                [.date("Expires", 5_000), .date("Last-Modified", -3_000), .date("Date", 0), .text("Vary", "Foo")],
                request: [("Foo", "1")]),
            step(
                [.date("Expires", 5_000), .date("Last-Modified", -3_000), .date("Date", 0), .text("Vary", "Foo")],
                request: [("Foo", "2")], expect: .notCached),
            step(request: [("Foo", "1")], expect: .cached)),
        varyMatch(
            "vary-cache-key", .optimal, vary: "Foo", stored: [("Foo", "1"), ("Other", "2")],
            then: [("Foo", "1"), ("Other", "3")], .cached),
        varyMatch(
            "vary-2-match", .optimal, vary: "Foo, Bar", stored: [("Foo", "1"), ("Bar", "abc")],
            then: [("Foo", "1"), ("Bar", "abc")], .cached),
        varyMatch(
            "vary-2-no-match", .required, vary: "Foo, Bar", stored: [("Foo", "1"), ("Bar", "abc")],
            then: [("Foo", "2"), ("Bar", "abc")], .notCached),
        varyMatch("vary-2-match-omit", .required, vary: "Foo, Bar", stored: [("Foo", "1")], then: [], .notCached),
        varyMatch(
            "vary-3-match", .optimal, vary: "Foo, Bar, Baz", stored: [("Foo", "1"), ("Bar", "abc"), ("Baz", "789")],
            then: [("Foo", "1"), ("Bar", "abc"), ("Baz", "789")], .cached),
        varyMatch(
            "vary-3-no-match", .required, vary: "Foo, Bar, Baz",
            stored: [("Foo", "1"), ("Bar", "abc"), ("Baz", "789")],
            then: [("Foo", "2"), ("Bar", "abc"), ("Baz", "789")],
            .notCached),
        varyMatch(
            "vary-3-order", .required, vary: "Foo, Bar, Baz",
            stored: [("Foo", "1"), ("Bar", "abc4"), ("Baz", "789")],
            then: [("Foo", "1"), ("Bar", "abc"), ("Baz", "789")], .notCached),
        varyMatch(
            "vary-3-omit", .optimal, vary: "Foo, Bar, Baz", stored: [("Foo", "1"), ("Baz", "789")],
            then: [("Foo", "1"), ("Baz", "789")], .cached),
        varyMatch(
            "vary-star", .required, vary: "*", stored: [("Foo", "1"), ("Baz", "789")],
            then: [("*", "1"), ("Baz", "789")], .notCached),
        varyMatch(
            "vary-normalise-space", .optimal, vary: "Foo", stored: [("Foo", "1,2")], then: [("Foo", " 1, 2 ")],
            .cached),
        varyMatch(
            "vary-normalise-combine", .optimal, vary: "Foo", stored: [("Foo", "1, 2")],
            then: [("Foo", "1"), ("Foo", "2")], .cached),
    ]

    // MARK: vary-parse.mjs

    private static func varyCase(_ id: String, _ vary: [String]) -> CacheConformanceCase {
        let request = [("Foo", "1"), ("Baz", "789")]
        let response: [OriginField] =
            [.cc("max-age=5000"), .date("Last-Modified", -3_000), .date("Date", 0)] + vary.map { .text("Vary", $0) }
        return row(
            id, .required, "RFC 9111 §4.1", step(response, request: request),
            step(request: request, expect: .notCached))
    }

    private static let varyParse: [CacheConformanceCase] = [
        varyCase("vary-syntax-star", ["*"]),
        varyCase("vary-syntax-star-star", ["*, *"]),
        varyCase("vary-syntax-star-star-lines", ["*", "*"]),
        varyCase("vary-syntax-empty-star", [", *"]),
        varyCase("vary-syntax-empty-star-lines", ["", "*"]),
        varyCase("vary-syntax-star-foo", ["*, Foo"]),
        varyCase("vary-syntax-foo-star", ["Foo, *"]),
    ]

    // MARK: update-head.mjs

    private static let headUpdates: [CacheConformanceCase] = [
        row("head-writethrough", .check, "RFC 9111 §4.3.5", becomeStale, step(method: .head, expectMethod: .head)),
        row(
            "head-200-retain", .check, "RFC 9111 §4.3.5",
            differs:
                "the suite asks whether the HEAD response carries the stored fields it lacked; this cache updates the "
                + "stored response and delivers the HEAD response as the server sent it",
            becomeStale, step(method: .head, expectMissing: ["Template-A"], expectMethod: .head)),
        row(
            "head-200-freshness-update", .check, "RFC 9111 §4.3.5", becomeStale,
            step([.cc("max-age=1000")], method: .head, expectMethod: .head), step(expect: .cached)),
        row(
            "head-200-update", .check, "RFC 9111 §4.3.5", becomeStale,
            step([.text("Template-A", "2"), .cc("max-age=1000")], method: .head, expectMethod: .head),
            step(expect: .cached, expectHeaders: [("Template-A", "2")])),
        row(
            "head-410-update", .check, "RFC 9111 §4.3.5",
            differs:
                "the suite asks whether a 410 to a HEAD updates the stored GET response; §4.3.5 updates from a 200",
            becomeStale,
            step([.text("Template-A", "2"), .cc("max-age=1000")], status: 410, method: .head, expectMethod: .head),
            step(expect: .notCached)),
    ]

    // MARK: headers.mjs

    /// `headers-…`: a response with `fields` and a long `max-age` is stored; after a pause it is served from the
    /// store with `expected` and without `missing`.
    private static func storedFields(
        _ id: String, _ kind: Kind, differs: String? = nil, _ fields: [(String, String)],
        expected: [(String, String)], missing: [String] = []
    ) -> CacheConformanceCase {
        row(
            "headers-\(id)", kind, "RFC 9111 §3.1", differs: differs,
            step(fields.map { .text($0.0, $0.1) } + [.cc("max-age=3600"), .date("Date", 0)], pause: true),
            step(expect: .cached, expectHeaders: expected, expectMissing: missing))
    }

    private static let cookiesNotStored =
        "the suite asks whether the field is stored; §3.1 allows it, and this cache does not store it: replayed on "
        + "every hit, a stored cookie would reach the cookie jar again after the server had changed or removed it"

    private static let headers: [CacheConformanceCase] = [
        storedFields("store-Test-Header", .check, [("Test-Header", "x")], expected: [("Test-Header", "x")]),
        storedFields(
            "store-Content-Type", .check, [("Content-Type", "text/plain")], expected: [("Content-Type", "text/plain")]),
        storedFields(
            "store-Clear-Site-Data", .check, [("Clear-Site-Data", "cookies")],
            expected: [("Clear-Site-Data", "cookies")]),
        storedFields(
            "store-WWW-Authenticate", .check, [("WWW-Authenticate", "Basic")], expected: [("WWW-Authenticate", "Basic")]
        ),
        storedFields(
            "store-Set-Cookie", .check, differs: cookiesNotStored, [("Set-Cookie", "a=b")], expected: [],
            missing: ["Set-Cookie"]),
        storedFields(
            "store-Set-Cookie2", .check, differs: cookiesNotStored, [("Set-Cookie2", "a=b")], expected: [],
            missing: ["Set-Cookie2"]),
        storedFields(
            "omit-headers-listed-in-Connection", .required,
            [("Connection", "a, b"), ("a", "1"), ("b", "2"), ("c", "3")],
            expected: [("c", "3")], missing: ["Connection", "a", "b"]),
    ]

    // MARK: stale.mjs

    private static let staleWithoutPermission =
        "the suite asks whether a stale response stands in for a failure; RFC 9111 §4.2.4 allows it but does not "
        + "ask it, and this cache does so only where stale-if-error (RFC 5861 §4) allows"

    private static let stale: [CacheConformanceCase] = [
        row(
            "stale-close", .check, "RFC 9111 §4.2.4", differs: staleWithoutPermission, becomeStale,
            step(disconnect: true, expect: .failed)),
        row(
            "stale-503", .check, "RFC 9111 §4.2.4", differs: staleWithoutPermission, becomeStale,
            step(status: 503, expect: .notCached, expectStatus: 503)),
        row(
            "stale-while-revalidate", .optimal, "RFC 5861 §3",
            step([.cc("max-age=1, stale-while-revalidate=3600"), .text("ETag", "\"abc\"")], pause: true),
            step(expect: .cached)),
        row(
            "stale-while-revalidate-window", .required, "RFC 5861 §3",
            step([.cc("max-age=1, stale-while-revalidate=4"), .text("ETag", "\"abc\"")], pause: true),
            step([.cc("no-cache"), .text("ETag", "\"def\"")], pause: true, expect: .cached),
            step(expect: .notCached)),
        row(
            "stale-sie-close", .check, "RFC 5861 §4", step([.cc("max-age=2, stale-if-error=60")], pause: true),
            step(disconnect: true, expect: .cached, expectStatus: 200)),
        row(
            "stale-sie-503", .check, "RFC 5861 §4", step([.cc("max-age=2, stale-if-error=60")], pause: true),
            step(status: 503, expect: .cached, expectStatus: 200)),
        row(
            "stale-close-must-revalidate", .required, "RFC 9111 §5.2.2.2",
            step([.cc("max-age=2, must-revalidate")], pause: true), step(disconnect: true, expect: .failed)),
        row(
            "stale-close-no-cache", .required, "RFC 9111 §5.2.2.4", step([.cc("max-age=2, no-cache")], pause: true),
            step(disconnect: true, expect: .failed)),
    ]
}

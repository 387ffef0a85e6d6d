public import Foundation

extension HTTPError.Code {
    /// A ``ReplayLoader`` has no recorded answer for the request. The message names the closest recorded ones and
    /// how they differ.
    public static let notRecorded = HTTPError.Code(rawValue: "notRecorded")
}

/// A terminal loader that answers from recorded traffic (a ``Cassette``) instead of a network, for tests that
/// exercise a whole chain against what a real server once said.
///
/// ```swift
/// let replay = try ReplayLoader(contentsOf: cassetteURL)
/// let chain = ApplyEnvironment(environment: .staging) --> Retry() --> replay
/// let person = try await chain.load(HTTPRequest(path: "/people/42")).get()
/// #expect(replay.unusedEntries.isEmpty)
/// ```
///
/// Each request is matched against the recorded requests by ``Matching``: method, URL (query items in any order
/// by default) and body, and the header fields you name. The request is compared in recorded form: the cassette's
/// ``Cassette/redaction`` hides its secrets first, so a request with a fresh token matches one recorded with
/// `Bearer <redacted>`, and JSON bodies compare by value, not by key order. Which recorded answer a match gets
/// follows the ``Order``: by default each entry answers once, and identical requests get their recorded answers
/// in recorded order (a `503`, then the `200` of the retry).
///
/// A request with no recorded answer fails with ``HTTPError/Code/notRecorded``; its description names the
/// request and the message the closest recorded requests and how they differ. A recorded failure is replayed as
/// an ``HTTPError`` with its code and message, and a recorded response as a response to the request being
/// answered — with the recorded header fields and body, secrets redacted as they were stored. Answers come at
/// once: recorded durations are not waited for.
///
/// As a terminal it validates requests as ``URLSessionLoader`` does (``HTTPError/Code/invalidRequest`` before
/// anything is matched), completes cancelled loads with ``HTTPError/Code/cancelled`` without using an entry, and
/// takes part in a reset like ``MockLoader``: it refuses loads with ``HTTPError/Code/resetInProgress`` while one
/// runs, except a loader's own reset traffic (a logout's token revocation), which it answers from the cassette. A
/// reset does not rewind the cassette: what came after a logout was recorded after it; call ``rewind()`` to
/// start over.
// Safety: configuration is immutable (`let`); which entries were used is behind one lock (`Locked`).
public final class ReplayLoader: HTTPLoader, @unchecked Sendable {
    /// How a request is compared with the recorded ones. Everything compared is in recorded form: the cassette's
    /// redaction applied, the fragment left out.
    public struct Matching: Sendable, Hashable {
        /// How URLs are compared: ``exact``, ``ignoringQueryOrder`` or ``ignoringQuery``.
        ///
        /// A struct rather than an enum, so that more comparisons can be added without breaking code that switches
        /// over these.
        public struct URLComparison: Sendable, Hashable, CustomStringConvertible {
            enum Code: Sendable, Hashable {
                case exact, ignoringQueryOrder, ignoringQuery
            }

            let code: Code

            /// Character for character (scheme and host ignoring case).
            public static let exact = URLComparison(code: .exact)
            /// The same, but the query items in any order: `?a=1&b=2` matches `?b=2&a=1`.
            public static let ignoringQueryOrder = URLComparison(code: .ignoringQueryOrder)
            /// Without the query: for requests whose query carries a timestamp or a nonce.
            public static let ignoringQuery = URLComparison(code: .ignoringQuery)

            /// What the loader's description says: `url`, `url (any query order)` or `url (no query)`.
            public var description: String {
                switch code {
                case .exact: "url"
                case .ignoringQueryOrder: "url (any query order)"
                case .ignoringQuery: "url (no query)"
                }
            }
        }

        /// Whether the methods must be the same.
        public var method: Bool
        /// How the URLs are compared.
        public var url: URLComparison
        /// Whether the bodies must be the same: JSON bodies by value (member order aside), other bodies by content.
        public var body: Bool
        /// Header fields whose values must be the same (names ignore case); none by default.
        public var headerFields: [String]

        public init(
            method: Bool = true, url: URLComparison = .ignoringQueryOrder, body: Bool = true,
            headerFields: [String] = []
        ) {
            self.method = method
            self.url = url
            self.body = body
            self.headerFields = headerFields
        }

        /// Method, URL with the query items in any order, and body.
        public static let standard = Matching()
    }

    /// Which recorded entry answers a request when several match it.
    @frozen
    public enum Order: Sendable, Hashable {
        /// Each entry answers once; a request gets the first unused entry that matches it, in recorded order. So
        /// concurrent requests may arrive in any order, and repeated identical requests get their recorded answers
        /// in the order they were recorded.
        case inAnyOrder
        /// Each entry answers once, in recorded order: a request must match the next unused entry, or it fails
        /// (and the entry stays unused). For sequential tests that check the exact sequence of calls.
        case inRecordedOrder
        /// As ``inAnyOrder``, but once every matching entry has been used the last of them answers again: for
        /// polling, and for tests that send a request more often than it was recorded.
        case repeatingLast
    }

    /// The recorded traffic.
    public let cassette: Cassette
    /// How requests are compared with the recorded ones.
    public let matching: Matching
    /// Which entry answers when several match.
    public let order: Order
    /// Each entry's request in compared form, computed once.
    private let keys: [RequestKey]
    /// The entries of each compared form, in recorded order.
    private let entriesByKey: [RequestKey: [Int]]

    private struct State {
        var used: [Bool]
    }

    private let state: Locked<State>

    /// A loader that answers from `cassette`.
    ///
    /// - Parameters:
    ///   - cassette: The recorded traffic.
    ///   - matching: How requests are compared; method, URL (query items in any order) and body by default.
    ///   - order: Which entry answers when several match; each once, first unused first, by default.
    public init(cassette: Cassette, matching: Matching = .standard, order: Order = .inAnyOrder) {
        self.cassette = cassette
        self.matching = matching
        self.order = order
        let keys = cassette.entries.map { RequestKey($0.request, matching: matching) }
        self.keys = keys
        self.entriesByKey = Dictionary(grouping: keys.indices, by: { keys[$0] })
        self.state = Locked(State(used: Array(repeating: false, count: cassette.entries.count)))
    }

    /// A loader that answers from the cassette saved in `file`.
    ///
    /// - Throws: ``CassetteError`` naming the file and what is wrong with it.
    public convenience init(
        contentsOf file: URL, matching: Matching = .standard, order: Order = .inAnyOrder
    ) throws(CassetteError) {
        self.init(cassette: try Cassette(contentsOf: file), matching: matching, order: order)
    }

    /// The entries that have not answered a request yet, in recorded order.
    public var unusedEntries: [Cassette.Entry] {
        let used = state.withLock { $0.used }
        return zip(cassette.entries, used).filter { !$0.1 }.map(\.0)
    }

    /// Makes every entry unused again, to replay the cassette from the start.
    public func rewind() {
        state.withLock { $0.used = Array(repeating: false, count: $0.used.count) }
    }

    /// The number of entries, how many are used, the matching and the order.
    public override var configurationDescription: String {
        let used = state.withLock { $0.used.count(where: { $0 }) }
        var compared: [String] = []
        if matching.method { compared.append("method") }
        compared.append(matching.url.description)
        if matching.body { compared.append("body") }
        compared += matching.headerFields
        return "entries: \(cassette.entries.count), used: \(used), matching: \(compared.joined(separator: " ")), "
            + "order: \(order)"
    }

    private enum Decision {
        case answer(Int)
        case refused
        case unmatched
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        if Task.isCancelled { return .failure(HTTPError(.cancelled, request: request)) }
        do throws(HTTPError) {
            try request.validate()
        } catch {
            return .failure(error)
        }
        let recorded = Cassette.Request(recording: request, redaction: cassette.redaction)
        let key = RequestKey(recorded, matching: matching)
        let decision = state.withLock { state -> Decision in
            if isResetting, !request.isPartOfReset { return .refused }
            guard let index = choose(key, used: state.used) else { return .unmatched }
            state.used[index] = true
            return .answer(index)
        }
        switch decision {
        case .answer(let index):
            return result(of: index, answering: request)
        case .refused:
            return .failure(resetRefusal(of: request))
        case .unmatched:
            return .failure(unmatched(request, recorded: recorded, key: key))
        }
    }

    /// The entry that answers `key`, given which are used, as ``order`` says.
    private func choose(_ key: RequestKey, used: [Bool]) -> Int? {
        let matches = entriesByKey[key] ?? []
        switch order {
        case .inAnyOrder:
            return matches.first { !used[$0] }
        case .inRecordedOrder:
            guard let next = used.firstIndex(of: false), keys[next] == key else { return nil }
            return next
        case .repeatingLast:
            return matches.first { !used[$0] } ?? matches.last
        }
    }

    /// The recorded result of entry `index`, as an answer to `request`.
    private func result(of index: Int, answering request: HTTPRequest) -> HTTPResult {
        let entry = cassette.entries[index]
        let response = entry.response?.response(answering: request)
        if let failure = entry.failure {
            return .failure(HTTPError(failure.code, request: request, message: failure.message, response: response))
        }
        guard let response else {
            return .failure(
                HTTPError(
                    .invalidResponse, request: request,
                    message: "the cassette's entries[\(index)] has neither a response nor a failure"))
        }
        return .success(response)
    }

    /// The failure of a request no entry answers: the closest recorded requests, and how each differs.
    private func unmatched(_ request: HTTPRequest, recorded: Cassette.Request, key: RequestKey) -> HTTPError {
        let used = state.withLock { $0.used }
        let unusedCount = used.count(where: { !$0 })
        var message = "ReplayLoader has no recorded answer for this request"
        if order == .inRecordedOrder, let next = used.firstIndex(of: false) {
            let differences = keys[next].differences(from: key, matching: matching)
            message += "; the next recorded one is entries[\(next)] \(Self.summary(of: cassette.entries[next].request))"
            message += " (differs in \(differences.joined(separator: ", ")))"
        } else {
            let nearest = keys.indices
                .map { (index: $0, differences: keys[$0].differences(from: key, matching: matching)) }
                .sorted { lhs, rhs in
                    if lhs.differences.count != rhs.differences.count {
                        return lhs.differences.count < rhs.differences.count
                    }
                    if used[lhs.index] != used[rhs.index] { return !used[lhs.index] }
                    return lhs.index < rhs.index
                }
                .prefix(3)
            if nearest.isEmpty {
                message += "; the cassette is empty"
            } else {
                let described = nearest.map { candidate in
                    let entry = cassette.entries[candidate.index]
                    var notes: [String] = []
                    if !candidate.differences.isEmpty {
                        notes.append("differs in \(candidate.differences.joined(separator: ", "))")
                    }
                    if used[candidate.index] { notes.append("already used") }
                    return
                        "entries[\(candidate.index)] \(Self.summary(of: entry.request)) (\(notes.joined(separator: "; ")))"
                }
                message += "; nearest recorded: " + described.joined(separator: ", ")
            }
        }
        if matching.body, let body = recorded.body {
            message += "; its body: \(Self.excerpt(of: body))"
        }
        message += "; \(unusedCount) of \(cassette.entries.count) entries unused"
        return HTTPError(.notRecorded, request: request, message: message)
    }

    private static func summary(of request: Cassette.Request) -> String {
        var text = "\(request.method) \(request.url)"
        if let body = request.body { text += " with body \(excerpt(of: body))" }
        return text
    }

    private static func excerpt(of body: Cassette.Body) -> String {
        switch body {
        case .text(let text):
            let limit = 80
            return text.count <= limit ? text : String(text.prefix(limit)) + "…"
        case .binary(let data):
            return "\(data.count) bytes"
        }
    }

}

/// A request reduced to what ``ReplayLoader/Matching`` compares.
struct RequestKey: Hashable {
    var method: String?
    var url: String
    var body: Data?
    var headers: [String?]

    init(_ request: Cassette.Request, matching: ReplayLoader.Matching) {
        method = matching.method ? request.method.rawValue : nil
        url = Self.normalize(request.url, matching.url)
        body = matching.body ? request.body.map(Self.canonical) : nil
        headers = matching.headerFields.map { request.headers[$0] }
    }

    /// What differs between this key and `other`: "method", "URL", "body", or header field names.
    func differences(from other: RequestKey, matching: ReplayLoader.Matching) -> [String] {
        var differences: [String] = []
        if method != other.method { differences.append("method") }
        if url != other.url { differences.append("URL") }
        if body != other.body { differences.append("body") }
        for (index, name) in matching.headerFields.enumerated() where headers[index] != other.headers[index] {
            differences.append(name)
        }
        return differences
    }

    /// The URL with scheme and host lowercased, and the query sorted or dropped as asked.
    static func normalize(_ url: String, _ comparison: ReplayLoader.Matching.URLComparison) -> String {
        var url = url
        if let fragment = url.firstIndex(of: "#") { url = String(url[..<fragment]) }
        var base = Substring(url)
        var query: Substring?
        if let mark = url.firstIndex(of: "?") {
            base = url[..<mark]
            query = url[url.index(after: mark)...]
        }
        var normalized = lowercasingOrigin(base)
        switch (comparison.code, query) {
        case (_, nil), (.ignoringQuery, _):
            break
        case (.exact, let query?):
            normalized += "?" + query
        case (.ignoringQueryOrder, let query?):
            normalized +=
                "?" + query.split(separator: "&", omittingEmptySubsequences: false).sorted().joined(separator: "&")
        }
        return normalized
    }

    /// `scheme://host:port` lowercased, the rest as it is.
    private static func lowercasingOrigin(_ url: Substring) -> String {
        guard let schemeEnd = url.range(of: "://") else { return String(url) }
        let authorityStart = schemeEnd.upperBound
        let pathStart = url[authorityStart...].firstIndex(of: "/") ?? url.endIndex
        return url[..<pathStart].lowercased() + url[pathStart...]
    }

    /// JSON by value (members sorted), anything else as it is.
    static func canonical(_ body: Cassette.Body) -> Data {
        let data = body.data
        guard case .text(let text) = body, let first = text.first(where: { !$0.isWhitespace }),
            first == "{" || first == "[",
            let object = try? JSONSerialization.jsonObject(with: data),
            JSONSerialization.isValidJSONObject(object),
            let sorted = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        else { return data }
        return sorted
    }
}

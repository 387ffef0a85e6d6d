import Foundation
import HTTP
import HTTPConnection
import Testing

/// Random requests and responses with secrets planted under the standard redaction's names — in query items,
/// header fields, form, JSON and multipart bodies, URLs in header fields and error messages — rendered by every
/// sink: `PrintLoader` lines, cURL commands, and the descriptions of requests, responses, `HTTPError`,
/// `ResponseError` and `ServerError`.
@Suite(.noHang) struct RedactionAcrossSinksTests {
    @Test func plantedSecretsNeverAppearAndOtherValuesDo() async throws {
        // REDACTION_SEED=<seed> replays a run.
        let seed =
            ProcessInfo.processInfo.environment["REDACTION_SEED"].flatMap(UInt64.init) ?? .random(in: 0...UInt64.max)
        print("RedactionAcrossSinksTests.plantedSecretsNeverAppearAndOtherValuesDo seed \(seed)")
        var random = SplitMix64(seed: seed)
        for round in 0..<200 {
            var plant = Planter(random: random)
            let exchange = plant.exchange()
            random = plant.random
            let context = "seed \(seed), round \(round)"

            let printed = LinesBox()
            let logger =
                PrintLoader(includesHeaders: true, sink: printed.append)
                --> MockLoader().then { _ in .success(exchange.response) }
                .then { request in
                    .failure(
                        HTTPError(
                            .cannotConnect, request: request, message: exchange.failureMessage,
                            response: exchange.response))
                }
            _ = await logger.load(exchange.request)
            _ = await logger.load(exchange.request)
            let lines = printed.lines
            try #require(lines.count == 4, "\(context)")

            let httpError = HTTPError(
                .invalidResponse, request: exchange.request, message: exchange.failureMessage,
                response: exchange.response)
            let sinks: [(String, String)] = [
                ("PrintLoader", lines.joined(separator: "\n")),
                ("cURL", exchange.request.cURLCommand()),
                ("HTTPRequest.description", exchange.request.description),
                ("HTTPResponse.description", exchange.response.description),
                ("HTTPError.description", httpError.description),
                (
                    "ResponseError.description",
                    ResponseError(kind: .undecodable, response: exchange.response, expectedType: Int.self).description
                ),
                (
                    "ServerError.description",
                    ServerError(body: exchange.serverErrorBody, response: exchange.response).description
                ),
            ]
            let reflected: [(Any, String)] = [
                (exchange.request, "HTTPRequest"), (exchange.response, "HTTPResponse"), (httpError, "HTTPError"),
                (exchange.request.headers, "HTTPRequest.headers"), (exchange.response.headers, "HTTPResponse.headers"),
                (HTTPResult.failure(httpError), "HTTPResult"),
            ]
            let views = reflected.flatMap { Reflected.views(of: $0.0, named: $0.1) }
            for (sink, text) in sinks + views {
                let searched = SearchedText(text)
                for secret in plant.secrets where secret.isShown(in: searched) {
                    Issue.record("\(context): \(sink) shows \(secret.value):\n\(text)")
                }
            }

            // What is not secret stays visible where it was put.
            let requestLine = lines[0]
            let curl = exchange.request.cURLCommand()
            for value in exchange.visibleQueryValues {
                for text in [requestLine, lines[2], curl, exchange.request.description, httpError.description] {
                    #expect(text.contains(value), "\(context): \(value) missing from\n\(text)")
                }
            }
            for value in exchange.visibleRequestHeaderValues {
                #expect(requestLine.contains(value), "\(context): \(value) missing from\n\(requestLine)")
                #expect(curl.contains(value), "\(context): \(value) missing from\n\(curl)")
            }
            for value in exchange.visibleRequestBodyValues {
                #expect(curl.contains(value), "\(context): \(value) missing from\n\(curl)")
            }
            for value in exchange.visibleResponseHeaderValues {
                #expect(lines[1].contains(value), "\(context): \(value) missing from\n\(lines[1])")
            }
            let excerpt = ResponseError(kind: .unacceptableStatus, response: exchange.response, expectedType: Int.self)
                .description
            for value in exchange.visibleResponseBodyValues {
                #expect(excerpt.contains(value), "\(context): \(value) missing from\n\(excerpt)")
            }
            let serverError = ServerError(body: exchange.serverErrorBody, response: exchange.response).description
            for value in exchange.serverErrorBody.values where !plant.secrets.contains(where: { $0.value == value }) {
                #expect(serverError.contains(value), "\(context): \(value) missing from\n\(serverError)")
            }

            // The reflected views hide only what is secret: they still show what a debugging user needs.
            let dumpedRequest = Reflected.dumped(exchange.request)
            let dumpedResponse = Reflected.dumped(exchange.response)
            let walkedError = Reflected.walked(httpError)
            for value in exchange.visibleQueryValues + exchange.visibleRequestHeaderValues {
                #expect(dumpedRequest.contains(value), "\(context): \(value) missing from\n\(dumpedRequest)")
                #expect(walkedError.contains(value), "\(context): \(value) missing from\n\(walkedError)")
            }
            for value in exchange.visibleResponseHeaderValues {
                #expect(dumpedResponse.contains(value), "\(context): \(value) missing from\n\(dumpedResponse)")
            }

            // With `.none`, a cURL command sends every secret the request carries.
            let real = exchange.request.cURLCommand(redaction: .none)
            for secret in plant.requestSecrets {
                #expect(real.contains(secret.value), "\(context): \(secret.value) missing from\n\(real)")
            }
        }
    }
}

/// The views of a value that reflection gives: `dump`, a walk through its `Mirror` and every child's at any depth
/// (what debuggers and crash reporters read), and `debugDescription` (`String(reflecting:)`, which `po` prints).
private enum Reflected {
    static func views(of value: Any, named name: String) -> [(String, String)] {
        [
            ("dump(\(name))", dumped(value)), ("Mirror(\(name))", walked(value)),
            ("String(reflecting: \(name))", String(reflecting: value)),
        ]
    }

    static func dumped(_ value: Any) -> String {
        var text = ""
        dump(value, to: &text, maxDepth: 20)
        return text
    }

    /// Each node's label and `String(describing:)`, children first visited at any depth.
    static func walked(_ value: Any, depth: Int = 0) -> String {
        guard depth < 20 else { return "" }
        var text = String(describing: value) + "\n"
        for child in Mirror(reflecting: value).children {
            text += (child.label ?? "-") + ": " + walked(child.value, depth: depth + 1)
        }
        return text
    }
}

/// A request and its response, and what was planted in them.
private struct Exchange {
    var request: HTTPRequest
    var response: HTTPResponse
    var failureMessage: String
    var serverErrorBody: [String: String]
    var visibleQueryValues: [String] = []
    var visibleRequestHeaderValues: [String] = []
    var visibleRequestBodyValues: [String] = []
    var visibleResponseHeaderValues: [String] = []
    var visibleResponseBodyValues: [String] = []
}

/// A planted secret.
private struct Secret {
    var value: String
    /// Whether six characters of it in a row count as showing it (a secret cut short). Its letters are
    /// uppercase consonants, which nothing else the sinks write has six of in a row.
    var isWord: Bool

    /// Whether `text` shows this secret.
    func isShown(in text: SearchedText) -> Bool {
        guard isWord, value.count > 6 else { return text.text.contains(value) }
        return (0...(value.count - 6)).contains {
            text.sixLetterPieces.contains(Substring(value.dropFirst($0).prefix(6)))
        }
    }
}

/// Text to search for secrets, with every six-letter piece of its runs of uppercase letters at hand.
private struct SearchedText {
    let text: String
    let sixLetterPieces: Set<Substring>

    init(_ text: String) {
        self.text = text
        var pieces = Set<Substring>()
        var runStart = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            let isUppercase = text[index].isASCII && text[index].isUppercase
            let next = text.index(after: index)
            if !isUppercase || next == text.endIndex {
                let runEnd = isUppercase ? next : index
                var start = runStart
                while let end = text.index(start, offsetBy: 6, limitedBy: runEnd) {
                    pieces.insert(text[start..<end])
                    start = text.index(after: start)
                }
                runStart = next
            }
            index = next
        }
        sixLetterPieces = pieces
    }
}

/// Makes random exchanges and remembers the secrets it planted.
private struct Planter {
    var random: SplitMix64
    var secrets: [Secret] = []
    /// The secrets the request carries.
    var requestSecrets: [Secret] = []

    /// Names the standard redaction hides, as OAuth and common APIs spell them, and names built around its
    /// fragments.
    static let secretNames = [
        "access_token", "refresh_token", "id_token", "token", "code", "code_verifier", "client_secret",
        "client_assertion", "assertion", "password", "id_token_hint", "device_code", "api_key", "Authorization",
        "Cookie", "Set-Cookie", "Proxy-Authorization", "sig", "key",
    ]
    static let fragments = ["token", "secret", "password", "passwd", "apikey", "privatekey", "signature", "sessionid"]
    /// Names nothing hides.
    static let visibleNames = [
        "page", "lang", "scope", "state", "client_id", "grant_type", "redirect_uri", "name", "limit", "sort", "region",
        "format", "expires_in",
    ]

    /// Consonants only, so that no value spells a word of the surrounding text.
    private static let letters = Array("bcdfghjklmnpqrstvwxz")

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &random)! }

    mutating func word(_ count: Int) -> String {
        String((0..<count).map { _ in Self.letters.randomElement(using: &random)! })
    }

    /// A secret name, in one of the spellings an API might use.
    mutating func secretName() -> String {
        var name =
            chance(70)
            ? pick(Self.secretNames)
            : pick(["", "x_", "user_", "X-"]) + pick(Self.fragments) + pick(["", "_value", "-id", "s"])
        switch Int.random(in: 0..<4, using: &random) {
        case 0: name = name.uppercased()
        case 1:
            // camelCase
            let parts = name.split { $0 == "_" || $0 == "-" }
            name = parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.capitalized }.joined()
        case 2: name = name.replacingOccurrences(of: "_", with: "-")
        default: break
        }
        return name
    }

    mutating func visibleName() -> String { pick(Self.visibleNames) }

    /// A new secret value, remembered.
    mutating func secret() -> String {
        let value = "S" + word(15).uppercased()
        secrets.append(Secret(value: value, isWord: true))
        return value
    }

    mutating func visibleValue() -> String { "v" + word(10) }

    /// 1–4 pairs, each secret or visible.
    mutating func pairs() -> (pairs: [(String, String)], visible: [String]) {
        var pairs: [(String, String)] = []
        var visible: [String] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            if chance(50) {
                pairs.append((secretName(), secret()))
            } else {
                let value = visibleValue()
                pairs.append((visibleName(), value))
                visible.append(value)
            }
        }
        return (pairs, visible)
    }

    /// A JSON value holding `pairs`, some of them nested; secrets are sometimes numbers, arrays or objects.
    mutating func json(_ pairs: [(String, String)]) -> JSONValue {
        var members: [(String, JSONValue)] = []
        // A name used twice would keep only its last value; each repeated one gets an object of its own.
        func add(_ name: String, _ value: JSONValue) {
            if members.contains(where: { $0.0 == name }) {
                members.append(("group\(members.count)", .object([(name, value)])))
            } else {
                members.append((name, value))
            }
        }
        for (name, value) in pairs {
            let isSecret = secrets.contains { $0.value == value }
            var leaf: JSONValue = .string(value)
            if isSecret, chance(30) {
                leaf = pick([
                    .array([.string(value), .number(Int64.random(in: 1...9, using: &random))]),
                    .object([("v", .string(value))]),
                ])
            }
            if chance(30) {
                add(pick(["data", "user", "meta"]), .object([(name, leaf)]))
            } else if chance(15) {
                add(pick(["items", "list"]), .array([.object([(name, leaf)])]))
            } else {
                add(name, leaf)
            }
        }
        if chance(30) {
            let number = Int64.random(in: 100_000_000_000_000...999_999_999_999_999, using: &random)
            secrets.append(Secret(value: String(number), isWord: false))
            add(secretName(), .number(number))
        }
        return .object(members)
    }

    mutating func exchange() -> Exchange {
        // The request: query items, header fields, a body.
        let query = pairs()
        let requestHeaders = pairs()
        var request = HTTPRequest(
            host: "api.example.com", path: pick(["/", "/v1/people", "/oauth/token"]),
            query: query.pairs.map { URLQueryItem(name: $0.0, value: $0.1) },
            headers: HTTPHeaders(requestHeaders.pairs.map { HTTPHeaders.Field(name: $0.0, value: $0.1) }))
        var visibleBody: [String] = []
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            let form = pairs()
            request.body = FormBody(form.pairs.map { URLQueryItem(name: $0.0, value: $0.1) })
            visibleBody = form.visible
        case 1:
            let fields = pairs()
            request.body = JSONBody(json(fields.pairs))
            visibleBody = fields.visible
        case 2:
            let fields = pairs()
            var form = MultipartFormBody(boundary: "B" + word(8))
            for (name, value) in fields.pairs { form.addField(named: name, value: value) }
            request.body = form
            visibleBody = fields.visible
        default:
            break
        }
        if !request.body.isEmpty { request.method = .post }
        requestSecrets = secrets

        // The response: header fields (one a URL with a query), a body, perhaps the URL it came from.
        let responseHeaders = pairs()
        var headers = HTTPHeaders(responseHeaders.pairs.map { HTTPHeaders.Field(name: $0.0, value: $0.1) })
        let location = pairs()
        let locationQuery = location.pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        headers.add("https://app.example.com/cb?" + locationQuery, for: "Location")
        let body = pairs()
        var bodyText: String
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let encoder = JSONEncoder()
            if chance(50) { encoder.outputFormatting = .prettyPrinted }
            bodyText = String(decoding: (try? encoder.encode(json(body.pairs))) ?? Data(), as: UTF8.self)
            if chance(70) { headers["Content-Type"] = "application/json" }
        case 1:
            bodyText = body.pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        default:
            bodyText =
                "error: see " + "https://app.example.com/help?"
                + body.pairs.map { "\($0.0)=\($0.1)" }
                .joined(separator: "&")
        }
        let redirectedFrom = chance(50) ? URL(string: "https://other.example.com/cb?\(secretName())=\(secret())") : nil
        let response = HTTPResponse(
            request: request, status: pick([.ok, .found, .badRequest, .unauthorized, .internalServerError]),
            headers: headers, body: Data(bodyText.utf8), url: redirectedFrom)

        let messagePairs = pairs()
        let failureMessage =
            "could not reach 'https://app.example.com/x?"
            + messagePairs.pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&") + "'"
        let serverError = pairs()
        var serverErrorBody: [String: String] = [:]
        for (name, value) in serverError.pairs { serverErrorBody[name] = value }

        var exchange = Exchange(
            request: request, response: response, failureMessage: failureMessage, serverErrorBody: serverErrorBody)
        exchange.visibleQueryValues = query.visible
        exchange.visibleRequestHeaderValues = requestHeaders.visible
        exchange.visibleRequestBodyValues = visibleBody
        exchange.visibleResponseHeaderValues = responseHeaders.visible + location.visible
        // The excerpt shows 200 characters: a value is expected there only when the whole body fits.
        if bodyText.count < 150 { exchange.visibleResponseBodyValues = body.visible }
        return exchange
    }
}

/// A JSON value whose members keep their order.
private indirect enum JSONValue: Encodable, Sendable {
    case string(String)
    case number(Int64)
    case array([JSONValue])
    case object([(String, JSONValue)])

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .object(let members):
            var container = encoder.container(keyedBy: Key.self)
            for (name, value) in members { try container.encode(value, forKey: Key(stringValue: name)) }
        }
    }
}

/// Collects the lines a `PrintLoader` writes.
private final class LinesBox: Sendable {
    private let box = Box<[String]>([])
    var lines: [String] { box.value }
    var append: @Sendable (String) -> Void { { [box] line in box.withLock { $0.append(line) } } }
}

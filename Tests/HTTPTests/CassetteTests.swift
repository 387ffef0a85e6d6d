import Foundation
import Testing

@testable import HTTP

@Suite(.noHang) struct CassetteTests {
    static let entry = Cassette.Entry(
        sequence: 0, loadID: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!, attempt: 2,
        startedAt: Date(timeIntervalSince1970: 1_800_000_000.125), duration: .milliseconds(42),
        request: Cassette.Request(
            method: .post, url: "https://api.example.com/v1/people?page=2",
            headers: ["Content-Type": "application/json"],
            body: .text(#"{"name":"Zoë"}"#)),
        response: Cassette.Response(
            status: .created, headers: ["Location": "/v1/people/7"], body: .binary(Data([0, 255]))),
        failure: nil)

    static func json(_ entries: String, version: Int = 1) -> Data {
        Data(
            #"{"version": \#(version), "redaction": {"names": ["authorization"], "namesContaining": ["token"]}, "entries": \#(entries)}"#
                .utf8)
    }

    static func entryJSON(replacing key: String? = nil, with value: String? = nil) -> String {
        var fields = [
            "sequence": "0", "load": #""6F9619FF-8B86-D011-B42D-00C04FC964FF""#, "attempt": "1",
            "startedAt": #""2027-01-15T08:00:00.125Z""#, "duration": "0.042",
            "request": #"{"method": "GET", "url": "https://api.example.com/"}"#,
            "response": #"{"status": 200}"#,
        ]
        if let key { fields[key] = value }
        return "{" + fields.map { #""\#($0.key)": \#($0.value)"# }.joined(separator: ", ") + "}"
    }

    @Test func aCassetteSurvivesItsJSONForm() throws {
        let cassette = Cassette(redaction: .standard.adding("X-Session"), entries: [Self.entry])
        let data = try cassette.jsonData()
        #expect(try Cassette(jsonData: data) == cassette)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""startedAt" : "2027-01-15T08:00:00.125Z""#))
        #expect(text.contains(#""duration" : 0.042"#))
        #expect(text.contains(#""url" : "https://api.example.com/v1/people?page=2""#))  // slashes not escaped
        #expect(text.contains(#""base64" : "AP8=""#))
        #expect(text.contains(#""text" : "{\"name\":\"Zoë\"}""#))
        #expect(text.contains(#""x-session""#))
    }

    @Test func readsAFileItWrote() throws {
        let directory = TemporaryDirectory()
        let file = directory.file("cassette.json")
        let cassette = Cassette(entries: [Self.entry])
        try cassette.write(to: file)
        #expect(try Cassette(contentsOf: file) == cassette)
    }

    @Test func entriesHoldTimesAtThePrecisionOfTheFile() {
        let entry = Cassette.Entry(
            sequence: 0, startedAt: Date(timeIntervalSince1970: 1_800_000_000.123_456),
            duration: .nanoseconds(1_234_567),
            request: Cassette.Request(url: "https://api.example.com/"), response: Cassette.Response())
        #expect(entry.startedAt == Date(timeIntervalSince1970: 1_800_000_000.123))
        #expect(entry.duration == .microseconds(1_235))
        #expect(CassetteDate.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(CassetteDate.parse("1969-12-31T23:59:59.500Z") == Date(timeIntervalSince1970: -0.5))
        #expect(CassetteDate.parse("2027-01-15T08:00:00Z") == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(CassetteDate.parse("2027-01-15T08:00:00.1239Z") == Date(timeIntervalSince1970: 1_800_000_000.124))
        #expect(CassetteDate.format(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")
        for extreme in [
            Date.distantPast, .distantFuture, Date(timeIntervalSince1970: 1e300), Date(timeIntervalSince1970: -1e300),
        ] {
            let text = CassetteDate.format(extreme)  // never traps
            #expect(text.hasSuffix("Z"), "\(text)")
        }
        #expect(CassetteDate.format(.distantFuture) == "4001-01-01T00:00:00.000Z")
    }

    @Test(arguments: [
        ("not json", "it is not valid JSON"),
        (
            #"{"version": 2, "redaction": {"names": [], "namesContaining": []}, "entries": []}"#,
            "format version 2 is not supported"
        ),
        (#"{"version": 1, "entries": []}"#, "redaction: missing"),
        (#"[]"#, "the top level: expected an object"),
    ])
    func aMalformedCassetteIsAClearError(json: String, message: String) {
        let error = #expect(throws: CassetteError.self) { try Cassette(jsonData: Data(json.utf8)) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test(arguments: [
        ("sequence", #""first""#, "entries[0].sequence: expected a number"),
        ("load", #""not-a-uuid""#, "entries[0].load:"),
        ("startedAt", #""yesterday""#, "entries[0].startedAt: 'yesterday' is not an ISO 8601 date"),
        ("duration", "-1", "entries[0].duration: -1.0 is not a duration in seconds between 0 and a century"),
        ("duration", "1e300", "entries[0].duration:"),
        ("request", nil, "entries[0].request: missing"),
        ("request", #"{"url": "https://api.example.com/"}"#, "entries[0].request.method: missing"),
        ("response", nil, "entries[0].response: an entry needs a response, a failure or both"),
        ("response", #"{"status": "OK"}"#, "entries[0].response.status: expected a number"),
        (
            "response", #"{"status": 200, "body": {"base64": "***"}}"#,
            "entries[0].response.body.base64: not valid base64"
        ),
        ("response", #"{"status": 200, "body": {}}"#, "entries[0].response.body: a body needs `text` or `base64`"),
        ("response", #"{"status": 200, "headers": [{"name": "A"}]}"#, "entries[0].response.headers[0].value: missing"),
    ])
    func aMalformedEntryIsAClearErrorNamingItsPath(key: String, value: String?, message: String) {
        let data = Self.json("[" + Self.entryJSON(replacing: key, with: value) + "]")
        let error = #expect(throws: CassetteError.self) { try Cassette(jsonData: data) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test func aFailureWithoutAResponseIsAnEntry() throws {
        let data = Self.json(
            "[" + Self.entryJSON(replacing: "response", with: nil).dropLast()
                + #", "failure": {"code": "timedOut", "message": "slow"}}]"#)
        let cassette = try Cassette(jsonData: data)
        #expect(cassette.entries.first?.failure == Cassette.Failure(code: .timedOut, message: "slow"))
        #expect(cassette.redaction == Redaction(names: ["Authorization"], namesContaining: ["token"]))
    }

    @Test func aMissingOrUnreadableFileIsAClearErrorNamingIt() throws {
        let directory = TemporaryDirectory()
        let missing = directory.file("missing.json")
        let error = #expect(throws: CassetteError.self) { try Cassette(contentsOf: missing) }
        #expect(error?.file == missing)
        #expect(
            error?.description.hasPrefix("the cassette \(missing.path) cannot be used: the file cannot be read") == true
        )

        let broken = directory.file("broken.json")
        try Data("{".utf8).write(to: broken)
        let parseError = #expect(throws: CassetteError.self) { try Cassette(contentsOf: broken) }
        #expect(parseError?.description == "the cassette \(broken.path) cannot be used: it is not valid JSON")
    }

    /// Cut or corrupted files — a crash while copying, a bad merge — never trap: each is a cassette or an error.
    @Test func randomlyDamagedCassettesNeverTrap() throws {
        let seed = SplitMix64.seed()
        var random = SplitMix64(seed: seed)
        print("CassetteTests.randomlyDamagedCassettesNeverTrap: seed \(seed)")
        let original = Array(try Cassette(entries: [Self.entry, Self.entry]).jsonData())
        let alphabet = Array(#"{}[]":,0123456789.eE+-truefalsnl\ "#.utf8) + [0x00, 0xFF, 0xC3]
        var decoded = 0
        for _ in 0..<2_000 {
            var bytes = original
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            case 1:
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = alphabet.randomElement(using: &random)!
                }
            default:
                let start = Int.random(in: 0..<bytes.count, using: &random)
                let end = min(bytes.count, start + Int.random(in: 1...40, using: &random))
                bytes.removeSubrange(start..<end)
            }
            let cassette: Cassette
            do throws(CassetteError) {
                cassette = try Cassette(jsonData: Data(bytes))
            } catch {
                #expect(!error.message.isEmpty, "seed \(seed)")
                continue
            }
            decoded += 1
            _ = ReplayLoader(cassette: cassette)
            _ = try cassette.harData()
        }
        print("CassetteTests.randomlyDamagedCassettesNeverTrap: \(decoded) of 2000 damaged files still decoded")
    }
}

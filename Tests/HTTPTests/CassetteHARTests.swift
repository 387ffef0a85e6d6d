import Foundation
import Testing

@testable import HTTP

/// The HAR export against the HAR 1.2 specification (http://www.softwareishard.com/blog/har-12-spec/): every
/// required field, with its type, at every level.
@Suite(.noHang) struct CassetteHARTests {
    static func cassette() async -> Cassette {
        let clock = TestNow()
        let recorder = Recorder(now: clock.now)
        let mock = MockLoader()
            .then { request in
                clock.advance(by: 0.0425)
                return .success(
                    HTTPResponse(
                        request: request, status: .ok,
                        headers: ["Content-Type": "application/json", "Set-Cookie": "session=abc"],
                        body: Data(#"{"name":"Zoë"}"#.utf8)))
            }
            .then(status: .found, headers: ["Location": "https://api.example.com/v1/people/7"])
            .then(status: .ok, headers: ["Content-Type": "image/png"], body: Data([0x89, 0x50, 0x4E, 0x47, 0xFF]))
            .then(failWith: .cannotConnect, message: "connection refused")
        let chain = recorder --> mock
        _ = await chain.load(
            HTTPRequest(
                url: URL(string: "https://api.example.com/v1/people?page=2&q=a+b&token=s3cret")!,
                headers: ["Authorization": "Bearer s3cret", "Accept": "application/json"]))
        _ = await chain.load(
            HTTPRequest(
                method: .post, url: URL(string: "https://api.example.com/v1/people")!,
                body: JSONBody(["name": "Zoë"])))
        _ = await chain.load(
            HTTPRequest(
                method: .put, url: URL(string: "https://api.example.com/v1/avatar")!,
                body: DataBody(Data([0xFF, 0x00]))))
        _ = await chain.load(HTTPRequest(url: URL(string: "http://127.0.0.1:1/")!))
        return recorder.cassette
    }

    static func har(_ cassette: Cassette) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: cassette.harData()) as? [String: Any])
    }

    static func object(_ value: Any?, _ path: String) throws -> [String: Any] {
        try #require(value as? [String: Any], "\(path) is not an object")
    }

    static func requireFields(_ object: [String: Any], _ fields: [String: @Sendable (Any) -> Bool], _ path: String) {
        for (name, hasType) in fields {
            guard let value = object[name] else {
                Issue.record("\(path).\(name) is missing")
                continue
            }
            #expect(hasType(value), "\(path).\(name) has the wrong type: \(value)")
        }
    }

    static let string: @Sendable (Any) -> Bool = { $0 is String }
    static let number: @Sendable (Any) -> Bool = { $0 is NSNumber }  // (the export writes no booleans)
    static let array: @Sendable (Any) -> Bool = { $0 is [Any] }
    static let object: @Sendable (Any) -> Bool = { $0 is [String: Any] }
    static let nameValues: @Sendable (Any) -> Bool = { value in
        (value as? [[String: Any]])?.allSatisfy { $0["name"] is String && $0["value"] is String } ?? false
    }

    @Test func everyRequiredFieldIsThereWithItsType() async throws {
        let har = try Self.har(await Self.cassette())
        let log = try Self.object(har["log"], "log")
        Self.requireFields(log, ["version": Self.string, "creator": Self.object, "entries": Self.array], "log")
        #expect(log["version"] as? String == "1.2")
        Self.requireFields(
            try Self.object(log["creator"], "creator"), ["name": Self.string, "version": Self.string], "creator")

        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 4)
        for (index, entry) in entries.enumerated() {
            let path = "entries[\(index)]"
            Self.requireFields(
                entry,
                [
                    "startedDateTime": Self.string, "time": Self.number, "request": Self.object,
                    "response": Self.object,
                    "cache": Self.object, "timings": Self.object,
                ], path)
            let started = try #require(entry["startedDateTime"] as? String)
            #expect(started.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(started)")

            let timings = try Self.object(entry["timings"], "\(path).timings")
            Self.requireFields(
                timings, ["send": Self.number, "wait": Self.number, "receive": Self.number], "\(path).timings")
            let phases = ["send", "wait", "receive"].compactMap { (timings[$0] as? NSNumber)?.doubleValue }
            #expect(phases.allSatisfy { $0 >= 0 })
            let time = try #require((entry["time"] as? NSNumber)?.doubleValue)
            #expect(abs(time - phases.reduce(0, +)) < 0.000_001, "\(path): time is the sum of the timings")

            let request = try Self.object(entry["request"], "\(path).request")
            Self.requireFields(
                request,
                [
                    "method": Self.string, "url": Self.string, "httpVersion": Self.string, "cookies": Self.array,
                    "headers": Self.nameValues, "queryString": Self.nameValues, "headersSize": Self.number,
                    "bodySize": Self.number,
                ], "\(path).request")
            let url = try #require(request["url"] as? String)
            #expect(URL(string: url)?.scheme != nil, "\(path).request.url is absolute: \(url)")
            if let postData = request["postData"] {
                Self.requireFields(
                    try Self.object(postData, "\(path).postData"), ["mimeType": Self.string, "text": Self.string],
                    "\(path).request.postData")
            }

            let response = try Self.object(entry["response"], "\(path).response")
            Self.requireFields(
                response,
                [
                    "status": Self.number, "statusText": Self.string, "httpVersion": Self.string, "cookies": Self.array,
                    "headers": Self.nameValues, "content": Self.object, "redirectURL": Self.string,
                    "headersSize": Self.number, "bodySize": Self.number,
                ], "\(path).response")
            Self.requireFields(
                try Self.object(response["content"], "\(path).content"),
                ["size": Self.number, "mimeType": Self.string],
                "\(path).response.content")
        }
    }

    @Test func entriesCarryTheRecordedExchange() async throws {
        let har = try Self.har(await Self.cassette())
        let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let first = entries[0]
        #expect(first["startedDateTime"] as? String == "2027-01-15T08:00:00.125Z")
        #expect((first["time"] as? NSNumber)?.doubleValue == 42.5)
        let request = try Self.object(first["request"], "request")
        // The redacted value is percent-encoded, so the URL stays a valid URI.
        #expect(request["url"] as? String == "https://api.example.com/v1/people?page=2&q=a+b&token=%3Credacted%3E")
        let query = try #require(request["queryString"] as? [[String: String]])
        #expect(
            query == [
                ["name": "page", "value": "2"], ["name": "q", "value": "a b"],
                ["name": "token", "value": "<redacted>"],
            ])
        let headers = try #require(request["headers"] as? [[String: String]])
        #expect(headers.contains(["name": "Authorization", "value": "Bearer <redacted>"]))
        #expect(request["bodySize"] as? Int == 0 && request["postData"] == nil)
        let response = try Self.object(first["response"], "response")
        #expect(response["status"] as? Int == 200 && response["statusText"] as? String == "OK")
        let content = try Self.object(response["content"], "content")
        #expect(content["text"] as? String == #"{"name":"Zoë"}"# && content["encoding"] == nil)
        #expect(content["mimeType"] as? String == "application/json" && content["size"] as? Int == 15)
        #expect(
            (response["headers"] as? [[String: String]])?.contains(["name": "Set-Cookie", "value": "<redacted>"])
                == true)
        #expect(first["_attempt"] as? Int == 1 && first["_loadID"] is String)

        let post = try Self.object(entries[1]["request"], "request")
        let postData = try Self.object(post["postData"], "postData")
        #expect(postData["mimeType"] as? String == "application/json; charset=utf-8")
        #expect(postData["text"] as? String == #"{"name":"Zoë"}"#)
        #expect(post["bodySize"] as? Int == 15)
        #expect(
            (entries[1]["response"] as? [String: Any])?["redirectURL"] as? String
                == "https://api.example.com/v1/people/7")

        let binary = try Self.object(entries[2]["response"], "response")
        let binaryContent = try Self.object(binary["content"], "content")
        #expect(binaryContent["encoding"] as? String == "base64" && binaryContent["text"] as? String == "iVBOR/8=")
        let upload = try Self.object(try Self.object(entries[2]["request"], "request")["postData"], "postData")
        #expect(upload["text"] as? String == "/wA=" && upload["_encoding"] as? String == "base64")

        let failed = try Self.object(entries[3]["response"], "response")
        #expect(failed["status"] as? Int == 0 && failed["statusText"] as? String == "")
        #expect(failed["_error"] as? String == "cannotConnect: connection refused")
        #expect((failed["content"] as? [String: Any])?["size"] as? Int == 0)
    }

    @Test func anEmptyCassetteIsAnEmptyLog() throws {
        let log = try #require(try Self.har(Cassette())["log"] as? [String: Any])
        #expect((log["entries"] as? [Any])?.isEmpty == true)
        #expect((log["creator"] as? [String: String])?["name"] == "HTTP")
        let named = try #require(try Self.har(Cassette())["log"] as? [String: Any])
        #expect(named["pages"] as? [Any] != nil)
        #expect(
            ((try JSONSerialization.jsonObject(with: Cassette().harData(creator: "MyApp tests")) as? [String: Any])?[
                "log"]
                as? [String: Any]).flatMap { ($0["creator"] as? [String: String])?["name"] } == "MyApp tests")
    }

    /// Writes the HAR of a recorded session to `HAR_EXPORT_PATH`, for checking it with other tools (a JSON Schema
    /// validator, a browser's developer tools).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HAR_EXPORT_PATH"] != nil))
    func exportForOtherTools() async throws {
        let path = try #require(ProcessInfo.processInfo.environment["HAR_EXPORT_PATH"])
        try await Self.cassette().harData().write(to: URL(fileURLWithPath: path))
    }
}

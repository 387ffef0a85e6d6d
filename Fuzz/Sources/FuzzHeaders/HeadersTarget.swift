import Foundation
import FuzzSupport
import HTTP

/// Header parsing: `HTTPHeaders` built from any fields and changed by any sequence of operations, checked against
/// a model (an array of pairs with ASCII case-insensitive names, as RFC 9110 compares them) after every step; then
/// an `HTTPResponse` carrying them, `Redaction` of each field, and `FollowRedirects` given the fields on a redirect.
enum HeadersTarget: FuzzTarget {
    enum Operation {
        case get(String)
        case set(String, String?)
        case add(String, String)
        case addContents([(name: String, value: String)])
        case remove(String)
        case values(String)
        case contains(String)
        case compare([(name: String, value: String)])
    }

    static let operationKinds = 8
    static let maximumOperations = 12

    static func run(_ input: inout FuzzInput) {
        let initial = RequestProgram.readFields(&input, upTo: 6)
        let operations = (0..<input.count(upTo: maximumOperations)).map { _ in readOperation(&input) }
        let status = input.int()
        let body = input.bytesField()
        let redirect = readRedirect(&input)

        var headers = makeHeaders(initial)
        var model = Model(fields: initial)
        model.expectEqual(headers, after: "HTTPHeaders(\(SwiftLiteral.fields(initial)))")
        for operation in operations {
            switch operation {
            case .get(let name):
                FuzzCheck.expect(
                    headers[name] == model[name],
                    "headers[\(SwiftLiteral.string(name))] is \(String(describing: headers[name])), the model says \(String(describing: model[name]))"
                )
            case .set(let name, let value):
                headers[name] = value
                model[name] = value
            case .add(let name, let value):
                headers.add(value, for: name)
                model.fields.append((name, value))
            case .addContents(let fields):
                headers.add(contentsOf: makeHeaders(fields))
                model.fields += fields
            case .remove(let name):
                headers.remove(name)
                model.remove(name)
            case .values(let name):
                FuzzCheck.expect(
                    headers.values(for: name) == model.values(for: name),
                    "values(for: \(SwiftLiteral.string(name))) differs from the model")
            case .contains(let name):
                FuzzCheck.expect(
                    headers.contains(name) == !model.values(for: name).isEmpty,
                    "contains(\(SwiftLiteral.string(name))) differs from the model")
            case .compare(let fields):
                let other = makeHeaders(fields)
                let modelEqual = model.fields.count == fields.count && zip(model.fields, fields).allSatisfy { $0 == $1 }
                FuzzCheck.expect((headers == other) == modelEqual, "== differs from comparing the fields in order")
                if headers == other {
                    FuzzCheck.expect(headers.hashValue == other.hashValue, "equal headers hash differently")
                }
            }
            model.expectEqual(headers, after: describe(operation))
        }
        _ = headers.description

        let response = HTTPResponse(
            request: HTTPRequest(), status: HTTPStatus(rawValue: status), headers: headers, body: Data(body))
        FuzzCheck.expect(response.headers == headers, "a response's headers differ from those it was made with")
        for field in headers {
            FuzzCheck.expect(
                response[header: field.name] == headers[field.name], "response[header:] differs from headers[]")
            checkRedaction(field)
        }
        _ = response.description
        _ = response.status.kind
        _ = response.status.reasonPhrase
        _ = response.status.description
        // Only fields with a Location: a load in a task costs more than everything above.
        if headers.contains("Location") { checkRedirect(with: headers, redirect) }
    }

    // MARK: - Redirects

    /// The redirect status the fields come with, and the method of the request redirected.
    struct Redirect {
        static let statuses = [301, 302, 303, 307, 308]
        static let methods: [HTTPMethod] = [.get, .head, .post, .put]
        var status: Int
        var method: HTTPMethod
    }

    static func readRedirect(_ input: inout FuzzInput) -> Redirect {
        Redirect(
            status: Redirect.statuses[input.choice(Redirect.statuses.count)],
            method: Redirect.methods[input.choice(Redirect.methods.count)])
    }

    static func writeRedirect(_ redirect: Redirect, _ writer: inout SeedWriter) {
        writer.choice(Redirect.statuses.firstIndex(of: redirect.status)!, of: Redirect.statuses.count)
        writer.choice(Redirect.methods.firstIndex(of: redirect.method)!, of: Redirect.methods.count)
    }

    static let redirected = URL(string: "https://api.example.com/a/b?c=d#e")!

    /// `FollowRedirects` with the fields on a redirect (whatever their `Location`): the load ends with the redirect
    /// itself when there is no `Location`, with `unusableRedirect` or `redirectLoop` carrying it, or with the next
    /// request sent — one that validates, whose method and body follow RFC 9110 §15.4, and that carries the
    /// credential the caller set only to the same origin.
    static func checkRedirect(with headers: HTTPHeaders, _ redirect: Redirect) {
        let request = {
            var request = HTTPRequest(method: redirect.method, url: redirected)
            request.headers["Authorization"] = "Bearer fuzz"
            if redirect.method == .post || redirect.method == .put { request.body = DataBody(Data("x".utf8)) }
            return request
        }()
        let mock = MockLoader().then(status: HTTPStatus(rawValue: redirect.status), headers: headers).then(status: .ok)
        let chain = FollowRedirects(maximumNumberOfRedirects: 1) --> mock
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            outcome.set(await chain.load(request))
            done.signal()
        }
        done.wait()
        let sent = mock.receivedRequests
        let fields = SwiftLiteral.fields(headers.map { (name: $0.name, value: $0.value) })
        let context = "a \(redirect.status) to \(redirect.method) with \(fields)"
        switch outcome.result {
        case .success(let response) where response.status.rawValue == redirect.status:
            FuzzCheck.expect(
                sent.count == 1 && headers.values(for: "Location").isEmpty,
                "\(context): the redirect came back, though it has a Location")
        case .success(let response):
            FuzzCheck.expect(response.status == .ok && sent.count == 2, "\(context): \(response.status)")
            guard sent.count == 2 else { return }
            let next = sent[1]
            do {
                try next.validate()
            } catch {
                FuzzCheck.expect(false, "\(context): the next request does not validate: \(error)")
            }
            let becomesGET =
                redirect.status == 303
                ? redirect.method != .head : [301, 302].contains(redirect.status) && redirect.method == .post
            FuzzCheck.expect(
                next.method == (becomesGET ? .get : redirect.method), "\(context): sent on as \(next.method)")
            FuzzCheck.expect(
                (next.body is EmptyBody) == (redirect.status == 303 || becomesGET || request.body is EmptyBody),
                "\(context): the body was \(next.body is EmptyBody ? "dropped" : "kept")")
            if next.origin != request.origin {
                FuzzCheck.expect(
                    next.headers["Authorization"] == nil, "\(context): the credential went to \(next)")
            }
        case .failure(let error):
            FuzzCheck.expect(
                [.unusableRedirect, .redirectLoop].contains(error.code) && sent.count == 1
                    && error.response?.status.rawValue == redirect.status,
                "\(context): \(error)")
        }
    }

    /// The result of a load run in a task, handed to the fuzzer's thread.
    final class Outcome: @unchecked Sendable {  // Sendable: written before the semaphore is signalled, read after
        private(set) var result: HTTPResult = .failure(HTTPError(.unknown, request: HTTPRequest()))
        func set(_ result: HTTPResult) { self.result = result }
    }

    /// A field whose name is one `Redaction.standard` hides, in any ASCII case, never shows its value; an
    /// `Authorization` value shows at most its scheme.
    static func checkRedaction(_ field: HTTPHeaders.Field) {
        let shown = Redaction.standard.display(field.value, for: field.name)
        let hidden = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"].contains { field.hasName($0) }
        guard hidden else { return }
        FuzzCheck.expect(
            Redaction.standard.hides(field.name), "Redaction.standard does not hide \(SwiftLiteral.string(field.name))")
        let scheme = field.value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        FuzzCheck.expect(
            shown == "<redacted>" || shown == scheme + " <redacted>",
            "\(SwiftLiteral.string(field.name)): \(SwiftLiteral.string(field.value)) is shown as \(SwiftLiteral.string(shown))"
        )
    }

    /// What `HTTPHeaders` should do, written as plainly as possible.
    struct Model {
        var fields: [(name: String, value: String)]

        static func matches(_ lhs: String, _ rhs: String) -> Bool {
            func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
            return lhs.utf8.map(lower) == rhs.utf8.map(lower)
        }

        func values(for name: String) -> [String] {
            fields.filter { Self.matches($0.name, name) }.map(\.value)
        }

        mutating func remove(_ name: String) {
            fields.removeAll { Self.matches($0.name, name) }
        }

        subscript(name: String) -> String? {
            get {
                let values = values(for: name)
                return values.isEmpty ? nil : values.joined(separator: ", ")
            }
            set {
                guard let newValue else { return remove(name) }
                guard let first = fields.firstIndex(where: { Self.matches($0.name, name) }) else {
                    fields.append((name, newValue))
                    return
                }
                fields[first].value = newValue
                fields = fields.enumerated().filter { $0.offset <= first || !Self.matches($0.element.name, name) }.map(
                    \.element)
            }
        }

        func expectEqual(_ headers: HTTPHeaders, after step: @autoclosure () -> String) {
            let actual = headers.map { (name: $0.name, value: $0.value) }
            let same =
                actual.count == fields.count
                && zip(actual, fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
            FuzzCheck.expect(
                same,
                "after \(step()) the fields are \(SwiftLiteral.fields(actual)), the model says \(SwiftLiteral.fields(fields))"
            )
        }
    }
}

// MARK: - Reading, writing, printing

extension HeadersTarget {
    static func readOperation(_ input: inout FuzzInput) -> Operation {
        switch input.choice(operationKinds) {
        case 0: .get(input.string())
        case 1: .set(input.string(), input.optionalString())
        case 2: .add(input.string(), input.string())
        case 3: .addContents(RequestProgram.readFields(&input))
        case 4: .remove(input.string())
        case 5: .values(input.string())
        case 6: .contains(input.string())
        default: .compare(RequestProgram.readFields(&input, upTo: 6))
        }
    }

    static func writeOperation(_ operation: Operation, _ writer: inout SeedWriter) {
        switch operation {
        case .get(let name):
            writer.choice(0, of: operationKinds)
            writer.string(name)
        case .set(let name, let value):
            writer.choice(1, of: operationKinds)
            writer.string(name)
            writer.optionalString(value)
        case .add(let name, let value):
            writer.choice(2, of: operationKinds)
            writer.string(name)
            writer.string(value)
        case .addContents(let fields):
            writer.choice(3, of: operationKinds)
            RequestProgram.writeFields(fields, &writer)
        case .remove(let name):
            writer.choice(4, of: operationKinds)
            writer.string(name)
        case .values(let name):
            writer.choice(5, of: operationKinds)
            writer.string(name)
        case .contains(let name):
            writer.choice(6, of: operationKinds)
            writer.string(name)
        case .compare(let fields):
            writer.choice(7, of: operationKinds)
            RequestProgram.writeFields(fields, &writer, upTo: 6)
        }
    }

    static func describe(_ operation: Operation) -> String {
        switch operation {
        case .get(let name): "_ = headers[\(SwiftLiteral.string(name))]"
        case .set(let name, let value): "headers[\(SwiftLiteral.string(name))] = \(SwiftLiteral.optionalString(value))"
        case .add(let name, let value): "headers.add(\(SwiftLiteral.string(value)), for: \(SwiftLiteral.string(name)))"
        case .addContents(let fields): "headers.add(contentsOf: \(SwiftLiteral.fields(fields)))"
        case .remove(let name): "headers.remove(\(SwiftLiteral.string(name)))"
        case .values(let name): "_ = headers.values(for: \(SwiftLiteral.string(name)))"
        case .contains(let name): "_ = headers.contains(\(SwiftLiteral.string(name)))"
        case .compare(let fields): "_ = headers == \(SwiftLiteral.fields(fields))"
        }
    }

    static func reproducer(_ input: inout FuzzInput) -> String {
        let initial = RequestProgram.readFields(&input, upTo: 6)
        let operations = (0..<input.count(upTo: maximumOperations)).map { _ in readOperation(&input) }
        let status = input.int()
        let body = input.bytesField()
        let redirect = readRedirect(&input)
        return
            (["var headers = \(SwiftLiteral.fields(initial))"] + operations.map(describe) + [
                "let response = HTTPResponse(request: HTTPRequest(), status: HTTPStatus(rawValue: \(SwiftLiteral.int(status))), "
                    + "headers: headers, body: \(SwiftLiteral.data(body)))",
                "for field in response.headers { _ = Redaction.standard.display(field.value, for: field.name) }",
                "_ = response.description",
                "var redirected = HTTPRequest(method: \(SwiftLiteral.string(redirect.method.rawValue)), "
                    + "url: URL(string: \(SwiftLiteral.string(redirected.absoluteString)))!)",
                "redirected.headers[\"Authorization\"] = \"Bearer fuzz\"",
                redirect.method == .post || redirect.method == .put
                    ? "redirected.body = DataBody(Data(\"x\".utf8))" : "// no body",
                "let mock = MockLoader().then(status: \(redirect.status), headers: headers).then(status: .ok)",
                "_ = await (FollowRedirects(maximumNumberOfRedirects: 1) --> mock).load(redirected)",
            ]).joined(separator: "\n")
    }

    static var seeds: [(name: String, bytes: [UInt8])] {
        let cases: [(String, [(name: String, value: String)], [Operation], Int)] = [
            (
                "redirect-locations",
                [("Location", "../other/ü b?x=%41#frag"), ("location", "//cdn.example.net:8443/p"), ("Vary", "*")],
                [.remove("LOCATION"), .add("Location", "HTTP://user@evil.example/"), .set("Location", "?page=2")],
                302
            ),
            (
                "response-cookies",
                [
                    ("Content-Type", "application/json; charset=utf-8"), ("Set-Cookie", "a=1; Path=/; HttpOnly"),
                    ("set-cookie", "b=2; Secure"), ("Cache-Control", "no-store"),
                ],
                [.get("SET-COOKIE"), .values("Set-Cookie"), .set("set-cookie", "c=3"), .contains("cache-control")],
                200
            ),
            (
                "authorization-redaction",
                [("Authorization", "Bearer abc.def.ghi"), ("Proxy-Authorization", "Basic dXNlcjpwYXNz")],
                [.add("Cookie", "session=s3cr3t"), .remove("proxy-authorization"), .get("authorization")],
                401
            ),
            (
                "retry-after",
                [("Retry-After", "120"), ("RateLimit-Reset", "30"), ("X-RateLimit-Reset", "1795341630")],
                [
                    .set("Retry-After", nil), .addContents([("Retry-After", "Sun, 22 Nov 2026 10:02:00 GMT")]),
                    .get("retry-after"),
                ],
                429
            ),
            (
                "compare-and-repeat",
                [("Accept", "text/html"), ("Accept", "application/json;q=0.9"), ("Vary", "Accept, Accept-Encoding")],
                [
                    .compare([
                        ("accept", "text/html"), ("Accept", "application/json;q=0.9"),
                        ("Vary", "Accept, Accept-Encoding"),
                    ]), .get("ACCEPT"),
                ],
                503
            ),
            (
                "odd-bytes",
                [("X-Ünïcödé", "välüe"), ("", ""), ("X-Ctl", "a\r\nb\0c"), ("x-ctl", "\t")],
                [.values("x-ctl"), .set("X-CTL", "one"), .remove("x-ünïcödé")],
                -1
            ),
        ]
        return cases.map { name, fields, operations, status in
            var writer = SeedWriter()
            RequestProgram.writeFields(fields, &writer, upTo: 6)
            writer.count(operations.count, upTo: maximumOperations)
            for operation in operations { writeOperation(operation, &writer) }
            writer.int(status)
            writer.bytesField(Array("{\"error\":\"slow down\"}".utf8))
            writeRedirect(Redirect(status: 307, method: .post), &writer)
            return (name, writer.bytes)
        }
    }
}

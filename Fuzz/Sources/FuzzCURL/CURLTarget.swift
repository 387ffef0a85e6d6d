import Dispatch
import Foundation
import FuzzSupport
import HTTP

/// cURL rendering and `PrintLoader` lines, for any request (random header fields and bodies: form, JSON, multipart,
/// binary, failing) and any redaction, with secrets planted where redaction must hide them.
///
/// Oracles, beyond "no trap": the command parses, as bash would, into exactly the intended words (the method, the
/// URL, each `-H 'name: value'` as redacted, the body byte for byte), with nothing unquoted that a shell would
/// interpret, and at most one comment line after it; a secret in a header field the redaction hides (in any ASCII
/// case), or in a hidden field of a form body, appears neither in the command nor in `PrintLoader`'s lines.
enum CURLTarget: FuzzTarget {
    /// What plants secrets: a hidden header field on the request and on the response, and a hidden form field.
    struct Secrets {
        var headerName: Int
        var caseMask: UInt64
        var scheme: String
        var token: String
        var formField: Int?
        var formItems: [URLQueryItem]
    }

    struct Case {
        var program: RequestProgram
        var redaction: RedactionSpec
        var secrets: Secrets?
        var printLoader: Response?
    }

    struct Response {
        var status: Int
        var fields: [(name: String, value: String)]
        var fails: Bool
    }

    enum RedactionSpec {
        case standard, none
        case adding(String)
        case addingBodyField(String)
        case custom(headerNames: [String], bodyFieldNames: [String])

        var redaction: Redaction {
            switch self {
            case .standard: .standard
            case .none: .none
            case .adding(let name): .standard.adding(name)
            case .addingBodyField(let name): .standard.addingBodyFields(name)
            case .custom(let headers, let fields): Redaction(headerNames: headers, bodyFieldNames: fields)
            }
        }

        var swift: String {
            switch self {
            case .standard: ".standard"
            case .none: ".none"
            case .adding(let name): ".standard.adding(\(SwiftLiteral.string(name)))"
            case .addingBodyField(let name): ".standard.addingBodyFields(\(SwiftLiteral.string(name)))"
            case .custom(let headers, let fields):
                "Redaction(headerNames: \(headers.map(SwiftLiteral.string)), bodyFieldNames: \(fields.map(SwiftLiteral.string)))"
            }
        }
    }

    /// Text no harness-made part of a request contains: where it shows, a secret leaked.
    static let marker = "S3CR3T"

    static func read(_ input: inout FuzzInput) -> Case {
        let program = RequestProgram.read(&input)
        let redaction: RedactionSpec =
            switch input.choice(5) {
            case 0: .standard
            case 1: .none
            case 2: .adding(input.string())
            case 3: .addingBodyField(input.string())
            default:
                .custom(
                    headerNames: (0..<input.count(upTo: 2)).map { _ in input.string() },
                    bodyFieldNames: (0..<input.count(upTo: 2)).map { _ in input.string() })
            }
        let secrets =
            input.bool()
            ? Secrets(
                headerName: input.choice(64), caseMask: input.unsigned(bytes: 4), scheme: input.string(),
                token: input.string(), formField: input.bool() ? input.choice(64) : nil,
                formItems: RequestProgram.readQuery(&input)) : nil
        let response =
            input.bool()
            ? Response(status: input.int(), fields: RequestProgram.readFields(&input), fails: input.bool()) : nil
        return Case(program: program, redaction: redaction, secrets: secrets, printLoader: response)
    }

    /// The request with its secrets planted, or with harmless stand-ins (`X`) for the control.
    static func request(_ testCase: Case, planted: Bool) -> HTTPRequest {
        var request = testCase.program.build()
        guard let secrets = testCase.secrets else { return request }
        let redaction = testCase.redaction.redaction
        if let name = hiddenHeaderName(secrets, redaction) {
            request.headers.add(secretValue(secrets, planted: planted), for: name)
        }
        if let index = secrets.formField, !redaction.bodyFieldNames.isEmpty {
            let names = redaction.bodyFieldNames.sorted()
            request.body = FormBody(
                secrets.formItems + [
                    URLQueryItem(name: names[index % names.count], value: secretToken(secrets, planted: planted))
                ])
        }
        return request
    }

    static func hiddenHeaderName(_ secrets: Secrets, _ redaction: Redaction) -> String? {
        // Only ASCII names: their case variants name the same field in HTTP.
        let names = redaction.headerNames.filter { $0.utf8.allSatisfy { $0 < 0x80 } }.sorted()
        guard !names.isEmpty else { return nil }
        var mask = secrets.caseMask
        return String(
            names[secrets.headerName % names.count].map { character in
                defer { mask >>= 1 }
                return mask & 1 == 1 ? Character(character.uppercased()) : character
            })
    }

    static func secretToken(_ secrets: Secrets, planted: Bool) -> String {
        planted ? marker + secrets.token : "X"
    }

    /// `<scheme> <token>`, as an `Authorization` value is written; redaction may show the scheme, never the token.
    static func secretValue(_ secrets: Secrets, planted: Bool) -> String {
        secrets.scheme + " " + secretToken(secrets, planted: planted)
    }

    static func run(_ input: inout FuzzInput) {
        let testCase = read(&input)
        let request = request(testCase, planted: true)
        let redaction = testCase.redaction.redaction
        let command = request.cURLCommand(redaction: redaction)
        checkQuoting(command, request, redaction)
        checkQuoting(request.cURLCommand(redaction: .none), request, .none)

        // A shown marker is a leaked secret only if it is nowhere else: not in the request with harmless stand-ins
        // for the secrets, shown unredacted, nor in the response's own header fields.
        let control = self.request(testCase, planted: false)
        let isMarkerElsewhere =
            control.cURLCommand(redaction: .none).containsBytes(of: marker)
            || testCase.printLoader?.fields.contains {
                $0.name.containsBytes(of: marker) || $0.value.containsBytes(of: marker)
            } == true
        let checksSecrets = testCase.secrets != nil && !isMarkerElsewhere
        if checksSecrets {
            FuzzCheck.expect(
                !command.containsBytes(of: marker), "cURLCommand shows a secret: \(SwiftLiteral.string(command))")
        }

        guard let response = testCase.printLoader else { return }
        var fields = response.fields
        if let secrets = testCase.secrets, let name = hiddenHeaderName(secrets, redaction) {
            fields.append((name, secretValue(secrets, planted: true)))
        }
        let lines = printLoaderLines(request, redaction: redaction, response: response, fields: fields)
        FuzzCheck.expect(lines.count == 2, "PrintLoader wrote \(lines.count) lines, not 2")
        if checksSecrets {
            for line in lines {
                FuzzCheck.expect(
                    !line.containsBytes(of: marker), "PrintLoader shows a secret: \(SwiftLiteral.string(line))")
            }
        }
    }

    /// The command is exactly the intended words, quoted so that bash reads them back unchanged.
    static func checkQuoting(_ command: String, _ request: HTTPRequest, _ redaction: Redaction) {
        let parsed: ShellWords
        do {
            parsed = try ShellWords(command)
        } catch {
            FuzzCheck.fail("cURLCommand is unsafe for a shell (\(error)): \(SwiftLiteral.string(command))")
        }
        let body = request.body
        var encoded: Data?
        var fails = false
        if !body.isEmpty {
            do { encoded = try body.encode() } catch { fails = true }
        }
        // The description redacts the URL with the standard policy; under another one the URL word is taken as
        // it reads back (the quoting is still checked, the redaction of the URL is not).
        let urlIndex = request.method == .get && encoded == nil ? 1 : request.method == .head ? 2 : 3
        var url = Array(request.description.utf8.dropFirst(request.method.rawValue.utf8.count + 1))
        if redaction != .standard, urlIndex < parsed.words.count { url = parsed.words[urlIndex] }
        var expected: [[UInt8]] = [Array("curl".utf8)]
        if request.method == .get && encoded == nil {
            expected.append(url)
        } else if request.method == .head {
            expected += [Array("--head".utf8), url]
        } else {
            expected += [Array("-X".utf8), Array(request.method.rawValue.utf8), url]
        }
        let headers = request.headersIncludingBody
        for field in headers {
            expected += [
                Array("-H".utf8), Array("\(field.name): \(redaction.display(field.value, for: field.name))".utf8),
            ]
        }
        if let encoded {
            expected.append(Array("--data-binary".utf8))
            // Redacted as what the body is (its own Content-Type), whatever the request's header claims.
            let kind = body.additionalHeaders["Content-Type"] ?? headers["Content-Type"]
            expected.append(Array(redaction.display(body: encoded, contentType: kind)))
        }
        if parsed.words != expected {
            let shown = parsed.words.map { SwiftLiteral.string(String(decoding: $0, as: UTF8.self)) }
            let wanted = expected.map { SwiftLiteral.string(String(decoding: $0, as: UTF8.self)) }
            FuzzCheck.fail("cURLCommand reads back as \(shown), not \(wanted): \(SwiftLiteral.string(command))")
        }
        FuzzCheck.expect(
            (parsed.comment != nil) == fails, "cURLCommand's comment line does not match the body's encoding")
    }

    /// The lines `PrintLoader` writes for one load answered by a `MockLoader`.
    static func printLoaderLines(
        _ request: HTTPRequest, redaction: Redaction, response: Response, fields: [(name: String, value: String)]
    ) -> [String] {
        let lines = Lines()
        let mock = MockLoader()
        if response.fails {
            mock.then(failWith: .cannotConnect, message: "no route")
        } else {
            mock.then(
                status: HTTPStatus(rawValue: response.status), headers: makeHeaders(fields), body: Data("{}".utf8))
        }
        let loader = PrintLoader(redaction: redaction, includesHeaders: true, sink: { lines.append($0) }) --> mock
        let done = DispatchSemaphore(value: 0)
        Task {
            _ = await loader.load(request)
            done.signal()
        }
        done.wait()
        return lines.all
    }

    static func reproducer(_ input: inout FuzzInput) -> String {
        let testCase = read(&input)
        var lines = [testCase.program.swift]
        if let secrets = testCase.secrets {
            let redaction = testCase.redaction.redaction
            if let name = hiddenHeaderName(secrets, redaction) {
                lines.append(
                    "request.headers.add(\(SwiftLiteral.string(secretValue(secrets, planted: true))), for: \(SwiftLiteral.string(name)))"
                )
            }
            if let index = secrets.formField, !redaction.bodyFieldNames.isEmpty {
                let names = redaction.bodyFieldNames.sorted()
                let items =
                    secrets.formItems + [
                        URLQueryItem(name: names[index % names.count], value: secretToken(secrets, planted: true))
                    ]
                lines.append("request.body = FormBody(\(SwiftLiteral.queryItems(items)))")
            }
        }
        lines.append("print(request.cURLCommand(redaction: \(testCase.redaction.swift)))")
        if let response = testCase.printLoader {
            let answer =
                response.fails
                ? "then(failWith: .cannotConnect, message: \"no route\")"
                : "then(status: HTTPStatus(rawValue: \(SwiftLiteral.int(response.status))), headers: \(SwiftLiteral.fields(response.fields)), body: Data(\"{}\".utf8))"
            lines.append(
                "let loader = PrintLoader(redaction: \(testCase.redaction.swift), includesHeaders: true) --> MockLoader().\(answer)"
            )
            lines.append("_ = await loader.load(request)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Lines collected from a sink that may be called from any thread.
final class Lines: @unchecked Sendable {
    // Safety: `lines` is read and written only under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

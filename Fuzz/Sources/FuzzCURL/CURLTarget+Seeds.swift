import Foundation
import FuzzSupport
import HTTP

extension CURLTarget {
    static func write(_ testCase: Case, _ writer: inout SeedWriter) {
        testCase.program.write(&writer)
        switch testCase.redaction {
        case .standard: writer.choice(0, of: 5)
        case .none: writer.choice(1, of: 5)
        case .adding(let name):
            writer.choice(2, of: 5)
            writer.string(name)
        case .addingBodyField(let name):
            writer.choice(3, of: 5)
            writer.string(name)
        case .custom(let headers, let fields):
            writer.choice(4, of: 5)
            writer.count(headers.count, upTo: 2)
            for name in headers { writer.string(name) }
            writer.count(fields.count, upTo: 2)
            for name in fields { writer.string(name) }
        }
        writer.bool(testCase.secrets != nil)
        if let secrets = testCase.secrets {
            writer.choice(secrets.headerName, of: 64)
            writer.unsigned(secrets.caseMask, bytes: 4)
            writer.string(secrets.scheme)
            writer.string(secrets.token)
            writer.bool(secrets.formField != nil)
            if let field = secrets.formField { writer.choice(field, of: 64) }
            RequestProgram.writeQuery(secrets.formItems, &writer)
        }
        writer.bool(testCase.printLoader != nil)
        if let response = testCase.printLoader {
            writer.int(response.status)
            RequestProgram.writeFields(response.fields, &writer)
            writer.bool(response.fails)
        }
    }

    static var seeds: [(name: String, bytes: [UInt8])] {
        let tokenRequest = RequestProgram(
            start: .url("https://id.example.com/oauth2/token"),
            steps: [.method("POST"), .setHeader(name: "Accept", value: "application/json")])
        let cases: [(String, Case)] = [
            (
                "token-request-secrets",
                Case(
                    program: tokenRequest, redaction: .standard,
                    secrets: Secrets(
                        headerName: 0, caseMask: 0b1, scheme: "Basic", token: "bXktYXBwOnNlY3JldA==", formField: 8,
                        formItems: [URLQueryItem(name: "grant_type", value: "refresh_token")]),
                    printLoader: Response(
                        status: 200, fields: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                        fails: false))
            ),
            (
                "json-api-key",
                Case(
                    program: RequestProgram(
                        start: .url("https://api.example.com/v1/people"),
                        steps: [.method("POST"), .body(.json([("name", "Zoë"), ("note", "it's \"quoted\"")]))]),
                    redaction: .adding("X-API-Key"),
                    secrets: Secrets(
                        headerName: 4, caseMask: 0b1_0010_0101, scheme: "", token: "k-123", formField: nil,
                        formItems: []),
                    printLoader: Response(status: 201, fields: [("Set-Cookie", "id=1; Secure")], fails: false))
            ),
            (
                "binary-body-unredacted",
                Case(
                    program: RequestProgram(
                        start: .url("https://upload.example.com/blob?name=a%20b"),
                        steps: [
                            .method("PUT"),
                            .body(
                                .data(
                                    [0x00, 0x27, 0x5C, 0x0A, 0x7F, 0xFF, 0xC3, 0xA9, 0x22],
                                    contentType: "application/octet-stream")),
                        ]),
                    redaction: .none, secrets: nil, printLoader: nil)
            ),
            (
                "multipart-custom-redaction",
                Case(
                    program: RequestProgram(
                        start: .url("https://upload.example.com/photos"),
                        steps: [
                            .method("POST"),
                            .body(
                                .multipart(
                                    [.init(name: "caption", data: Data("sun & sea 'n' $HOME".utf8))],
                                    boundary: "b0undary")),
                        ]),
                    redaction: .custom(headerNames: ["X-Session"], bodyFieldNames: ["pin"]),
                    secrets: Secrets(
                        headerName: 0, caseMask: 0, scheme: "Token", token: "abc", formField: nil, formItems: []),
                    printLoader: Response(status: 503, fields: [("Retry-After", "5")], fails: true))
            ),
            (
                "head-failing-body",
                Case(
                    program: RequestProgram(
                        start: .parts(
                            method: "HEAD", scheme: "http", host: "[::1]", port: 8080, path: "/it's here", query: []),
                        steps: [
                            .body(
                                .custom(
                                    FuzzBody(
                                        bytes: [], additionalHeaders: [("Content-Type", "text/plain")],
                                        reportsEmpty: false,
                                        failsToEncode: true)))
                        ]),
                    redaction: .standard, secrets: nil, printLoader: nil)
            ),
            (
                "header-quotes-newlines",
                Case(
                    program: RequestProgram(
                        start: .url("https://api.example.com/"),
                        steps: [
                            .addHeader(name: "X-Quote", value: "it's; rm -rf $HOME `id` $(id)"),
                            .addHeader(name: "X-Lines", value: "a\nb\tc\r\u{7F}"),
                        ]),
                    redaction: .addingBodyField("password"),
                    secrets: Secrets(
                        headerName: 1, caseMask: 0xFFFF_FFFF, scheme: "Bearer", token: "eyJ.e30.sig", formField: 5,
                        formItems: [
                            URLQueryItem(name: "username", value: "zoë"), URLQueryItem(name: "a b", value: "c+d&e"),
                        ]),
                    printLoader: Response(
                        status: 401, fields: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")], fails: false))
            ),
        ]
        return cases.map { name, testCase in
            var writer = SeedWriter()
            write(testCase, &writer)
            return (name, writer.bytes)
        }
    }
}

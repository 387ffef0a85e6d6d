import Foundation
import FuzzSupport
import HTTP

extension RequestTarget {
    static var seeds: [(name: String, bytes: [UInt8])] {
        let production = EnvironmentSpec(
            host: "api.example.com", pathPrefix: "/v1", headers: [("X-Client", "ios/2.3")],
            query: [URLQueryItem(name: "api_key", value: "k")])
        let programs: [(String, RequestProgram)] = [
            (
                "get-parts",
                RequestProgram(
                    start: .parts(
                        method: "GET", scheme: "https", host: "api.example.com", port: nil, path: "/v1/people/42",
                        query: []),
                    steps: [.setHeader(name: "Accept", value: "application/json")])
            ),
            (
                "url-with-everything",
                RequestProgram(
                    start: .url("https://api.example.com:8443/v1/search?q=swift%20http&page=2#results"), steps: [])
            ),
            (
                // URL reads scheme "" and host "a.b" here, URLComponents a path: the request must stay absolute.
                "url-empty-scheme",
                RequestProgram(start: .url("://https://xn--zz.example.com/x"), steps: [])
            ),
            (
                "post-json-bearer",
                RequestProgram(
                    start: .plain,
                    steps: [
                        .method("POST"), .host("api.example.com"), .path("/v1/people"),
                        .setHeader(name: "Authorization", value: "Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln"),
                        .body(.json([("name", "Zoë"), ("email", "zoe@example.com")])),
                    ])
            ),
            (
                "relative-environment",
                RequestProgram(
                    start: .parts(method: "GET", scheme: "https", host: nil, port: nil, path: "/people/Zoë", query: []),
                    steps: [
                        .query([
                            URLQueryItem(name: "fields", value: "name,email"), URLQueryItem(name: "raw", value: nil),
                        ]),
                        .environment(production),
                    ])
            ),
            (
                "put-form",
                RequestProgram(
                    start: .plain,
                    steps: [
                        .method("PUT"), .host("id.example.com"), .path("/oauth2/token"),
                        .body(
                            .form([
                                URLQueryItem(name: "grant_type", value: "refresh_token"),
                                URLQueryItem(name: "refresh_token", value: "r1 +&=/"),
                            ])),
                    ])
            ),
            (
                "multipart-upload",
                RequestProgram(
                    start: .url("https://upload.example.com/avatar"),
                    steps: [
                        .method("POST"),
                        .body(
                            .multipart(
                                [
                                    .init(name: "title", data: Data("Holiday".utf8)),
                                    .init(
                                        name: "photo", filename: "beach \"1\".jpg", contentType: "image/jpeg",
                                        data: Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10])),
                                ], boundary: "XyZ")),
                    ])
            ),
            (
                "encoded-path-and-query",
                RequestProgram(
                    start: .plain,
                    steps: [
                        .host("files.example.com"), .percentEncodedPath("/files/a%2Fb/%C3%A9t%C3%A9"),
                        .percentEncodedQuery("version=2&sig=a%2Bb%3D"), .fragment("top"),
                    ])
            ),
            (
                "ipv6-http-port",
                RequestProgram(
                    start: .parts(
                        method: "HEAD", scheme: "http", host: "[::1]", port: 8080, path: "/health", query: []),
                    steps: [.addHeader(name: "Cookie", value: "a=1"), .addHeader(name: "cookie", value: "b=2")])
            ),
            (
                "custom-body-fails",
                RequestProgram(
                    start: .url("https://api.example.com/v1/upload"),
                    steps: [
                        .method("PATCH"),
                        .body(
                            .custom(
                                FuzzBody(
                                    bytes: Array("{}".utf8), additionalHeaders: [("Content-Type", "text/plain")],
                                    reportsEmpty: false, failsToEncode: true))),
                    ])
            ),
            (
                "environment-from-url",
                RequestProgram(
                    start: .parts(
                        method: "DELETE", scheme: "https", host: nil, port: nil, path: "sessions/1", query: []),
                    steps: [
                        .environmentFromURL(
                            "https://staging.example.com:8443/api/v2?tenant=t1", headers: [("X-Debug", "1")]),
                        .removeHeader("x-debug"),
                    ])
            ),
            (
                "header-injection",
                RequestProgram(
                    start: .url("https://api.example.com/"),
                    steps: [.setHeader(name: "X-Note", value: "a\r\nInjected: yes"), .port(70000)])
            ),
        ]
        return programs.map { name, program in
            var writer = SeedWriter()
            program.write(&writer)
            writer.string("/people/Zoë Ämmälä")
            RequestProgram.writeQuery([URLQueryItem(name: "q", value: "a+b c&d")], &writer)
            production.write(&writer)
            return (name, writer.bytes)
        }
    }
}

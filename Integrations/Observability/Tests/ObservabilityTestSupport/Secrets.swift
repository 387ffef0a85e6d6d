import Foundation
public import HTTP

/// Secrets planted in requests, which no log line, metric dimension or span attribute may show.
public enum Secrets {
    /// A bearer token, in an `Authorization` header field.
    public static let bearerToken = "sk_live_bearer_51HcQ2"
    /// A token in a `token=` query item.
    public static let queryToken = "qt_9f8e7d6c5b4a"
    /// A token in an `access_token=` query item.
    public static let accessToken = "at_0a1b2c3d4e5f"
    /// A password in the URL's user information.
    public static let password = "hunter2-correct-horse"
    /// A client secret in a form body.
    public static let clientSecret = "cs_fedcba987654"

    /// Every planted secret.
    public static let all = [bearerToken, queryToken, accessToken, password, clientSecret]

    /// A request carrying every secret: an `Authorization` header field, `token` and `access_token` query items, a
    /// password in the URL's user information, and a client secret in a form body. A `PUT`, which `Retry` retries.
    public static func request(path: String = "/people/42") -> HTTPRequest {
        let url = URL(
            string:
                "https://alice:\(password)@api.example.com\(path)?token=\(queryToken)&access_token=\(accessToken)&page=2"
        )!
        var request = HTTPRequest(
            method: .put, url: url, body: FormBody(["client_secret": clientSecret, "name": "Alice"]))
        request.headers["Authorization"] = "Bearer \(bearerToken)"
        return request
    }

    /// The secrets that appear in `text`.
    public static func found(in text: String) -> [String] {
        all.filter { text.contains($0) }
    }
}

extension Secrets {
    /// A terminal whose answers carry the secrets, for two loads of ``request(path:)`` through `Retry` (two
    /// attempts) and `FollowRedirects`:
    ///
    /// 1. a `503` setting a cookie; a `302` whose `Location` has an `access_token`; a failure whose message quotes
    ///    a URL with a password and a token — the load fails with `cannotConnect`;
    /// 2. a `302` to a URL with a password in its user information, which `FollowRedirects` refuses — the load fails
    ///    with `unusableRedirect`.
    public static func server() -> MockLoader {
        MockLoader()
            .then(status: .serviceUnavailable, headers: ["Set-Cookie": "session=\(bearerToken)"])
            .then(status: .found, headers: ["Location": "/next?access_token=\(accessToken)"])
            .then(failureQuotingSecrets)
            .then(status: .found, headers: ["Location": "https://bob:\(password)@api.example.com/next"])
    }
}

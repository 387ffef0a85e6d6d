import Foundation
import HTTP

/// What every grant does the same way at an authorization server's endpoints: the client-authenticated form request
/// (RFC 6749 §2.3.1) and the reading of a token endpoint's answer (§5.1, §5.2). ``OAuth``'s login, refresh and
/// revocation requests and ``ClientCredentialsGrant``'s token request are made here.
enum TokenEndpoint {
    /// A form posted to `endpoint`, marked as an authentication loader's own request. With a secret, the client
    /// authenticates with HTTP Basic (`client_secret_basic`), or with `client_id` and `client_secret` in the form
    /// when `sendsSecretInForm` (`client_secret_post`); without one (a public client), `client_id` is in the form.
    static func request(
        _ fields: [URLQueryItem], to endpoint: URL, clientID: String, clientSecret: String?,
        sendsSecretInForm: Bool = false
    ) -> HTTPRequest {
        var fields = fields
        var headers: HTTPHeaders = ["Accept": "application/json"]
        if let clientSecret, !sendsSecretInForm {
            // RFC 6749 §2.3.1: the ID and secret are form-encoded (Appendix B), then Basic-encoded.
            let credentials = BasicCredentials(
                username: FormBody.escape(clientID), password: FormBody.escape(clientSecret))
            headers["Authorization"] = credentials.authorizationHeaderValue
        } else {
            fields.append(URLQueryItem(name: "client_id", value: clientID))
            if let clientSecret { fields.append(URLQueryItem(name: "client_secret", value: clientSecret)) }
        }
        var request = HTTPRequest(method: .post, url: endpoint, headers: headers, body: FormBody(fields))
        request.markAsAuthorizationServerTraffic()
        return request
    }

    /// The token endpoint's successful answer in `result`; otherwise ``OAuthError/Code/endpointUnreachable`` (no
    /// answer) or ``OAuthError/Code/tokenRequestFailed`` with the server's `error` and `error_description`.
    static func successfulResponse(_ result: HTTPResult, from endpoint: URL) throws(OAuthError) -> HTTPResponse {
        let response: HTTPResponse
        switch result {
        case .failure(let error):
            throw .endpointUnreachable(
                "POST \(endpoint.absoluteString) (token endpoint): \(error.code): \(error.message)")
        case .success(let answer): response = answer
        }
        guard response.status.isSuccess else {
            let problem = try? JSONDecoder().decode(ErrorResponse.self, from: response.body)
            throw .tokenRequestFailed(
                status: response.status.rawValue, error: problem?.error, description: problem?.errorDescription)
        }
        return response
    }

    /// An error response from an authorization server's endpoint (RFC 6749 §5.2; RFC 8628 §3.2 uses it too).
    struct ErrorResponse: Decodable {
        var error: String
        var errorDescription: String?

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
    }
}

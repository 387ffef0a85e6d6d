// The middleware sample of MiddlewareAndLoaders.md, compiled: it uses HTTPTypes' and OpenAPIRuntime's HTTPRequest,
// HTTPResponse and HTTPBody, so this file does not import the product's HTTP module.
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

/// The app's token store the sample's middleware asks.
actor TokenStore {
    private var token = "first"

    func current() throws -> String { token }

    func refreshed() throws -> String {
        token = "refreshed"
        return token
    }
}

/// The sample, as the article shows it.
func middlewareSample(tokens: TokenStore) throws -> Client {
    /// Adds the current token; on a 401, refreshes it and sends the request again.
    struct BearerMiddleware: ClientMiddleware {
        let tokens: TokenStore  // an actor of yours: the token, its expiry, one refresh at a time

        func intercept(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            guard operationID == "getBearer" else { return try await next(request, body, baseURL) }
            var request = request
            request.headerFields[.authorization] = "Bearer \(try await tokens.current())"
            let (response, responseBody) = try await next(request, body, baseURL)
            guard response.status == .unauthorized, body?.iterationBehavior != .single else {
                return (response, responseBody)
            }
            request.headerFields[.authorization] = "Bearer \(try await tokens.refreshed())"
            return try await next(request, body, baseURL)
        }
    }

    /// Sends the request again after a 503, up to three times.
    struct RetryMiddleware: ClientMiddleware {
        func intercept(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            // A body that can be iterated once must be collected into memory to be sent again.
            var body = body
            if let single = body, single.iterationBehavior == .single {
                body = HTTPBody(try await Data(collecting: single, upTo: 10 * 1024 * 1024))
            }
            var attempt = 1
            while true {
                let (response, responseBody) = try await next(request, body, baseURL)
                guard response.status == .serviceUnavailable, attempt < 3 else { return (response, responseBody) }
                try await Task.sleep(for: .seconds(attempt))
                attempt += 1
            }
        }
    }

    let client = Client(
        serverURL: try Servers.Server1.url(),
        transport: URLSessionTransport(),
        middlewares: [RetryMiddleware(), BearerMiddleware(tokens: tokens) /* , a cache middleware: see below */]
    )
    return client
}

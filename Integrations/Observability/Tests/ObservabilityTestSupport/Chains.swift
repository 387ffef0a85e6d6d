import Foundation
public import HTTP

/// A handler for `MockLoader.then(_:)` that waits for its load's cancellation (at most a minute) and then answers
/// `200`: the load stays in flight until the test cancels it or resets the chain.
public let heldUntilCancelled: MockLoader.Handler = { request in
    try? await Task.sleep(for: .seconds(60))
    return .success(HTTPResponse(request: request, status: .ok))
}

/// A failure whose message quotes the request's URL with its secrets, as a transport's error message might.
public func failureQuotingSecrets(_ request: HTTPRequest) -> HTTPResult {
    .failure(
        HTTPError(
            .cannotConnect, request: request,
            message:
                "could not connect to https://alice:\(Secrets.password)@api.example.com/?access_token=\(Secrets.accessToken)"
        ))
}

/// A retry strategy that retries at once, up to `attempts` attempts in all, without a budget's limit.
public func retryAtOnce(attempts: Int) -> Retry {
    Retry(strategy: Backoff.immediately(maximumNumberOfAttempts: attempts), budget: nil)
}

extension ServerEnvironment {
    /// The environment the documentation's samples use.
    public static let production = ServerEnvironment(host: "api.example.com", pathPrefix: "/v1")
}

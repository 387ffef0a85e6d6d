public import HTTP

/// The OpenAPI operation a request was made for: the `operationId` of the document, as a generated client names it.
///
/// ``LoaderTransport`` sets it on every request it sends, so that each loader of the chain can see which operation
/// it is working for — a log line, a metric's dimension, a span's name, or a policy for some operations:
///
/// ```swift
/// let policies = ModifyRequest { request in
///     var request = request
///     switch request.openAPIOperationID {
///     case "getBearer": request.authenticationMethod = .oauth
///     case "postAnything": request.isIdempotent = true  // safe to retry: the server deduplicates uploads
///     default: break
///     }
///     return request
/// }
/// let chain = policies --> Auth(loaders: [.oauth: oauth]) --> Retry() --> URLSessionLoader()
/// ```
///
/// Requests that no OpenAPI client made answer `nil`.
public enum OpenAPIOperationIDOption: HTTPRequestOption {
    /// `nil`: the request was not made by a generated OpenAPI client.
    public static let defaultOptionValue: String? = nil
}

extension HTTPRequest {
    /// The `operationId` of the OpenAPI operation this request was made for, or `nil` when no generated client made
    /// it. Set by ``LoaderTransport``.
    public var openAPIOperationID: String? {
        get { self[option: OpenAPIOperationIDOption.self] }
        set { self[option: OpenAPIOperationIDOption.self] = newValue }
    }
}

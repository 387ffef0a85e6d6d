/// A loader that changes each request with a closure before passing it on.
///
/// ```swift
/// let addAPIKey = ModifyRequest { request in
///     var copy = request
///     copy.headers["X-API-Key"] = apiKey
///     return copy
/// }
/// ```
///
/// If the closure throws, the request is not sent and fails with ``HTTPError/Code/invalidRequest`` carrying
/// the thrown error, or with the thrown ``HTTPError`` itself.
// Safety: configuration is immutable (`let`); mutable state, if any, is behind one lock (`Locked`).
public final class ModifyRequest: HTTPLoader, @unchecked Sendable {
    private let modifier: @Sendable (HTTPRequest) throws -> HTTPRequest

    /// - Parameter modifier: Returns the request to send in place of the one it is given.
    public init(_ modifier: @escaping @Sendable (HTTPRequest) throws -> HTTPRequest) {
        self.modifier = modifier
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        let modified: HTTPRequest
        do {
            modified = try modifier(request)
        } catch let error as HTTPError {
            return .failure(error)
        } catch {
            return .failure(
                HTTPError(
                    .invalidRequest,
                    request: request,
                    message: "ModifyRequest's closure threw: \(error)",
                    underlyingError: error
                )
            )
        }
        return await loadNext(modified)
    }
}

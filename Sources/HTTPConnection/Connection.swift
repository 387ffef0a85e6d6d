public import HTTP

/// Sends typed ``Request``s through a loader chain and hands back decoded values.
///
/// The connection is the layer app code talks to. It turns a ``Request`` into an `HTTPRequest`,
/// sends it through whatever chain it was built over, and decodes the response — or throws:
///
/// ```swift
/// let connection = Connection(loader: ApplyEnvironment(environment: .production) --> URLSessionLoader())
/// let person = try await connection.request(.person(42))
/// ```
///
/// It throws `HTTPError` when no response arrived (cancelled, cannot connect, timed out, …),
/// ``ResponseError`` when the status is not accepted or the body does not decode, and ``ServerError`` when
/// the request decodes error bodies. In tests, build it over a `MockLoader`.
public final class Connection: Sendable {
    /// The chain requests go through.
    public let loader: HTTPLoader
    /// The streams and listings open on this connection, which a reset ends.
    let openTransfers = OpenTransfers()

    /// Creates a connection over a loader chain.
    public init(loader: HTTPLoader) {
        self.loader = loader
    }

    /// Sends `request` and returns its decoded value.
    ///
    /// Cancelling the calling task cancels the request.
    public func request<Response>(_ request: Request<Response>) async throws -> sending Response {
        switch await loader.load(request.underlyingRequest) {
        case .success(let response): return try request.decode(response)
        case .failure(let error): throw error
        }
    }

    /// Sends `request` and returns its decoded value together with the response: its status, header fields and
    /// metrics. It throws as ``request(_:)`` does.
    ///
    /// ```swift
    /// let person = try await connection.response(for: .person(42))
    /// let etag = person.headers["ETag"]
    /// ```
    ///
    /// Cancelling the calling task cancels the request.
    public func response<Response>(for request: Request<Response>) async throws -> sending DecodedResponse<Response> {
        switch await loader.load(request.underlyingRequest) {
        case .success(let response): return DecodedResponse(value: try request.decode(response), response: response)
        case .failure(let error): throw error
        }
    }

    /// Sends `request` and calls `completion` exactly once with the decoded value or the error.
    ///
    /// - Returns: A handle whose `cancel()` completes the request at once with `HTTPError.Code.cancelled`.
    @discardableResult
    public func request<Response: Sendable>(
        _ request: Request<Response>,
        completion: @escaping @Sendable (Result<Response, any Error>) -> Void
    ) -> HTTPTask {
        loader.load(request.underlyingRequest) { result in
            completion(
                result.mapError { $0 as any Error }.flatMap { response in Result { try request.decode(response) } })
        }
    }

    /// Sends `request` and calls `completion` exactly once with the decoded value and its response, or the error.
    ///
    /// - Returns: A handle whose `cancel()` completes the request at once with `HTTPError.Code.cancelled`.
    @discardableResult
    public func response<Response: Sendable>(
        for request: Request<Response>,
        completion: @escaping @Sendable (Result<DecodedResponse<Response>, any Error>) -> Void
    ) -> HTTPTask {
        loader.load(request.underlyingRequest) { result in
            completion(
                result.mapError { $0 as any Error }.flatMap { response in
                    Result { DecodedResponse(value: try request.decode(response), response: response) }
                })
        }
    }

    /// Resets the chain — for a chain with authentication, this logs out — letting the requests already sent
    /// finish. See `HTTPLoader.reset(mode:)` and ``reset(mode:)``.
    public func reset() async {
        await reset(mode: .drain)
    }

    /// Resets the chain: `.drain` lets the requests already sent finish, `.cancel` ends them at once with
    /// `HTTPError.Code.cancelled` (a logout the user asked for). Requests waiting anywhere in the chain fail with
    /// `HTTPError.Code.resetInProgress` at once either way, and no request leaves the chain once it has begun.
    ///
    /// In both modes, the streams this connection has open — bodies read with ``stream(_:)``,
    /// ``lines(for:maximumLineLength:)`` or ``jsonLines(for:maximumLineLength:)``, event streams from
    /// ``events(for:eventType:reconnectionDelay:clock:)``, listings from
    /// ``pages(for:next:)`` — end at once with `HTTPError.Code.resetInProgress`, and so do those that open while the
    /// reset runs: a stream has no end a reset could wait for, and none of the old session's data reaches the app
    /// after it. (A page being loaded finishes as any load does; the listing ends after it.)
    public func reset(mode: ResetMode) async {
        openTransfers.resetBegan()
        await loader.reset(mode: mode)
        openTransfers.resetEnded()
    }
}

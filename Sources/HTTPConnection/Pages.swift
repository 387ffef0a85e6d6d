public import HTTP

extension Connection {
    /// The pages of a paginated listing, one load through the chain per page — authentication, cache and retries
    /// apply to each — until the rule finds no next page.
    ///
    /// By default the next page is the response's `Link` with `rel="next"` (RFC 8288, as GitHub's and many other
    /// APIs send it), resolved against the URL that answered. For cursor- or offset-based APIs, give the rule that
    /// makes the next request from the last response:
    ///
    /// ```swift
    /// for try await page in connection.pages(for: .issues(repository)) {
    ///     show(page.items)
    /// }
    ///
    /// let listing = connection.pages(for: .people(after: nil)) { last in
    ///     last.value.nextCursor.map { Request<PeoplePage>.people(after: $0).underlyingRequest }
    /// }
    /// ```
    ///
    /// Each page is decoded as `first` decodes, and throws as ``request(_:)`` does. A rule that leads back to a page
    /// already loaded ends the sequence with `HTTPError.Code.invalidResponse` rather than loop. Stopping the iteration
    /// (or cancelling its task) stops after the page being loaded. A ``reset(mode:)`` of the connection ends the
    /// listing with `HTTPError.Code.resetInProgress` before its next page.
    ///
    /// - Parameters:
    ///   - first: The request for the first page; the next ones keep its status rules, error decoding and decoding.
    ///   - next: The request for the page after the one just loaded, or `nil` at the end.
    public func pages<Page: Sendable>(
        for first: Request<Page>,
        next: @escaping @Sendable (DecodedResponse<Page>) -> HTTPRequest? = Connection.nextLink
    ) -> Pages<Page> {
        Pages(connection: self, first: first, next: next)
    }

    /// The request for the page after `page`: its response's `Link` with `rel="next"`, followed from the request that
    /// loaded it (`HTTPRequest.following(link:in:)`).
    @Sendable
    public static func nextLink<Page>(after page: DecodedResponse<Page>) -> HTTPRequest? {
        page.response.request.following(link: "next", in: page.response)
    }
}

/// The pages of a paginated listing: see ``Connection/pages(for:next:)``.
public struct Pages<Page: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Page

    let connection: Connection
    let first: Request<Page>
    let next: @Sendable (DecodedResponse<Page>) -> HTTPRequest?

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: self)
    }

    /// Loads one page per `next()`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let pages: Pages
        private var upcoming: Request<Page>?
        /// The URLs loaded so far, to stop a rule that leads back to one.
        private var loaded: Set<String> = []

        /// Whether a reset through the connection has ended the listing.
        private let watch: ResetWatch

        init(pages: Pages) {
            self.pages = pages
            upcoming = pages.first
            watch = ResetWatch(pages.connection.openTransfers)
        }

        public mutating func next() async throws -> Page? {
            guard let request = upcoming else { return nil }
            upcoming = nil
            try Task.checkCancellation()
            if watch.isReset {
                throw HTTPError(
                    .resetInProgress, request: request.underlyingRequest,
                    message: "the connection was reset, which ends its listings; the next page was not loaded")
            }
            loaded.insert(Self.key(request.underlyingRequest))
            let page = try await pages.connection.response(for: request)
            loaded.insert(Self.key(page.response.request))  // as sent: the environment filled in, redirects followed
            if let following = pages.next(page) {
                guard !loaded.contains(Self.key(following)) else {
                    throw HTTPError(
                        .invalidResponse, request: following,
                        message: "the next page is one already loaded, so the listing would go round forever",
                        response: page.response)
                }
                var nextRequest = request
                nextRequest.underlyingRequest = following
                upcoming = nextRequest
            }
            return page.value
        }

        /// The method and URL, the scheme and host without case, the port as the scheme's default when missing.
        private static func key(_ request: HTTPRequest) -> String {
            let scheme = request.scheme.lowercased()
            let port = request.port ?? Origin.defaultPort(forScheme: scheme)
            return "\(request.method) \(scheme)://\(request.host?.lowercased() ?? "")"
                + ":\(port.map(String.init) ?? "")\(request.percentEncodedPath)?\(request.percentEncodedQuery ?? "")"
        }
    }
}

import Synchronization

/// A loader that follows redirects: each `301`, `302`, `303`, `307` or `308` with a `Location` is sent on as a new
/// request through the loaders below, so that every hop is authenticated, cached, retried, throttled, logged and
/// measured like any request.
///
/// ```swift
/// let chain =
///     ApplyEnvironment(environment: .production)
///     --> FollowRedirects()
///     --> Cache()
///     --> Auth(loaders: [.oauth: oauth])
///     --> Retry()
///     --> Throttle(maximumNumberOfRequests: 6)
///     --> URLSessionLoader()
/// ```
///
/// Transports hand every `3xx` back up the chain (``URLSessionLoader`` does on every platform), so without this
/// loader a redirect is the result.
///
/// ## The rules, on every platform
///
/// - **Method and body** (RFC 9110 §15.4): a `301` or `302` turns a `POST` into a `GET`; a `303` turns every method
///   but `HEAD` into a `GET`. Turned into a `GET` (and on any `303`), the request loses its body and the header
///   fields that describe one: `Content-Type`, `Content-Length`, `Content-Encoding`, `Content-Language`,
///   `Content-Location`, `Transfer-Encoding`. A `307` or `308` — and a `301` or `302` for methods other than
///   `POST` — keeps the method and the body; a body that can be sent only once (``HTTPBody/isReplayable`` is
///   `false`, such as a ``StreamBody`` from a live sequence) fails the load with ``HTTPError/Code/bodyNotReplayable``.
/// - **Location**: resolved against the URL that answered (RFC 3986 §5), so `/next`, `next`, `?page=2` and
///   `//cdn.example.com/x` all work; characters a server left unencoded (a space, non-ASCII) are encoded. A
///   `Location` without a fragment inherits the request's (RFC 9110 §10.2.2). One that cannot be followed — it does
///   not parse, is not `http` or `https` (`file:`, `javascript:`), has no host or has user information — fails the
///   load with ``HTTPError/Code/unusableRedirect``.
/// - **Not followed, returned as the response**: a redirect without `Location` (nothing says where to go), `300
///   Multiple Choices` (the user picks one), `304 Not Modified` (an answer to a conditional request, not a redirect),
///   `305` and `306`, and any redirect a request's ``HTTPRequest/redirectPolicy`` declines.
/// - **Credentials stay with their origin**: when a hop goes to another origin (scheme, host or port; so also from
///   `https` to `http`), the `Authorization`, `Proxy-Authorization` and `Cookie` fields the request carried are
///   removed, and so is every field ``redaction`` hides (with ``Redaction/standard``: `X-API-Key`, `X-Auth-Token`,
///   … — such as the key an ``ServerEnvironment`` adds); they stay removed on later hops. Authentication loaders
///   below apply their own credentials to each hop for its own origin.
/// - **Limits**: after ``maximumNumberOfRedirects`` redirects (20 by default) the next one fails the load with
///   ``HTTPError/Code/tooManyRedirects``; a redirect back to a method and URL already requested in the same load
///   fails it with ``HTTPError/Code/redirectLoop``.
///
/// Each of these errors keeps the redirect that caused it as ``HTTPError/response`` (with its ``HTTPResponse/redirects``
/// so far) and the request that was redirected as ``HTTPError/request``.
///
/// ## What the caller sees
///
/// The last response, whose ``HTTPResponse/url`` and ``HTTPResponse/request`` are those of the last hop, and whose
/// ``HTTPResponse/redirects`` lists every redirect followed (as do its ``HTTPResponse/metrics``). Each hop is a
/// request of its own to the loaders below — with the original's ``HTTPRequest/id`` and options (its ``LoadID``, when
/// a loader above stamped one) — and has the whole ``HTTPRequest/timeout``. An ``Observe`` or ``PrintLoader`` above
/// sees a ``HTTPEvent/Kind/redirectFollowed`` event before each hop; one below sees each hop as a load of its own.
///
/// A redirect's body is not read: a streamed one is stopped before the next hop (``HTTPLoader/stream(_:)``), and a
/// download (``HTTPLoader/download(_:to:resumeAttempts:)``) writes only the final response's body to its file.
///
/// ## Where it goes
///
/// Below ``ApplyEnvironment``, so that every hop is an absolute request; above `Cache`, so that each hop is cached
/// under its own URL (a `301` is cacheable, and a later load skips the hop) rather than the final response under
/// the first URL; above `Auth`, so that credentials are applied per hop for that hop's origin, and a hop to another
/// server gets that server's credentials or none; above ``Retry`` and ``Throttle``, so that a failed hop is retried
/// on its own and a hop holds no slot while the next waits for one.
///
/// ## Cancellation and reset
///
/// The load is cancelled between hops as anywhere else: the next hop is not sent. During a reset the loader refuses
/// new loads with ``HTTPError/Code/resetInProgress``, and a load in flight sends no further hop: it ends with
/// ``HTTPError/Code/resetInProgress`` and the redirect as its response. Its reset waits for the loads it passed on.
// Safety: configuration is immutable (`let`); the reset counter is atomic.
public final class FollowRedirects: HTTPLoader, @unchecked Sendable {
    /// How many redirects one load follows; the next one fails with ``HTTPError/Code/tooManyRedirects``.
    public let maximumNumberOfRedirects: Int
    /// Which header fields are secrets, removed from a hop to another origin besides `Authorization`,
    /// `Proxy-Authorization` and `Cookie`: those it hides.
    public let redaction: Redaction

    /// - Parameters:
    ///   - maximumNumberOfRedirects: How many redirects one load follows; 20 by default, as browsers and URLSession
    ///     allow. `0` follows none: every redirect fails with ``HTTPError/Code/tooManyRedirects``. A negative number
    ///     counts as `0`.
    ///   - redaction: Which header fields are secrets that must not go to another origin: besides `Authorization`,
    ///     `Proxy-Authorization` and `Cookie`, those it hides. ``Redaction/standard`` by default, which hides
    ///     `X-API-Key`, `X-Auth-Token` and other fields named like secrets; add your own with
    ///     ``Redaction/adding(_:)``.
    public init(maximumNumberOfRedirects: Int = 20, redaction: Redaction = .standard) {
        self.maximumNumberOfRedirects = max(0, maximumNumberOfRedirects)
        self.redaction = redaction
    }

    /// The hop limit, and which fields count as secrets.
    public override var configurationDescription: String {
        "maximumNumberOfRedirects: \(maximumNumberOfRedirects), redaction: \(redaction.summary)"
    }

    public override func load(_ request: HTTPRequest) async -> HTTPResult {
        // Counted here, so that a reset waits for the decision about each hop's answer at the head of a chain too.
        await withLoadCounted {
            let result = await loadNext(request)
            guard case .success(let response) = result, RedirectRules.isFollowed(response.status) else {
                return result
            }
            return await follow(response, of: request)
        }
    }

    /// Follows redirects from `response`, the answer to `request`, until a response is not one to follow.
    /// Out of line, to keep the waiting frame small (Architecture.md, "Performance rules").
    @inline(never)
    nonisolated(nonsending) private func follow(_ response: HTTPResponse, of request: HTTPRequest) async -> HTTPResult {
        let policy = request.redirectPolicy
        if policy.isDoNotFollow { return .success(response) }
        var current = request
        var response = response
        var redirects: [HTTPMetrics.Redirect] = []
        var requested: Set<RedirectRules.HopKey> = [RedirectRules.HopKey(request)]
        while true {
            switch nextHop(after: response, to: current, of: request, policy, &redirects, &requested) {
            case .finished(let result):
                return result
            case .send(let next):
                current = next
                let result = await loadNext(current)
                guard case .success(let answer) = result, RedirectRules.isFollowed(answer.status) else {
                    return Self.finished(result, redirects)
                }
                response = answer
            }
        }
    }

    /// What comes after a hop: the next one to send, or the load's result.
    private enum NextHop {
        case send(HTTPRequest)
        case finished(HTTPResult)
    }

    /// Decides what follows `response`, the answer to `current` (a hop of the load of `request`), and records the
    /// next hop in `redirects` and `requested`. Synchronous and out of line: an async loop's body is compiled once
    /// for each place the loop can resume, so what it decides is kept out of it.
    @inline(never)
    private func nextHop(
        after response: HTTPResponse, to current: HTTPRequest, of request: HTTPRequest, _ policy: RedirectPolicy,
        _ redirects: inout [HTTPMetrics.Redirect], _ requested: inout Set<RedirectRules.HopKey>
    ) -> NextHop {
        var next: HTTPRequest
        switch RedirectRules.next(after: response, of: current, secrets: redaction) {
        case .notFollowed:
            return .finished(.success(Self.finished(response, redirects)))
        case .unusable(let problem):
            let location = Describe.printable((response.headers["Location"] ?? "").prefix(300))
            return .finished(
                failure(
                    .unusableRedirect, current, response, redirects,
                    "the server answered \(response.status) with the Location '\(location)', which \(problem)"))
        case .next(let proposed):
            next = proposed
        }
        guard redirects.count < maximumNumberOfRedirects else {
            return .finished(
                failure(
                    .tooManyRedirects, current, response, redirects,
                    "the server answered \(response.status) after \(redirects.count) redirects, the most "
                        + "FollowRedirects follows for one load (maximumNumberOfRedirects: \(maximumNumberOfRedirects))"
                ))
        }
        if let decide = policy.decider {
            let hop = RedirectPolicy.Hop(response: response, nextRequest: next, redirects: redirects)
            switch decide(hop) {
            case .stop:
                return .finished(.success(Self.finished(response, redirects)))
            case .follow(let chosen):
                next = RedirectRules.withoutCarriedCredentials(
                    chosen, from: current, answeredBy: RedirectRules.base(of: response), secrets: redaction)
            }
        }
        guard requested.insert(RedirectRules.HopKey(next)).inserted else {
            return .finished(
                failure(
                    .redirectLoop, current, response, redirects,
                    "the server answered \(response.status) to \(next.method) \(next.displayURL), which this load "
                        + "requested already"))
        }
        guard next.body.isReplayable else {
            return .finished(
                failure(
                    .bodyNotReplayable, current, response, redirects,
                    "the server answered \(response.status), which resends the body to \(next.displayURL), and the "
                        + "request's body (\(type(of: next.body))) can be sent only once"))
        }
        if isResetting, !request.isPartOfReset {
            return .finished(
                failure(
                    .resetInProgress, current, response, redirects,
                    "FollowRedirects did not follow the \(response.status) to \(next.displayURL): the chain is resetting"
                ))
        }
        redirects.append(HTTPMetrics.Redirect(url: response.url, status: response.status, location: next.url))
        next.redirects = redirects
        response.discardBody()
        next.emit(.redirectFollowed, result: .success(response))
        return .send(next)
    }

    /// `response` with the redirects followed to reach it: its request's (which a loader below may have made anew),
    /// and its metrics'.
    private static func finished(_ response: HTTPResponse, _ redirects: [HTTPMetrics.Redirect]) -> HTTPResponse {
        guard !redirects.isEmpty else { return response }
        var finished = response
        if finished.request.redirects.count != redirects.count { finished.request.redirects = redirects }
        finished.metrics?.redirects = redirects
        return finished
    }

    private static func finished(_ result: HTTPResult, _ redirects: [HTTPMetrics.Redirect]) -> HTTPResult {
        switch result {
        case .success(let response):
            return .success(finished(response, redirects))
        case .failure(var error):
            if let response = error.response { error.response = finished(response, redirects) }
            return .failure(error)
        }
    }

    /// The failure of a load that stops at `response`, a redirect to `current`, whose body is not read.
    private func failure(
        _ code: HTTPError.Code, _ current: HTTPRequest, _ response: HTTPResponse, _ redirects: [HTTPMetrics.Redirect],
        _ message: String
    ) -> HTTPResult {
        response.discardBody()
        var kept = Self.finished(response, redirects)
        kept.bodyStream = nil
        return .failure(HTTPError(code, request: current, message: message, response: kept))
    }
}

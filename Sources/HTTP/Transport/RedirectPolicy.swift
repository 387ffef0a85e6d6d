/// Whether ``URLSessionLoader`` follows a redirect, set per request.
///
/// ```swift
/// var request = HTTPRequest(path: "/login")
/// request.redirectPolicy = .doNotFollow   // the 302 and its Location come back as the response
/// ```
///
/// When a redirect is followed to another origin (a different scheme, host or port), the loader removes
/// `Authorization`, `Proxy-Authorization` and `Cookie` from the redirected request, so credentials meant
/// for one server are never sent to another.
public enum RedirectPolicy: Sendable, Hashable, HTTPRequestOption {
    /// Follow redirects (the default), without credentials once the origin changes.
    case follow
    /// Do not follow redirects: the `3xx` response is the result.
    case doNotFollow

    public static let defaultOptionValue: RedirectPolicy = .follow
}

/// How long ``URLSessionLoader`` waits for a request, set per request.
public enum RequestTimeout: HTTPRequestOption {
    /// `nil`: the session configuration's `timeoutIntervalForRequest` applies.
    public static let defaultOptionValue: Duration? = nil
}

extension HTTPRequest {
    /// Whether the transport follows redirects for this request; ``RedirectPolicy/follow`` by default.
    public var redirectPolicy: RedirectPolicy {
        get { self[option: RedirectPolicy.self] }
        set { self[option: RedirectPolicy.self] = newValue }
    }

    /// How long the transport may take before failing with ``HTTPError/Code/timedOut``; `nil` (the default)
    /// leaves it to the session configuration's `timeoutIntervalForRequest`.
    ///
    /// On Apple platforms this is the longest time allowed *between* packets. On Linux,
    /// swift-corelibs-foundation treats it as a limit on the whole transfer and counts only whole seconds
    /// (measured with 6.3.1: 1.9 s times out after 1 s, and 0.5 s at once), so ``URLSessionLoader`` rounds it
    /// up to whole seconds there.
    public var timeout: Duration? {
        get { self[option: RequestTimeout.self] }
        set { self[option: RequestTimeout.self] = newValue }
    }
}

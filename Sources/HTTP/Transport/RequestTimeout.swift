/// How long ``URLSessionLoader`` waits for a request, set per request.
public enum RequestTimeout: HTTPRequestOption {
    /// `nil`: the session configuration's `timeoutIntervalForRequest` applies.
    public static let defaultOptionValue: Duration? = nil
}

extension HTTPRequest {
    /// How long the transport may take before failing with ``HTTPError/Code/timedOut``; `nil` (the default)
    /// leaves it to the session configuration's `timeoutIntervalForRequest`.
    ///
    /// On Apple platforms this is the longest time allowed *between* packets. On Linux,
    /// swift-corelibs-foundation treats it as a limit on the whole transfer and counts only whole seconds
    /// (measured with 6.3.1: 1.9 s times out after 1 s, and 0.5 s at once), so ``URLSessionLoader`` keeps the
    /// deadline itself there, to the millisecond: the load fails with ``HTTPError/Code/timedOut`` when the whole
    /// transfer (a streamed body included) has taken longer. With ``FollowRedirects`` in the chain, each hop of a
    /// redirected load has the whole timeout.
    public var timeout: Duration? {
        get { self[option: RequestTimeout.self] }
        set { self[option: RequestTimeout.self] = newValue }
    }
}

public import HTTP
import HTTPObservabilityConventions
public import Logging

/// An `HTTPEventObserver` that writes each event of a load to a swift-log `Logger`, with structured metadata
/// named as the OpenTelemetry conventions name it, and every URL and message passed through one `Redaction`.
///
/// ```swift
/// var logger = Logger(label: "api-client")
/// logger.logLevel = .debug
/// let chain = Observe(HTTPEventLogger(logger: logger)) --> ApplyEnvironment(environment: .production) --> Retry()
///     --> URLSessionLoader()
/// ```
///
/// A load that is retried once writes, at `debug` and above:
///
/// ```
/// debug  HTTP request started   http.load_id=17 http.request.method=GET url.full=https://api.example.com/people/42
/// notice HTTP retry scheduled   http.load_id=17 … http.response.status_code=503 error.type=503 http.retry.delay=0.2
/// debug  HTTP request finished  http.load_id=17 … http.request.resend_count=1 http.response.status_code=200
///                               http.client.load.duration=0.245
/// ```
///
/// Levels follow what a server operator expects (``Levels/standard``): a load's start and a successful finish at
/// `debug`, a `4xx` at `notice`, a `5xx` at `warning`, a failure at `error` — but a load its caller cancelled, or a
/// reset ended, at `debug` —, a retry at `notice`, a redirect at `debug`, and each attempt's own events at `trace`.
///
/// Metadata, where the event has it: `http.load_id` (the `LoadID`), `http.request.method` (`_OTHER` for a method
/// the conventions do not know, with `http.request.method_original`), `url.full` (redacted),
/// `http.request.resend_count` (from the second attempt on), `http.response.status_code`,
/// `http.client.load.duration` and `http.client.request.duration` (seconds), `error.type` (the `HTTPError.Code`, or
/// the status of a `4xx` or `5xx`), `error.message` (redacted), `http.retry.delay` (seconds) and `http.redirect.url`
/// (redacted). Header fields and bodies are never logged.
///
/// An event below the logger's level costs a comparison: nothing is formatted, no metadata built; a kind whose level
/// is below it (``isInterested(in:)``) is not even made. Give `Observe` the logger and the chain's other observers
/// together (`Observe(HTTPEventLogger(logger: logger), MetricsObserver())`), so that each load is stamped and timed
/// once for all of them.
public struct HTTPEventLogger: HTTPEventObserver {
    /// The logger events go to.
    public var logger: Logger {
        didSet { handler = logger.handler }
    }
    /// The handler of ``logger``, whose level is read for every event: held here, it is read without going through
    /// the logger's shared storage (an exclusive access to a class's property) each time.
    private var handler: any LogHandler
    /// Which values are hidden in URLs and messages.
    public var redaction: Redaction
    /// The level of each kind of event.
    public var levels: Levels

    /// The level each kind of event is logged at.
    public struct Levels: Sendable, Hashable {
        /// A load entered `Observe`. `debug` by default.
        public var loadStarted: Logger.Level
        /// A load finished with a `1xx`, `2xx` or `3xx` response. `debug` by default.
        public var loadSucceeded: Logger.Level
        /// A load finished with a `4xx` response. `notice` by default.
        public var clientError: Logger.Level
        /// A load finished with a `5xx` response (or a status outside 100...599). `warning` by default.
        public var serverError: Logger.Level
        /// A load failed: no response (`HTTPError`). `error` by default.
        public var loadFailed: Logger.Level
        /// A load its caller cancelled, or a reset of the chain refused or ended. `debug` by default.
        public var loadAbandoned: Logger.Level
        /// `Retry` will send the request again. `notice` by default.
        public var retryScheduled: Logger.Level
        /// `FollowRedirects` follows a redirect. `debug` by default.
        public var redirectFollowed: Logger.Level
        /// The terminal's events of each attempt (started, response head, finished) and kinds this logger does not
        /// know. `trace` by default.
        public var attempt: Logger.Level
        /// An authentication loader obtained or refreshed a credential (a login, a token refresh). `info` by
        /// default.
        public var credentialFlow: Logger.Level
        /// A credential flow failed: the loads waiting for it fail. `error` by default.
        public var credentialFailed: Logger.Level

        /// Creates levels; each defaults to the ``standard`` one.
        public init(
            loadStarted: Logger.Level = .debug,
            loadSucceeded: Logger.Level = .debug,
            clientError: Logger.Level = .notice,
            serverError: Logger.Level = .warning,
            loadFailed: Logger.Level = .error,
            loadAbandoned: Logger.Level = .debug,
            retryScheduled: Logger.Level = .notice,
            redirectFollowed: Logger.Level = .debug,
            attempt: Logger.Level = .trace,
            credentialFlow: Logger.Level = .info,
            credentialFailed: Logger.Level = .error
        ) {
            self.loadStarted = loadStarted
            self.loadSucceeded = loadSucceeded
            self.clientError = clientError
            self.serverError = serverError
            self.loadFailed = loadFailed
            self.loadAbandoned = loadAbandoned
            self.retryScheduled = retryScheduled
            self.redirectFollowed = redirectFollowed
            self.attempt = attempt
            self.credentialFlow = credentialFlow
            self.credentialFailed = credentialFailed
        }

        /// Requests at `debug`, `4xx` at `notice`, `5xx` at `warning`, failures at `error`, retries at `notice`,
        /// attempts at `trace`, credential flows at `info` (failed ones at `error`).
        public static let standard = Levels()

        /// The level of `event`.
        func level(of event: HTTPEvent) -> Logger.Level {
            level(of: event.kind, result: event.result)
        }

        func level(of kind: HTTPEvent.Kind, result: HTTPResult?) -> Logger.Level {
            // The kinds of every load come first.
            switch kind {
            case .attemptStarted, .attemptFinished: attempt
            case .loadStarted: loadStarted
            case .loadFinished: level(ofFinished: result)
            case .retryScheduled: retryScheduled
            case .redirectFollowed: redirectFollowed
            case .credentialObtained, .credentialRefreshed: credentialFlow
            case .credentialFailed: credentialFailed
            default: attempt
            }
        }

        /// The highest level an event of `kind` can have: for a load's finish, the highest of its outcomes'.
        func highestLevel(of kind: HTTPEvent.Kind) -> Logger.Level {
            // The kinds of every load come first.
            switch kind {
            case .attemptStarted, .attemptFinished: attempt
            case .loadStarted: loadStarted
            // Pairwise: the variadic `max` would build an array on every call.
            case .loadFinished: max(max(loadSucceeded, clientError), max(max(serverError, loadFailed), loadAbandoned))
            case .retryScheduled: retryScheduled
            case .redirectFollowed: redirectFollowed
            case .credentialObtained, .credentialRefreshed: credentialFlow
            case .credentialFailed: credentialFailed
            default: attempt
            }
        }

        private func level(ofFinished result: HTTPResult?) -> Logger.Level {
            switch result {
            case .success(let response):
                switch response.status.kind {
                case .informational, .success, .redirection: loadSucceeded
                case .clientError: clientError
                case .serverError, .invalid: serverError
                }
            case .failure(let error):
                error.code == .cancelled || error.code == .resetInProgress ? loadAbandoned : loadFailed
            case nil:
                loadFailed
            }
        }
    }

    /// Creates an observer that logs to `logger`.
    ///
    /// - Parameters:
    ///   - logger: Where events go; its level decides which are written.
    ///   - redaction: Which values to hide in URLs and messages; `Redaction.standard` by default. Pass the
    ///     chain's own, so that logs hide what the chain's other output hides.
    ///   - levels: The level of each kind of event; ``Levels/standard`` by default.
    public init(logger: Logger, redaction: Redaction = .standard, levels: Levels = .standard) {
        self.logger = logger
        self.handler = logger.handler
        self.redaction = redaction
        self.levels = levels
    }

    /// Whether an event of `kind` could be at or above the logger's level: `false` for the kinds whose level the
    /// logger filters out, which are then never made.
    public func isInterested(in kind: HTTPEvent.Kind) -> Bool {
        handler.logLevel <= levels.highestLevel(of: kind)
    }

    /// Whether the event of a load that ended with `result` would be logged: a success below the logger's level is
    /// not made at all.
    public func isInterested(in kind: HTTPEvent.Kind, result: HTTPResult) -> Bool {
        handler.logLevel <= levels.level(of: kind, result: result)
    }

    public func handle(_ event: HTTPEvent) {
        let level = levels.level(of: event)
        // Below the logger's level, nothing is built: this comparison is the whole cost.
        guard handler.logLevel <= level else { return }
        logger.log(level: level, message(for: event), metadata: metadata(for: event))
    }

    private func message(for event: HTTPEvent) -> Logger.Message {
        switch event.kind {
        case .loadStarted: "HTTP request started"
        case .loadFinished: event.result?.error == nil ? "HTTP request finished" : "HTTP request failed"
        case .attemptStarted: "HTTP attempt started"
        case .responseHeadReceived: "HTTP response head received"
        case .attemptFinished: event.result?.error == nil ? "HTTP attempt finished" : "HTTP attempt failed"
        case .retryScheduled: "HTTP retry scheduled"
        case .redirectFollowed: "HTTP redirect followed"
        case .credentialObtained: "HTTP credential obtained"
        case .credentialRefreshed: "HTTP credential refreshed"
        case .credentialFailed: "HTTP credential flow failed"
        default: "HTTP \(event.kind.rawValue)"
        }
    }

    /// The event's metadata; see the type's documentation for the keys.
    func metadata(for event: HTTPEvent) -> Logger.Metadata {
        // A redirect's own request is the hop that was redirected; the event's request is the next hop.
        let redirect = event.kind == .redirectFollowed ? event.result?.response : nil
        let request = redirect?.request ?? event.request
        var metadata: Logger.Metadata = [
            Conventions.loadID: .stringConvertible(event.loadID.rawValue),
            Conventions.method: .string(request.conventionalMethod),
            Conventions.urlFull: .string(request.redactedURL(redaction)),
        ]
        if !Conventions.isKnown(request.method) {
            metadata[Conventions.originalMethod] = .string(request.method.rawValue)
        }
        if request.attemptNumber > 1 {
            metadata[Conventions.resendCount] = .stringConvertible(request.attemptNumber - 1)
        }
        if let result = event.result {
            switch result {
            case .success(let response):
                metadata[Conventions.statusCode] = .stringConvertible(response.status.rawValue)
            case .failure(let error):
                if let response = error.response {
                    metadata[Conventions.statusCode] = .stringConvertible(response.status.rawValue)
                }
                metadata[Conventions.errorMessage] = .string(redaction.display(body: error.message))
            }
            if let errorType = result.errorType { metadata[Conventions.errorType] = .string(errorType) }
        }
        switch event.kind {
        case .loadFinished:
            if let duration = event.duration {
                metadata["http.client.load.duration"] = .stringConvertible(duration.inSeconds)
            }
        case .attemptFinished:
            if let metrics = event.metrics {
                metadata["http.client.request.duration"] = .stringConvertible(metrics.duration.inSeconds)
            }
        case .retryScheduled:
            if let delay = event.delay { metadata["http.retry.delay"] = .stringConvertible(delay.inSeconds) }
        case .redirectFollowed:
            metadata["http.redirect.url"] = .string(event.request.redactedURL(redaction))
        case .credentialObtained, .credentialRefreshed, .credentialFailed:
            if let duration = event.duration {
                metadata["http.client.credential.flow.duration"] = .stringConvertible(duration.inSeconds)
            }
        default:
            break
        }
        return metadata
    }
}

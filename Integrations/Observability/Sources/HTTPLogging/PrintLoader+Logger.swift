public import HTTP
public import Logging

extension PrintLoader {
    /// A `PrintLoader` that writes its lines to a swift-log `Logger`, at one level.
    ///
    /// ```swift
    /// let chain = PrintLoader(logger: logger, level: .info) --> ApplyEnvironment(environment: .production)
    ///     --> URLSessionLoader()
    /// ```
    ///
    /// The lines are `PrintLoader`'s own (`→ #17 GET https://…`, `← #17 200 OK …`), secrets redacted by
    /// `redaction`, as the message, without metadata. `PrintLoader` formats every line before the logger sees
    /// it; where most loads are below the logger's level, ``HTTPEventLogger`` costs less, and its metadata can be
    /// searched.
    ///
    /// - Parameters:
    ///   - logger: Receives each line.
    ///   - level: The level of every line; `debug` by default.
    ///   - redaction: Which values to hide; `Redaction.standard` by default.
    ///   - includesHeaders: Whether lines include header fields (redacted).
    public convenience init(
        logger: Logger,
        level: Logger.Level = .debug,
        redaction: Redaction = .standard,
        includesHeaders: Bool = false
    ) {
        self.init(redaction: redaction, includesHeaders: includesHeaders) { line in
            logger.log(level: level, "\(line)")
        }
    }
}

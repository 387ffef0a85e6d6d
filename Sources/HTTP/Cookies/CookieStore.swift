import Synchronization

/// Where a ``Cookies`` loader keeps the persistent cookies (those with an expiry, ``Cookie/isPersistent``) across
/// launches: ``MemoryCookieStore``, ``FileCookieStore``, or one of your own.
///
/// The loader reads the store once, before its first load (or when ``Cookies/restore()`` is called), saves the
/// jar's persistent cookies whenever a response changes them, and empties the store on reset. Session cookies are
/// never handed to a store. A store never interprets cookies, must be safe to call concurrently and must not trap
/// on what it finds; what it cannot read back intact it forgets.
///
/// Cookies are credentials, but not the Keychain's kind: they come and go with every response. Keep them in a file
/// only the app can read (``FileCookieStore`` writes owner-only files), not in the Keychain.
public protocol CookieStore: Sendable {
    /// The cookies saved last; none when nothing is saved or it cannot be read.
    func savedCookies() async -> [Cookie]

    /// Replaces what is saved with `cookies`, the jar's persistent cookies in the jar's order.
    func save(_ cookies: [Cookie]) async

    /// Removes what is saved.
    func removeAll() async
}

/// A ``CookieStore`` in memory: cookies outlive a ``Cookies`` loader, not the process. For tests, and for an app
/// that makes a new chain per user session.
public final class MemoryCookieStore: CookieStore {
    private let saved = Mutex<[Cookie]>([])

    /// An empty store.
    public init() {}

    public func savedCookies() async -> [Cookie] {
        saved.withLock { $0 }
    }

    public func save(_ cookies: [Cookie]) async {
        saved.withLock { $0 = cookies }
    }

    public func removeAll() async {
        saved.withLock { $0 = [] }
    }
}

public import Foundation

/// Cookies, stored and sent as RFC 6265bis (draft 20) asks of a user agent: a value, with no locks, no clock and no
/// I/O — the ``Cookies`` loader holds one and gives it the time.
///
/// ```swift
/// var jar = CookieJar()
/// let request = HTTPRequest(host: "www.example.com", path: "/account")
/// jar.receive(["session=abc; Path=/; Secure; HttpOnly"], for: request, now: .now)
/// jar.cookieField(for: request, now: .now)  // "session=abc"
/// ```
///
/// ## Storing (§5.7)
///
/// - **Scope.** Without `Domain`, a cookie is *host-only*: sent to the host that set it, and no other. With
///   `Domain`, it is sent to that domain and its subdomains — if the domain is the request's host or one of its
///   parent domains; otherwise the cookie is refused. A `Domain` that is a public suffix (``publicSuffixes``: a
///   single label such as `com` or `localhost` always, `co.uk` or `github.io` when the app's list says so) is
///   refused unless it is the host itself, when the cookie becomes host-only (§5.7 step 9): no cookie is ever set
///   for every site under a public suffix. An IP address accepts only itself as `Domain`. Without `Path` (or with
///   one not starting with `/`), the path is the request's path up to its last `/`.
/// - **Expiry.** `Max-Age` wins over `Expires`, wherever each stands; both are capped at 400 days. A cookie whose
///   expiry has passed removes the stored one of the same name, domain and path, and is not stored. Without either
///   the cookie lasts until the jar is emptied.
/// - **Secure.** A `Secure` cookie is stored only from an `https` response — or one from a loopback host
///   (`localhost`, `127.0.0.1`, `[::1]`), which counts as secure as it does in browsers — and an `http` response
///   cannot replace a stored `Secure` cookie of the same name on an overlapping domain and path. `SameSite=None`
///   without `Secure` is refused; so are `__Secure-` cookies without `Secure` and `__Host-` cookies without
///   `Secure`, with a `Domain` or without `Path=/`, and a nameless cookie whose value starts with either prefix.
/// - **Replacing.** A cookie with the same name, domain, host-only flag and path replaces the stored one, in its
///   place, and keeps its creation date.
/// - **Limits.** At most ``maximumCookiesPerDomain`` cookies per domain and ``maximumCookies`` in all: beyond them,
///   the least recently used go first. Expired cookies are removed whenever the jar stores or sends cookies.
///
/// ## Sending (§5.8.3)
///
/// A request gets the cookies whose domain it matches, whose path is its path or a parent of it, that have not
/// expired, and — for `Secure` ones — only over `https` (or to a loopback host). They are sent in one `Cookie`
/// field, longer paths first, then earlier creation first: `a=1; b=2`. `HttpOnly` and `SameSite` are kept but
/// change nothing: an HTTP client has no scripts and no browsing context, so every request counts as same-site.
public struct CookieJar: Sendable {
    /// The cookies, in the order they were first stored.
    public private(set) var cookies: [Cookie]
    /// The most cookies kept for one domain.
    public var maximumCookiesPerDomain: Int
    /// The most cookies kept in all.
    public var maximumCookies: Int
    /// The public suffixes refused as a cookie's `Domain`; only single labels (`com`) by default.
    public var publicSuffixes: PublicSuffixList

    /// Creates a jar.
    ///
    /// - Parameters:
    ///   - cookies: Cookies to start with (from a previous session you saved, say).
    ///   - maximumCookiesPerDomain: The most cookies kept for one domain; 50 by default (RFC 6265bis §6.1's
    ///     minimum).
    ///   - maximumCookies: The most cookies kept in all; 3,000 by default.
    ///   - publicSuffixes: The public suffixes refused as a cookie's `Domain`; single labels only by default. Pass
    ///     the Public Suffix List, or your own part of it, to refuse `co.uk` or `github.io` too.
    public init(
        cookies: [Cookie] = [], maximumCookiesPerDomain: Int = 50, maximumCookies: Int = 3_000,
        publicSuffixes: PublicSuffixList = PublicSuffixList()
    ) {
        self.cookies = cookies
        self.maximumCookiesPerDomain = max(1, maximumCookiesPerDomain)
        self.maximumCookies = max(1, maximumCookies)
        self.publicSuffixes = publicSuffixes
    }

    // MARK: Storing

    /// Stores the cookies the `Set-Cookie` field values `lines` set, received at `now` in answer to `request`.
    ///
    /// - Returns: The number of lines that stored, replaced or removed a cookie; the others were refused.
    @discardableResult
    public mutating func receive(_ lines: [String], for request: HTTPRequest, now: Date) -> Int {
        guard let target = Target(request) else { return 0 }
        var accepted = 0
        for line in lines {
            guard let parsed = SetCookie(line, now: now), store(parsed, from: target, now: now) else { continue }
            accepted += 1
        }
        evict(now: now)
        return accepted
    }

    /// Stores `cookie` as it is, replacing the one with the same name, domain, host-only flag and path; for cookies
    /// an app made itself. An expired one removes the stored one and is not stored.
    public mutating func store(_ cookie: Cookie, now: Date) {
        insert(cookie, now: now)
        evict(now: now)
    }

    /// Removes every cookie.
    public mutating func removeAll() {
        cookies.removeAll()
    }

    /// Removes the cookies for which `shouldRemove` is true.
    public mutating func removeAll(where shouldRemove: (Cookie) throws -> Bool) rethrows {
        try cookies.removeAll(where: shouldRemove)
    }

    /// The storage model (§5.7) for one parsed cookie; whether it was stored (or removed a stored one).
    private mutating func store(_ parsed: SetCookie, from target: Target, now: Date) -> Bool {
        var domain = parsed.domain ?? ""
        if domain.utf8.contains(where: { $0 >= 0x80 }) { domain = Origin(host: domain).host }  // Punycode, as hosts are
        // §5.7 step 9: a public suffix is refused, unless it is the host itself (then the cookie is host-only).
        if !domain.isEmpty, publicSuffixes.isPublicSuffix(domain) {
            guard domain == target.host else { return false }
            domain = ""
        }
        let isHostOnly: Bool
        if domain.isEmpty {
            isHostOnly = true
            domain = target.host
        } else {
            guard Self.domainMatches(target.host, domain) else { return false }
            isHostOnly = false
        }
        let cookie = Cookie(
            name: parsed.name, value: parsed.value, domain: domain, isHostOnly: isHostOnly,
            path: parsed.path ?? Self.defaultPath(of: target.path), expiresDate: parsed.expiry,
            isSecure: parsed.isSecure, isHTTPOnly: parsed.isHTTPOnly, sameSite: parsed.sameSite, creationDate: now)

        if cookie.isSecure, !target.isSecure { return false }
        if cookie.sameSite == .none, !cookie.isSecure { return false }
        // §4.1.3: the prefixes, compared without case.
        let lowercasedName = cookie.name.lowercased()
        if lowercasedName.hasPrefix("__secure-"), !cookie.isSecure { return false }
        if lowercasedName.hasPrefix("__host-"), !cookie.isSecure || !cookie.isHostOnly || parsed.path != "/" {
            return false
        }
        if cookie.name.isEmpty {
            let value = cookie.value.lowercased()
            if value.hasPrefix("__secure-") || value.hasPrefix("__host-") { return false }
        }
        // §5.7 step 20: plain http cannot overwrite or shadow a Secure cookie.
        if !target.isSecure,
            cookies.contains(where: { stored in
                stored.isSecure && stored.name == cookie.name
                    && (Self.domainMatches(stored.domain, cookie.domain)
                        || Self.domainMatches(cookie.domain, stored.domain))
                    && Self.pathMatches(cookie.path, stored.path)
            })
        {
            return false
        }
        insert(cookie, now: now)
        return true
    }

    /// Replaces the cookie `cookie` is the same as, in its place and keeping its creation date, or adds it; an
    /// expired one only removes.
    private mutating func insert(_ cookie: Cookie, now: Date) {
        let isExpired = cookie.expiresDate.map { $0 <= now } ?? false
        guard let index = cookies.firstIndex(where: { $0.isSameCookie(as: cookie) }) else {
            if !isExpired { cookies.append(cookie) }
            return
        }
        guard !isExpired else {
            cookies.remove(at: index)
            return
        }
        var replacement = cookie
        replacement.creationDate = cookies[index].creationDate
        cookies[index] = replacement
    }

    /// Removes expired cookies, then the least recently used beyond the limits (§5.8.4), the earlier stored first
    /// among equally recent ones.
    private mutating func evict(now: Date) {
        cookies.removeAll { $0.expiresDate.map { $0 <= now } ?? false }
        var perDomain: [String: Int] = [:]
        for cookie in cookies { perDomain[cookie.domain, default: 0] += 1 }
        if perDomain.values.contains(where: { $0 > maximumCookiesPerDomain }) {
            for (domain, count) in perDomain where count > maximumCookiesPerDomain {
                removeLeastRecentlyUsed(
                    count - maximumCookiesPerDomain, of: cookies.indices.filter { cookies[$0].domain == domain })
            }
        }
        if cookies.count > maximumCookies {
            removeLeastRecentlyUsed(cookies.count - maximumCookies, of: Array(cookies.indices))
        }
    }

    /// Removes the `count` least recently used of the cookies at `indices`, the earlier stored first among equally
    /// recent ones.
    private mutating func removeLeastRecentlyUsed(_ count: Int, of indices: [Int]) {
        let oldest = indices.sorted { (cookies[$0].lastAccessDate, $0) < (cookies[$1].lastAccessDate, $1) }.prefix(
            count)
        for index in oldest.sorted(by: >) { cookies.remove(at: index) }
    }

    // MARK: Sending

    /// The cookies to send with `request` at `now`, in the order the `Cookie` field lists them; each counts as used.
    public mutating func cookies(for request: HTTPRequest, now: Date) -> [Cookie] {
        guard let target = Target(request) else { return [] }
        // §5.8.4: an expired cookie is evicted as soon as it is found.
        cookies.removeAll { $0.expiresDate.map { $0 <= now } ?? false }
        var selected: [Int] = []
        for index in cookies.indices {
            let cookie = cookies[index]
            let domainMatches =
                cookie.isHostOnly ? cookie.domain == target.host : Self.domainMatches(target.host, cookie.domain)
            guard domainMatches, Self.pathMatches(target.path, cookie.path), !cookie.isSecure || target.isSecure
            else { continue }
            selected.append(index)
        }
        // §5.8.3 step 2: longer paths first, then earlier creation, then the order they were stored in.
        selected.sort { lhs, rhs in
            let left = cookies[lhs]
            let right = cookies[rhs]
            if left.path.utf8.count != right.path.utf8.count { return left.path.utf8.count > right.path.utf8.count }
            return (left.creationDate, lhs) < (right.creationDate, rhs)
        }
        for index in selected { cookies[index].lastAccessDate = now }
        return selected.map { cookies[$0] }
    }

    /// The `Cookie` field value to send with `request` at `now` — `a=1; b=2` — or `nil` when there is no cookie to
    /// send; the cookies count as used.
    public mutating func cookieField(for request: HTTPRequest, now: Date) -> String? {
        let selected = cookies(for: request, now: now)
        guard !selected.isEmpty else { return nil }
        return Self.field(selected)
    }

    /// A `Cookie` field value listing `cookies` in order (§5.8.3 step 4): `name=value`, or the value alone for a
    /// nameless cookie.
    static func field(_ cookies: [Cookie]) -> String {
        cookies.map { $0.name.isEmpty ? $0.value : $0.name + "=" + $0.value }.joined(separator: "; ")
    }

    // MARK: Matching

    /// What of a request the jar reads: its canonical host, path and whether it is secure (`https`, or any scheme to
    /// a loopback host).
    private struct Target {
        var host: String
        var path: String
        var isSecure: Bool

        init?(_ request: HTTPRequest) {
            guard request.unusableURL == nil, let origin = request.origin,
                origin.scheme == "https" || origin.scheme == "http", !origin.host.isEmpty
            else { return nil }
            host = origin.host
            let path = request.percentEncodedPath
            self.path = path.isEmpty ? "/" : path
            // §5.7: a "secure" protocol is the user agent's to define; browsers count loopback as secure (a page
            // on http://localhost is a secure context), and so does this jar.
            isSecure = origin.scheme == "https" || HostName.isLoopback(origin.host)
        }
    }

    /// §5.1.3: `host` is `domain`, or a host name (not an IP address) ending in `.` + `domain`.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        guard !domain.isEmpty, host.utf8.count > domain.utf8.count, host.hasSuffix(domain),
            !isIPAddress(host)
        else { return false }
        return host.utf8.dropLast(domain.utf8.count).last == UInt8(ascii: ".")
    }

    /// §5.1.4: `path` is `cookiePath`, or below it.
    static func pathMatches(_ path: String, _ cookiePath: String) -> Bool {
        if path == cookiePath { return true }
        guard path.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || path.utf8.dropFirst(cookiePath.utf8.count).first == UInt8(ascii: "/")
    }

    /// §5.1.4: the directory of a request's path — up to, not including, its last `/` — or `/`.
    static func defaultPath(of path: String) -> String {
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    /// Whether a canonical host is an IP address: an IPv6 literal in brackets, or a name whose last label is a
    /// number (no top-level domain is), as URL parsers decide.
    static func isIPAddress(_ host: String) -> Bool {
        if host.hasPrefix("[") { return true }
        guard let last = host.split(separator: ".", omittingEmptySubsequences: false).last, !last.isEmpty else {
            return false
        }
        return last.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            || (last.lowercased().hasPrefix("0x") && last.count > 2)
    }
}

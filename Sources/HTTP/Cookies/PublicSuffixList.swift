/// The public suffixes a ``CookieJar`` refuses as a cookie's `Domain` (RFC 6265bis §5.7 step 9): names under which
/// anyone can register a name of their own (`com`, `co.uk`, `github.io`), so that a cookie set for one would reach
/// every site beneath it.
///
/// The jar carries no list of its own; an app that wants the whole of Mozilla's Public Suffix List bundles its file
/// and passes its text:
///
/// ```swift
/// let text = try String(contentsOf: Bundle.main.url(forResource: "public_suffix_list", withExtension: "dat")!)
/// let cookies = Cookies(jar: CookieJar(publicSuffixes: PublicSuffixList(parsing: text)))
/// ```
///
/// Rules are the list's: a name (`co.uk`), a wildcard for every name one label below (`*.ck`), an exception that
/// is not a public suffix despite a wildcard (`!www.ck`). A single label (`com`, `localhost`) is always a public
/// suffix — the list's implicit `*` rule — so even the empty list refuses `Domain=com`.
public struct PublicSuffixList: Sendable, Hashable {
    private var names: Set<String> = []
    private var wildcards: Set<String> = []
    private var exceptions: Set<String> = []

    /// The list with only the implicit rule: every single-label name is a public suffix.
    public init() {}

    /// A list of rules as the Public Suffix List writes them: `co.uk`, `*.ck`, `!www.ck`.
    ///
    /// - Parameter rules: The rules; names in any case, internationalised ones in Unicode or Punycode.
    public init(rules: some Sequence<String>) {
        for rule in rules { add(rule) }
    }

    /// A list read from the text of a Public Suffix List file: one rule per line, up to the first whitespace;
    /// blank lines and `//` comments are skipped.
    ///
    /// - Parameter text: The file's text.
    public init(parsing text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            let rule = line.prefix { $0 != " " && $0 != "\t" }
            guard !rule.isEmpty, !rule.hasPrefix("//") else { continue }
            add(String(rule))
        }
    }

    private mutating func add(_ rule: String) {
        if rule.hasPrefix("!") {
            if let name = Self.canonical(rule.dropFirst()) { exceptions.insert(name) }
        } else if rule.hasPrefix("*.") {
            if let name = Self.canonical(rule.dropFirst(2)) { wildcards.insert(name) }
        } else if let name = Self.canonical(rule[...]) {
            names.insert(name)
        }
    }

    /// Whether `domain` — lowercase, Punycode for an internationalised name, as a ``Cookie/domain`` is — is a
    /// public suffix.
    public func isPublicSuffix(_ domain: String) -> Bool {
        let domain = domain.hasSuffix(".") ? String(domain.dropLast()) : domain
        guard let dot = domain.firstIndex(of: ".") else { return true }
        if exceptions.contains(domain) { return false }
        if names.contains(domain) { return true }
        return wildcards.contains(String(domain[domain.index(after: dot)...]))
    }

    /// A rule's name as the jar compares domains: lowercase, Punycode, without dots at either end; `nil` when
    /// nothing is left.
    private static func canonical(_ name: Substring) -> String? {
        var name = name
        while name.hasPrefix(".") { name = name.dropFirst() }
        while name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty else { return nil }
        let text = String(name)
        return text.utf8.contains(where: { $0 >= 0x80 }) ? Origin(host: text).host : text.lowercased()
    }
}

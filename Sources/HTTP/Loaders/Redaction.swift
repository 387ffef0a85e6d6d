/// Which header fields are hidden when requests and responses are written to logs or rendered as cURL.
///
/// ``standard`` hides `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`; add the names your
/// API uses for secrets:
///
/// ```swift
/// let logger = PrintLoader(redaction: .standard.adding("X-API-Key"))
/// ```
public struct Redaction: Sendable, Hashable {
    /// The names of hidden header fields, lowercased.
    public private(set) var headerNames: Set<String>

    /// Creates a redaction that hides the named header fields (case-insensitively).
    public init(headerNames: some Sequence<String>) {
        self.headerNames = Set(headerNames.map { $0.lowercased() })
    }

    /// Hides `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`.
    public static let standard = Redaction(headerNames: [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
    ])

    /// Hides nothing. Use it only where the output stays private, such as a cURL command you run yourself.
    public static let none = Redaction(headerNames: [])

    /// This redaction, also hiding the named header fields.
    public func adding(_ names: String...) -> Redaction {
        Redaction(headerNames: headerNames.union(names.map { $0.lowercased() }))
    }

    /// Whether the value of header field `name` is hidden.
    public func hides(_ name: String) -> Bool {
        headerNames.contains(name.lowercased())
    }

    /// `value`, or a placeholder when field `name` is hidden.
    ///
    /// For `Authorization` the scheme stays visible (`Bearer <redacted>`) since it tells which credential was
    /// used without revealing it.
    public func display(_ value: String, for name: String) -> String {
        guard hides(name) else { return value }
        if let space = value.firstIndex(of: " "),
            HTTPHeaders.namesMatch(name, "Authorization")
                || HTTPHeaders.namesMatch(name, "Proxy-Authorization")
        {
            return value[..<space] + " <redacted>"
        }
        return "<redacted>"
    }
}

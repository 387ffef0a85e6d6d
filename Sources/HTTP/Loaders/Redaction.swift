import Foundation

/// Which header fields — and which fields of form bodies — are hidden when requests and responses are
/// written to logs or rendered as cURL.
///
/// ``standard`` hides `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`, and in
/// `application/x-www-form-urlencoded` bodies the OAuth fields that carry secrets (`refresh_token`,
/// `code`, `code_verifier`, `client_secret`, `password`, …). Add the names your API uses for secrets:
///
/// ```swift
/// let logger = PrintLoader(redaction: .standard.adding("X-API-Key"))
/// ```
public struct Redaction: Sendable, Hashable {
    /// The names of hidden header fields, lowercased.
    public private(set) var headerNames: Set<String>
    /// The names of hidden form-body fields (exact, case-sensitive, as form field names are).
    public private(set) var bodyFieldNames: Set<String>

    /// Creates a redaction that hides the named header fields (case-insensitively) and form-body fields.
    public init(headerNames: some Sequence<String>, bodyFieldNames: some Sequence<String> = [String]()) {
        self.headerNames = Set(headerNames.map { $0.lowercased() })
        self.bodyFieldNames = Set(bodyFieldNames)
    }

    /// Hides `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`, and the secret-bearing
    /// fields of OAuth 2 form bodies.
    public static let standard = Redaction(
        headerNames: ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"],
        bodyFieldNames: [
            "access_token", "refresh_token", "id_token", "token", "code", "code_verifier", "client_secret",
            "client_assertion", "assertion", "password", "id_token_hint",
        ]
    )

    /// Hides nothing. Use it only where the output stays private, such as a cURL command you run yourself.
    public static let none = Redaction(headerNames: [String]())

    /// This redaction, also hiding the named header fields.
    public func adding(_ names: String...) -> Redaction {
        var copy = self
        copy.headerNames.formUnion(names.map { $0.lowercased() })
        return copy
    }

    /// This redaction, also hiding the named fields of form bodies.
    public func addingBodyFields(_ names: String...) -> Redaction {
        var copy = self
        copy.bodyFieldNames.formUnion(names)
        return copy
    }

    /// A form body (`name=value&…`) with the values of hidden fields replaced by a placeholder.
    public func display(formBody body: String) -> String {
        guard !bodyFieldNames.isEmpty else { return body }
        return body.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let rawName = pair[..<equals].replacingOccurrences(of: "+", with: " ")
            let name = rawName.removingPercentEncoding ?? rawName
            return bodyFieldNames.contains(name) ? pair[..<equals] + "=<redacted>" : String(pair)
        }.joined(separator: "&")
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

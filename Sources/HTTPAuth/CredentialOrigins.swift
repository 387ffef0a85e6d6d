import HTTP

/// The origins a loader's credentials belong to, and the refusal of a request for any other: one rule for
/// ``BasicAuth`` and ``OAuth``.
///
/// Credentials are bound to origins (scheme, host and port), not to host names: `https://api.example.com`
/// does not cover `http://api.example.com` or `https://api.example.com:8443`. A host name alone means `https` on
/// port 443. Plain `http` is used only for an `http` origin the app lists itself.
struct CredentialOrigins: Sendable {
    /// The origins, as an array: for the one or two a loader has, comparing beats hashing.
    private let origins: [Origin]
    /// Who holds the credentials and what they are, for messages: "OAuth's tokens".
    private let holder: String

    init(_ origins: Set<Origin>, holder: String) {
        self.origins = origins.sorted { $0.description < $1.description }
        self.holder = holder
    }

    /// Reads each text as ``Origin/init(parsing:)`` does: a host name means `https` on port 443.
    static func origins(fromHosts hosts: Set<String>) -> Set<Origin> {
        Set(hosts.map { Origin(stringLiteral: $0) })
    }

    /// Whether `request` goes to one of the origins.
    func contains(_ request: HTTPRequest) -> Bool {
        origins.contains { $0.isOrigin(of: request) }
    }

    /// The failure of a request for another origin.
    func refusal(of request: HTTPRequest) -> HTTPError {
        let target = request.origin.map(\.description) ?? "a request without a host"
        let listed = origins.map(\.description).joined(separator: ", ")
        var message = "\(holder) belong to \(listed.isEmpty ? "no origin" : listed), not to \(target)"
        if let origin = request.origin, origins.contains(where: { $0.host == origin.host }) {
            message += " (credentials are bound to scheme, host and port; a host name alone means https on port 443)"
        }
        return HTTPError(.cannotAuthenticate, request: request, message: message)
    }
}

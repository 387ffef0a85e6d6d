extension Redaction {
    /// Which names this redaction hides, in a few words for a chain's description: `standard`, `none`,
    /// `standard + x-session, pin`, or the names themselves (lowercased, sorted, fragments marked with `*`).
    var summary: String {
        if self == .standard { return "standard" }
        if self == .none { return "none" }
        let standard = Redaction.standard
        if names.isSuperset(of: standard.names), nameFragments.isSuperset(of: standard.nameFragments) {
            return "standard + "
                + Self.list(names.subtracting(standard.names), nameFragments.subtracting(standard.nameFragments))
        }
        return Self.list(names, nameFragments)
    }

    private static func list(_ names: Set<String>, _ fragments: Set<String>) -> String {
        (names.sorted() + fragments.sorted().map { "*\($0)*" }).joined(separator: ", ")
    }
}

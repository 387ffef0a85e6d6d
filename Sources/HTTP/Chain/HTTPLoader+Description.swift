extension HTTPLoader: CustomStringConvertible {
    /// The chain from this loader down, one line per loader with its
    /// ``HTTPLoader/configurationDescription``, so that `print(chain)` shows how requests flow:
    ///
    /// ```
    /// ResetGuard
    /// --> ApplyEnvironment(environment: https://api.example.com/v1, headers: X-API-Key)
    /// --> Auth(methods: basic, oauth)
    ///     ├─ basic: BasicAuth(origins: https://api.example.com)
    ///     └─ oauth: OAuth(clientID: app, issuer: https://id.example.com, scopes: openid, resourceOrigins: …)
    /// --> Retry(strategy: Backoff(exponential: 1 s × 2, attempts: 3, maximumDelay: 30 s), budget: …)
    /// --> Throttle(maximumNumberOfRequests: 6, starvationLimit: 8)
    /// --> URLSessionLoader(timeout: 60 s, connectionsPerHost: 6)
    /// ```
    ///
    /// The description follows ``HTTPLoader/nextLoaders``. A loader with one next loader is followed by it on the
    /// next line (`-->`). A composite's branches are indented under it (`├─`, `└─`), and when they all meet again
    /// at its last next loader, the chain goes on from there at the composite's level; `Auth` labels each branch
    /// with its authentication method. Each loader is described once: met again, it is named and marked
    /// `(described above)`. Every line goes through ``Redaction/standard``.
    public var description: String {
        var description = ChainDescription()
        description.describe(self, firstPrefix: "", restPrefix: "", until: nil)
        return description.lines.joined(separator: "\n")
    }
}

/// A loader whose ``HTTPLoader/nextLoaders`` are labelled branches that meet again at a loader of its own, which
/// is left out of the description: `Auth`, whose sub-loaders all send to its private guard.
package protocol BranchingLoader: HTTPLoader {
    /// The branches in order, each with a label (`Auth`: the authentication method).
    var describedBranches: [(label: String, loader: HTTPLoader)] { get }
    /// Where the branches meet. It is not described; the description goes on with its next loader.
    var describedJunction: HTTPLoader { get }
}

/// Builds the lines of a chain's description.
struct ChainDescription {
    private(set) var lines: [String] = []
    private var described: Set<ObjectIdentifier> = []

    /// Describes the chain from `start` until it ends or reaches `junction`: the first line starts with
    /// `firstPrefix`, the loaders after it with `restPrefix` and `-->`, and branches are indented under their loader.
    mutating func describe(_ start: HTTPLoader, firstPrefix: String, restPrefix: String, until junction: HTTPLoader?) {
        var current: HTTPLoader? = start
        var prefix = firstPrefix
        while let loader = current, loader !== junction {
            guard described.insert(ObjectIdentifier(loader)).inserted else {
                lines.append(prefix + Self.name(of: loader) + " (described above)")
                return
            }
            lines.append(prefix + Self.line(for: loader))
            // Branches sit under the loader's name: after `-->`, or at once for the first loader.
            let indent = prefix == firstPrefix ? restPrefix : restPrefix + "    "
            prefix = restPrefix + "--> "
            if let branching = loader as? any BranchingLoader {
                let junction = branching.describedJunction
                described.insert(ObjectIdentifier(junction))
                describeBranches(branching.describedBranches, indent: indent, until: junction)
                current = junction.nextLoaders.first
                continue
            }
            let next = loader.nextLoaders
            if next.count <= 1 {
                current = next.first
            } else if let join = next.last, next.dropLast().allSatisfy({ Self.reaches($0, join) }) {
                describeBranches(next.dropLast().map { ("", $0) }, indent: indent, until: join)
                current = join
            } else {
                describeBranches(next.map { ("", $0) }, indent: indent, until: nil)
                current = nil
            }
        }
    }

    private mutating func describeBranches(
        _ branches: [(label: String, loader: HTTPLoader)], indent: String, until junction: HTTPLoader?
    ) {
        for (index, branch) in branches.enumerated() {
            let isLast = index == branches.count - 1
            let label = branch.label.isEmpty ? "" : branch.label + ": "
            describe(
                branch.loader,
                firstPrefix: indent + (isLast ? "└─ " : "├─ ") + label,
                restPrefix: indent + (isLast ? "   " : "│  "),
                until: junction
            )
        }
    }

    static func name(of loader: HTTPLoader) -> String {
        String(describing: type(of: loader))
    }

    /// `Name(configuration)`, or `Name` alone, with secrets hidden.
    static func line(for loader: HTTPLoader) -> String {
        let configuration = loader.configurationDescription
        let line = configuration.isEmpty ? name(of: loader) : "\(name(of: loader))(\(configuration))"
        return Redaction.standard.display(text: line)
    }

    /// Whether `target` can be reached from `start` through next loaders.
    static func reaches(_ start: HTTPLoader, _ target: HTTPLoader) -> Bool {
        var visited: Set<ObjectIdentifier> = []
        var stack = [start]
        while let loader = stack.popLast() {
            if loader === target { return true }
            guard visited.insert(ObjectIdentifier(loader)).inserted else { continue }
            stack.append(contentsOf: loader.nextLoaders)
        }
        return false
    }
}

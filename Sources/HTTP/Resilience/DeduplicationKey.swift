/// What makes two requests one load for ``Deduplicate``: the method, every part of the URL that is sent, the header
/// fields (but the ignored ones) and the request's options.
///
/// Two keys are equal only when the requests would be sent alike and treated alike by the loaders below:
/// - the method, scheme, host, port, percent-encoded path and query, exactly as written (a host spelled in other
///   case is another key: a missed share costs a load, a wrong one would hand out someone else's answer);
/// - the header fields in order, names compared without case, values exactly — `Authorization` included;
/// - the options, in any order: an option whose value is `Hashable` by value, any other by identity (the same
///   boxed value, as in copies of one request), so that two requests with different timeouts, redirect policies
///   or credentials never share a load.
///
/// The fragment is not sent, so it is not part of the key.
struct DeduplicationKey: Hashable, Sendable {
    private let method: HTTPMethod
    private let scheme: String
    private let host: String?
    private let port: Int?
    private let path: String
    private let query: String?
    private let headers: HTTPHeaders
    private let options: [(key: ObjectIdentifier, box: any AnyObject & Sendable)]
    /// The load's identity, where a loader above stamped one: as an option would be, part of what makes requests
    /// different (each load's is its own).
    private let loadID: LoadID?
    /// Computed once: a key is hashed when it is looked up, stored and removed.
    private let hash: Int

    /// The key of `request`, leaving out the header fields named in `ignoredFields` (compared without case).
    init(_ request: HTTPRequest, ignoringHeaderFields ignoredFields: [String]) {
        let fields = request.storage.value
        method = fields.method
        scheme = fields.scheme
        host = fields.host
        port = fields.port
        path = fields.percentEncodedPath
        query = fields.percentEncodedQuery
        if ignoredFields.isEmpty {
            headers = fields.headers
        } else {
            headers = HTTPHeaders(
                fields.headers.filter { field in !ignoredFields.contains { HTTPHeaders.namesMatch($0, field.name) } })
        }
        options = fields.options
        loadID = request.observation?.id
        var hasher = Hasher()
        Self.hashParts(method, scheme, host, port, path, query, headers, options, into: &hasher)
        hasher.combine(loadID)
        hash = hasher.finalize()
    }

    static func == (lhs: DeduplicationKey, rhs: DeduplicationKey) -> Bool {
        guard lhs.hash == rhs.hash, lhs.method == rhs.method, lhs.scheme == rhs.scheme, lhs.host == rhs.host,
            lhs.port == rhs.port,
            lhs.path == rhs.path, lhs.query == rhs.query, lhs.headers.count == rhs.headers.count,
            lhs.options.count == rhs.options.count, lhs.loadID == rhs.loadID
        else { return false }
        for (left, right) in zip(lhs.headers, rhs.headers) {
            guard left.value == right.value, HTTPHeaders.namesMatch(left.name, right.name) else { return false }
        }
        // A request stores each option once, so equal counts and every left option on the right mean equal sets.
        for left in lhs.options {
            guard let right = rhs.options.first(where: { $0.key == left.key }),
                Self.optionValue(left.box, equals: right.box)
            else { return false }
        }
        return true
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    private static func hashParts(
        _ method: HTTPMethod, _ scheme: String, _ host: String?, _ port: Int?, _ path: String, _ query: String?,
        _ headers: HTTPHeaders, _ options: [(key: ObjectIdentifier, box: any AnyObject & Sendable)],
        into hasher: inout Hasher
    ) {
        hasher.combine(method)
        hasher.combine(scheme)
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(path)
        hasher.combine(query)
        hasher.combine(headers.count)
        for field in headers {
            for byte in field.name.utf8 { hasher.combine((byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte) }
            hasher.combine(0xFF as UInt8)  // ends the name: "ab" + "c" and "a" + "bc" hash apart
            hasher.combine(field.value)
        }
        // Options in any order: the sum of each option's own hash does not depend on it.
        var optionsHash = 0
        for option in options {
            var optionHasher = Hasher()
            optionHasher.combine(option.key)
            if let value = option.box as? any HashableOptionValue {
                value.hashOptionValue(into: &optionHasher)
            } else {
                optionHasher.combine(ObjectIdentifier(option.box))
            }
            optionsHash &+= optionHasher.finalize()
        }
        hasher.combine(options.count)
        hasher.combine(optionsHash)
    }

    /// Whether two boxes of the same option hold equal values: by value when it is `Hashable`, else by identity.
    private static func optionValue(_ left: any AnyObject & Sendable, equals right: any AnyObject & Sendable) -> Bool {
        if left === right { return true }
        guard let left = left as? any HashableOptionValue else { return false }
        return left.hasValue(equalTo: right)
    }
}

/// An option's box whose value can be hashed and compared, for ``DeduplicationKey``.
protocol HashableOptionValue: AnyObject {
    func hashOptionValue(into hasher: inout Hasher)
    func hasValue(equalTo other: AnyObject) -> Bool
}

extension OptionBox: HashableOptionValue where Value: Hashable {
    func hashOptionValue(into hasher: inout Hasher) {
        hasher.combine(value)
    }

    func hasValue(equalTo other: AnyObject) -> Bool {
        guard let other = other as? OptionBox<Value> else { return false }
        return other.value == value
    }
}

/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Fields keep the order they were added in, and a name may appear more than once (as `Set-Cookie`
/// does). Lookup by name ignores ASCII case, as HTTP requires.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.add("a=1", for: "Set-Cookie")
/// headers.add("b=2", for: "Set-Cookie")
/// headers["accept"]                  // "application/json"
/// headers.values(for: "set-cookie")  // ["a=1", "b=2"]
/// ```
public struct HTTPHeaders: Sendable, Hashable {
    /// One header field: a name and its value.
    public struct Field: Sendable, Hashable, CustomStringConvertible {
        /// The field name as it was given; compare names with ``HTTPHeaders/Field/hasName(_:)``.
        public var name: String
        /// The field value.
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// Whether this field's name equals `name`, ignoring ASCII case.
        public func hasName(_ name: String) -> Bool {
            HTTPHeaders.namesMatch(self.name, name)
        }

        /// `name: value`, a value ``Redaction/standard`` hides replaced (`Authorization: Bearer <redacted>`).
        public var description: String { "\(name): \(Redaction.standard.display(value, for: name))" }
    }

    private var fields: [Field]

    /// Creates an empty header list.
    public init() {
        fields = []
    }

    /// Creates a header list from fields, keeping their order.
    public init(_ fields: [Field]) {
        self.fields = fields
    }

    /// The value for `name`, ignoring case.
    ///
    /// When the name appears more than once, the getter joins the values with `", "` as RFC 9110 §5.3
    /// allows for list-valued fields; use ``values(for:)`` for fields such as `Set-Cookie` that cannot
    /// be combined. The setter replaces every field with that name by one field (in the position of the
    /// first), or removes them all when given `nil`.
    public subscript(name: String) -> String? {
        get {
            var result: String?
            for field in fields where field.hasName(name) {
                if let existing = result { result = existing + ", " + field.value } else { result = field.value }
            }
            return result
        }
        set {
            guard let newValue else {
                remove(name)
                return
            }
            if let index = fields.firstIndex(where: { $0.hasName(name) }) {
                fields[index].value = newValue
                var next = fields.index(after: index)
                while next < fields.endIndex {
                    if fields[next].hasName(name) { fields.remove(at: next) } else { next += 1 }
                }
            } else {
                fields.append(Field(name: name, value: newValue))
            }
        }
    }

    /// Every value for `name`, ignoring case, in order.
    public func values(for name: String) -> [String] {
        fields.lazy.filter { $0.hasName(name) }.map(\.value)
    }

    /// Whether a field named `name` is present, ignoring case.
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.hasName(name) }
    }

    /// Appends a field, keeping any existing fields with the same name.
    public mutating func add(_ value: String, for name: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Appends every field of `other`, keeping existing ones.
    public mutating func add(contentsOf other: HTTPHeaders) {
        fields.append(contentsOf: other.fields)
    }

    /// Removes every field named `name`, ignoring case.
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.hasName(name) }
    }

    /// Compares two names the way HTTP does: ASCII case-insensitively, without allocating.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        // Native strings hand over their UTF-8 bytes at once (small ones on the stack): compare those directly,
        // with no iterator per byte.
        let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in bytesMatch(left, right) }
        }
        if let compared, let matches = compared { return matches }
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil):
                return true
            case (let l?, let r?):
                if l == r { continue }
                let lowerL = (l >= 0x41 && l <= 0x5A) ? l | 0x20 : l
                let lowerR = (r >= 0x41 && r <= 0x5A) ? r | 0x20 : r
                if lowerL != lowerR { return false }
            default:
                return false
            }
        }
    }

    /// ``namesMatch(_:_:)`` over two buffers of UTF-8.
    private static func bytesMatch(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        for index in 0..<left.count {
            let l = left[index]
            let r = right[index]
            if l == r { continue }
            let lowerL = (l >= 0x41 && l <= 0x5A) ? l | 0x20 : l
            let lowerR = (r >= 0x41 && r <= 0x5A) ? r | 0x20 : r
            if lowerL != lowerR { return false }
        }
        return true
    }
}

extension HTTPHeaders: RandomAccessCollection {
    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> Field { fields[position] }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: CustomStringConvertible {
    /// `[Name: value, …]`, the values ``Redaction/standard`` hides replaced.
    public var description: String {
        "[" + fields.map(\.description).joined(separator: ", ") + "]"
    }
}

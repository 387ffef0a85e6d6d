public import Foundation
public import HTTP

/// A request body of any of the product's kinds, or a custom one with arbitrary header fields that may fail to
/// encode.
public enum BodySpec {
    case empty
    case data([UInt8], contentType: String?)
    case form([URLQueryItem])
    case json([(String, String)])
    /// `JSONBody` of a number; `JSONEncoder` refuses NaN and the infinities, so encoding fails for those.
    case jsonNumber(Double)
    case multipart([MultipartFormBody.Part], boundary: String?)
    case custom(FuzzBody)

    public func build() -> any HTTPBody {
        switch self {
        case .empty: EmptyBody()
        case .data(let bytes, let contentType): DataBody(Data(bytes), contentType: contentType)
        case .form(let items): FormBody(items)
        case .json(let pairs):
            // Sorted keys: without them two encodings of one dictionary may order it differently.
            JSONBody(Dictionary(pairs, uniquingKeysWith: { first, _ in first }), encoder: Self.sortedKeysEncoder)
        case .jsonNumber(let number): JSONBody(number)
        case .multipart(let parts, let boundary): MultipartFormBody(parts: parts, boundary: boundary)
        case .custom(let body): body
        }
    }

    public var swift: String {
        switch self {
        case .empty:
            return "EmptyBody()"
        case .data(let bytes, let contentType):
            return "DataBody(\(SwiftLiteral.data(bytes)), contentType: \(SwiftLiteral.optionalString(contentType)))"
        case .form(let items):
            return "FormBody(\(SwiftLiteral.queryItems(items)))"
        case .json(let pairs):
            return
                "JSONBody(\(SwiftLiteral.dictionary(pairs)) as [String: String], encoder: { let encoder = JSONEncoder(); "
                + "encoder.outputFormatting = .sortedKeys; return encoder })"
        case .jsonNumber(let number):
            return "JSONBody(\(SwiftLiteral.double(number)) as Double)"
        case .multipart(let parts, let boundary):
            let parts = parts.map { part in
                "MultipartFormBody.Part(name: \(SwiftLiteral.string(part.name)), filename: "
                    + "\(SwiftLiteral.optionalString(part.filename)), contentType: "
                    + "\(SwiftLiteral.optionalString(part.contentType)), data: \(SwiftLiteral.data(Array(part.data))))"
            }
            return "MultipartFormBody(parts: [\(parts.joined(separator: ", "))], boundary: "
                + "\(SwiftLiteral.optionalString(boundary)))"
        case .custom(let body):
            return body.swift
        }
    }

    private static let kinds = 7

    @Sendable static func sortedKeysEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    public static func read(_ input: inout FuzzInput) -> BodySpec {
        switch input.choice(kinds) {
        case 0: return .empty
        case 1: return .data(input.bytesField(), contentType: input.optionalString())
        case 2: return .form(RequestProgram.readQuery(&input))
        case 3: return .json(uniqueKeys(RequestProgram.readFields(&input).map { ($0.name, $0.value) }))
        case 4: return .jsonNumber(input.double())
        case 5:
            let parts = (0..<input.count(upTo: 3)).map { _ in
                MultipartFormBody.Part(
                    name: input.string(), filename: input.optionalString(), contentType: input.optionalString(),
                    data: Data(input.bytesField()))
            }
            return .multipart(parts, boundary: input.optionalString())
        default:
            return .custom(
                FuzzBody(
                    bytes: input.bytesField(),
                    additionalHeaders: uniqueKeys(RequestProgram.readFields(&input).map { ($0.name, $0.value) }),
                    reportsEmpty: input.bool(), failsToEncode: input.bool()))
        }
    }

    public func write(_ writer: inout SeedWriter) {
        switch self {
        case .empty:
            writer.choice(0, of: Self.kinds)
        case .data(let bytes, let contentType):
            writer.choice(1, of: Self.kinds)
            writer.bytesField(bytes)
            writer.optionalString(contentType)
        case .form(let items):
            writer.choice(2, of: Self.kinds)
            RequestProgram.writeQuery(items, &writer)
        case .json(let pairs):
            writer.choice(3, of: Self.kinds)
            RequestProgram.writeFields(pairs.map { (name: $0.0, value: $0.1) }, &writer)
        case .jsonNumber(let number):
            writer.choice(4, of: Self.kinds)
            writer.double(number)
        case .multipart(let parts, let boundary):
            writer.choice(5, of: Self.kinds)
            writer.count(parts.count, upTo: 3)
            for part in parts {
                writer.string(part.name)
                writer.optionalString(part.filename)
                writer.optionalString(part.contentType)
                writer.bytesField(Array(part.data))
            }
            writer.optionalString(boundary)
        case .custom(let body):
            writer.choice(6, of: Self.kinds)
            writer.bytesField(body.bytes)
            RequestProgram.writeFields(body.fields.map { (name: $0.0, value: $0.1) }, &writer)
            writer.bool(body.reportsEmpty)
            writer.bool(body.failsToEncode)
        }
    }

    /// The pairs with later duplicates of a key dropped, so that a dictionary literal of them is valid Swift.
    static func uniqueKeys(_ pairs: [(String, String)]) -> [(String, String)] {
        var seen = Set<String>()
        return pairs.filter { seen.insert($0.0).inserted }
    }
}

/// A body as an app might write one: any header fields, any bytes, and an encoding that may fail.
public struct FuzzBody: HTTPBody {
    public struct EncodingFailed: Error {}

    public var bytes: [UInt8]
    /// In order, unique names; ``additionalHeaders`` is the dictionary of them.
    public var fields: [(String, String)]
    public var reportsEmpty: Bool
    public var failsToEncode: Bool

    public init(bytes: [UInt8], additionalHeaders: [(String, String)], reportsEmpty: Bool, failsToEncode: Bool) {
        self.bytes = bytes
        self.fields = additionalHeaders
        self.reportsEmpty = reportsEmpty
        self.failsToEncode = failsToEncode
    }

    public var isEmpty: Bool { reportsEmpty }
    public var additionalHeaders: [String: String] { Dictionary(fields, uniquingKeysWith: { first, _ in first }) }

    public func encode() throws -> Data {
        if failsToEncode { throw EncodingFailed() }
        return Data(bytes)
    }

    /// The type's declaration, which a reproducer using one needs.
    public static let declaration = """
        struct FuzzBody: HTTPBody {
            struct EncodingFailed: Error {}
            var bytes: Data
            var additionalHeaders: [String: String]
            var isEmpty: Bool
            var failsToEncode: Bool
            func encode() throws -> Data {
                if failsToEncode { throw EncodingFailed() }
                return bytes
            }
        }
        """

    var swift: String {
        "FuzzBody(bytes: \(SwiftLiteral.data(bytes)), additionalHeaders: \(SwiftLiteral.dictionary(fields)), "
            + "isEmpty: \(reportsEmpty), failsToEncode: \(failsToEncode))"
    }
}

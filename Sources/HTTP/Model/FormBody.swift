public import Foundation

/// Name/value pairs sent as `application/x-www-form-urlencoded`, as an HTML form would send them.
///
/// ```swift
/// request.body = FormBody(["grant_type": "refresh_token", "refresh_token": token])
/// ```
public struct FormBody: HTTPBody {
    /// The pairs, in the order they are sent.
    public var values: [URLQueryItem]

    /// Creates a form body from ordered pairs; a `nil` value sends the name alone.
    public init(_ values: [URLQueryItem]) {
        self.values = values
    }

    /// Creates a form body from a dictionary; pairs are sent sorted by name so the body is deterministic.
    public init(_ values: [String: String]) {
        self.values = values.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
    }

    public var isEmpty: Bool { values.isEmpty }

    public var additionalHeaders: [String: String] {
        ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"]
    }

    public func encode() throws -> Data {
        let pairs = values.map { item in
            let name = Self.escape(item.name)
            guard let value = item.value else { return name }
            return name + "=" + Self.escape(value)
        }
        return Data(pairs.joined(separator: "&").utf8)
    }

    /// Escapes per the WHATWG `application/x-www-form-urlencoded` serializer: alphanumerics and `*-._` stay,
    /// a space becomes `+`, every other byte of the UTF-8 encoding becomes `%XX`.
    package static func escape(_ string: String) -> String {
        var result = ""
        result.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                result.append("+")
            default:
                result.append("%")
                result.append(hexDigits[Int(byte >> 4)])
                result.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return result
    }

    private static let hexDigits = Array("0123456789ABCDEF")
}

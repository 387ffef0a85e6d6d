public import Foundation
public import HTTP

extension Request where Response: Decodable & Sendable {
    /// A request whose body is decoded as `Response` with `decoder` (a plain `JSONDecoder` by default).
    ///
    /// `Response` is `Sendable` so that decoding can run on whichever thread the response arrives on.
    public init(underlyingRequest: HTTPRequest, decoder: some DataDecoder = JSONDecoder()) {
        self.init(underlyingRequest: underlyingRequest) { response in
            try decoder.decode(Response.self, from: response.body)
        }
    }
}

extension Request where Response == Data {
    /// A request whose value is the raw body.
    public init(underlyingRequest: HTTPRequest) {
        self.init(underlyingRequest: underlyingRequest) { $0.body }
    }
}

extension Request where Response == String {
    /// A request whose value is the body as text, in the `charset` of its `Content-Type` (UTF-8 when none
    /// is given); a body that is not valid in that encoding is an ``ResponseError/Kind/undecodable`` error.
    public init(underlyingRequest: HTTPRequest) {
        self.init(underlyingRequest: underlyingRequest) { response in
            let encoding = Self.encoding(of: response)
            guard let text = String(data: response.body, encoding: encoding) else {
                throw TextDecodingFailure(encoding: encoding)
            }
            return text
        }
    }

    private static func encoding(of response: HTTPResponse) -> String.Encoding {
        // Read for every line of a stream (`Connection.lines(for:)`): a field without parameters needs no more work.
        guard let contentType = response.headers["Content-Type"], contentType.utf8.contains(UInt8(ascii: "="))
        else { return .utf8 }
        guard
            let charset = contentType.lowercased().split(separator: ";").lazy
                .map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { $0.hasPrefix("charset=") })?
                .dropFirst("charset=".count)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        else { return .utf8 }
        switch charset {
        case "iso-8859-1", "latin1": return .isoLatin1
        case "us-ascii", "ascii": return .ascii
        case "utf-16": return .utf16
        default: return .utf8
        }
    }
}

/// The body was not text in the encoding its `Content-Type` declared.
struct TextDecodingFailure: Error, CustomStringConvertible {
    var encoding: String.Encoding
    var description: String { "the body is not valid \(encoding) text" }
}

extension Request where Response == Void {
    /// A request that expects no content: any accepted response, `204 No Content` included, completes it.
    public init(underlyingRequest: HTTPRequest) {
        self.init(underlyingRequest: underlyingRequest) { _ in () }
    }
}

extension Request {
    /// The same HTTP request, decoded as another `Decodable` type with `decoder`.
    ///
    /// ```swift
    /// let summary = Request<Person>.person(42).withResponse(PersonSummary.self)
    /// ```
    public func withResponse<NewResponse: Decodable & Sendable>(
        _ type: NewResponse.Type,
        decoder: some DataDecoder = JSONDecoder()
    ) -> Request<NewResponse> {
        withDecode { response in try decoder.decode(NewResponse.self, from: response.body) }
    }
}

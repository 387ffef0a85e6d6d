public import HTTP

/// A decoded value together with the response it came from: its status, header fields and metrics, for the `ETag` to
/// send next time, a rate-limit header, `Cache-Status`, or how long the request took.
///
/// ```swift
/// let person = try await connection.response(for: .person(42))
/// print(person.value.name, person.headers["ETag"] ?? "no ETag", person.status)
/// ```
public struct DecodedResponse<Value> {
    /// The decoded value, as ``Connection/request(_:)`` returns it.
    public var value: Value
    /// The response the value was decoded from (its body included).
    public var response: HTTPResponse

    public init(value: Value, response: HTTPResponse) {
        self.value = value
        self.response = response
    }

    /// The response's status.
    public var status: HTTPStatus { response.status }
    /// The response's header fields.
    public var headers: HTTPHeaders { response.headers }
    /// What the transfer took, as the transport measured it, when it measured it.
    public var metrics: HTTPMetrics? { response.metrics }
}

extension DecodedResponse: Sendable where Value: Sendable {}

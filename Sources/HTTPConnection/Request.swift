public import Foundation
public import HTTP

/// An `HTTPRequest` together with how to turn its response into a `Response` value.
///
/// A request knows which statuses it accepts (2xx by default), how to decode its body, and optionally how to
/// decode the error body a server sends with other statuses. ``Connection`` sends it and hands back the
/// decoded value or throws:
///
/// ```swift
/// struct Person: Decodable, Sendable { var id: Int; var name: String }
///
/// extension Request where Response == Person {
///     static func person(_ id: Int) -> Request<Person> {
///         Request(underlyingRequest: HTTPRequest(path: "/people/\(id)"))
///     }
/// }
///
/// let person = try await connection.request(.person(42))
/// ```
///
/// `Request` is `Sendable` whatever `Response` is: it holds a value and `@Sendable` closures only.
public struct Request<Response>: Sendable {
    /// The request that is sent.
    public var underlyingRequest: HTTPRequest
    private(set) var isAcceptable: @Sendable (HTTPStatus) -> Bool
    private var decodeErrorBody: (@Sendable (HTTPResponse) -> (any Error)?)?
    /// Turns an accepted response into the value: the whole body's, or one line's or event's of a stream (see
    /// ``Connection/jsonLines(for:maximumLineLength:)``), given as a response with the head and that part as body.
    let decodeBody: @Sendable (HTTPResponse) throws -> Response

    /// Creates a request that decodes accepted responses with `decode`.
    ///
    /// - Parameters:
    ///   - underlyingRequest: The request to send.
    ///   - decode: Turns an accepted response into the value. Errors it throws reach the caller wrapped in a
    ///     ``ResponseError`` of kind ``ResponseError/Kind/undecodable``, with the status and a body excerpt.
    public init(underlyingRequest: HTTPRequest, decode: @escaping @Sendable (HTTPResponse) throws -> Response) {
        self.underlyingRequest = underlyingRequest
        self.isAcceptable = { $0.isSuccess }
        self.decodeErrorBody = nil
        self.decodeBody = decode
    }

    /// The value for `response`: checks the status, then decodes.
    ///
    /// - Throws: ``ServerError`` when the status is not accepted and the body decodes as the request's error
    ///   type (see ``decodingErrors(as:decoder:)``); ``ResponseError`` when the status is not accepted
    ///   otherwise, or when the body cannot be decoded.
    public func decode(_ response: HTTPResponse) throws -> Response {
        try checkStatus(of: response)
        do {
            return try decodeBody(response)
        } catch let error as ResponseError {
            throw error
        } catch {
            throw ResponseError(
                kind: .undecodable, response: response, expectedType: Response.self, underlyingError: error)
        }
    }

    /// Throws what ``decode(_:)`` throws for `response`'s status when the request does not accept it: a
    /// ``ServerError`` when its body decodes as the error type, a ``ResponseError`` otherwise.
    func checkStatus(of response: HTTPResponse) throws {
        guard isAcceptable(response.status) else {
            if let serverError = decodeErrorBody?(response) { throw serverError }
            throw ResponseError(kind: .unacceptableStatus, response: response, expectedType: Response.self)
        }
    }

    /// This request, also accepting `statuses` besides 2xx.
    ///
    /// ```swift
    /// let lookup = Request<Person?>.person(42).accepting(.notFound)  // decode turns 404 into nil
    /// ```
    public func accepting(_ statuses: HTTPStatus...) -> Request {
        var copy = self
        let previous = isAcceptable
        let extra = Set(statuses)
        copy.isAcceptable = { previous($0) || extra.contains($0) }
        return copy
    }

    /// This request, accepting every status: its decode closure sees 404s and 500s too.
    public func acceptingAnyStatus() -> Request {
        var copy = self
        copy.isAcceptable = { _ in true }
        return copy
    }

    /// This request, decoding the body of a response with an unaccepted status as `ErrorBody` and throwing
    /// it as a ``ServerError``.
    ///
    /// ```swift
    /// struct APIProblem: Decodable, Sendable { var code: String; var message: String }
    ///
    /// do {
    ///     try await connection.request(.person(42).decodingErrors(as: APIProblem.self))
    /// } catch let error as ServerError<APIProblem> {
    ///     print(error.body.message, error.response.status)
    /// }
    /// ```
    ///
    /// When the body does not decode as `ErrorBody`, the status error is a plain ``ResponseError``.
    public func decodingErrors<ErrorBody: Decodable & Sendable>(
        as type: ErrorBody.Type,
        decoder: some DataDecoder = JSONDecoder()
    ) -> Request {
        var copy = self
        copy.decodeErrorBody = { response in
            guard let body = try? decoder.decode(ErrorBody.self, from: response.body) else { return nil }
            return ServerError(body: body, response: response)
        }
        return copy
    }

    /// The same HTTP request, accepted statuses and error decoding, with another decode closure.
    public func withDecode<NewResponse>(
        _ decode: @escaping @Sendable (HTTPResponse) throws -> NewResponse
    ) -> Request<NewResponse> {
        var replaced = Request<NewResponse>(underlyingRequest: underlyingRequest, decode: decode)
        replaced.isAcceptable = isAcceptable
        replaced.decodeErrorBody = decodeErrorBody
        return replaced
    }

    /// The same request, its decoded value transformed.
    ///
    /// ```swift
    /// let name: Request<String> = Request<Person>.person(42).map(\.name)
    /// ```
    public func map<NewResponse>(
        _ transform: @escaping @Sendable (Response) throws -> NewResponse
    ) -> Request<NewResponse> {
        let decodeBody = self.decodeBody
        return withDecode { try transform(decodeBody($0)) }
    }
}

/// A decoder of `Decodable` values from bytes, such as `JSONDecoder` or `PropertyListDecoder`.
public protocol DataDecoder: Sendable {
    /// Decodes a value of `type` from `data`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONDecoder: DataDecoder {}
extension PropertyListDecoder: DataDecoder {}

// Written by hand in the shape swift-openapi-generator 1.14.3 generates for Benchmarks/OpenAPI/person.yaml (see
// Integrations/OpenAPI/Tests/HTTPOpenAPITests/Generated/Client.swift for the tool's own output): the operation
// serializes its input and deserializes its output through the runtime's `Converter`, as generated code does.
import HTTPTypes
@_spi(Generated) public import OpenAPIRuntime
public import struct Foundation.URL

extension PersonAPI {
    /// The generated client of the person document.
    public struct Client: Sendable {
        /// The underlying HTTP client.
        private let client: UniversalClient

        /// Creates a new client.
        public init(
            serverURL: Foundation.URL,
            configuration: Configuration = .init(),
            transport: any ClientTransport,
            middlewares: [any ClientMiddleware] = []
        ) {
            self.client = .init(
                serverURL: serverURL, configuration: configuration, transport: transport, middlewares: middlewares)
        }

        private var converter: Converter {
            client.converter
        }

        /// - Remark: HTTP `GET /person.json`.
        /// - Remark: Generated from `#/paths//person.json/get(getPerson)`.
        public func getPerson(
            _ input: Operations.GetPerson.Input = .init()
        ) async throws -> Operations.GetPerson.Output {
            try await client.send(
                input: input,
                forOperation: Operations.GetPerson.id,
                serializer: { input in
                    let path = try converter.renderedPath(template: "/person.json", parameters: [])
                    var request: HTTPTypes.HTTPRequest = .init(soar_path: path, method: .get)
                    suppressMutabilityWarning(&request)
                    converter.setAcceptHeader(in: &request.headerFields, contentTypes: input.headers.accept)
                    return (request, nil)
                },
                deserializer: { response, responseBody in
                    switch response.status.code {
                    case 200:
                        let contentType = converter.extractContentTypeIfPresent(in: response.headerFields)
                        let body: Operations.GetPerson.Output.Ok.Body
                        let chosenContentType = try converter.bestContentType(
                            received: contentType, options: ["application/json"])
                        switch chosenContentType {
                        case "application/json":
                            body = try await converter.getResponseBodyAsJSON(
                                Components.Schemas.Person.self, from: responseBody,
                                transforming: { value in .json(value) })
                        default:
                            preconditionFailure("bestContentType chose an invalid content type.")
                        }
                        return .ok(.init(body: body))
                    default:
                        return .undocumented(
                            statusCode: response.status.code,
                            .init(headerFields: response.headerFields, body: responseBody))
                    }
                }
            )
        }
    }
}

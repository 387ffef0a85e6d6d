// Written by hand in the shape swift-openapi-generator 1.14.3 generates for Benchmarks/OpenAPI/person.yaml (its
// Types.swift, Types+Components+Schemas.swift and Types+Operations.swift), under one namespace.
@_spi(Generated) public import OpenAPIRuntime

public import struct Foundation.Date

/// The types generated from Benchmarks/OpenAPI/person.yaml.
public enum PersonAPI {
    /// Types generated from the `#/components` section of the OpenAPI document.
    public enum Components {
        /// Types generated from the `#/components/schemas` section of the OpenAPI document.
        public enum Schemas {
            /// - Remark: Generated from `#/components/schemas/Address`.
            public struct Address: Codable, Hashable, Sendable {
                public var street: Swift.String
                public var city: Swift.String
                public var zip: Swift.String

                public init(street: Swift.String, city: Swift.String, zip: Swift.String) {
                    self.street = street
                    self.city = city
                    self.zip = zip
                }

                public enum CodingKeys: String, CodingKey {
                    case street
                    case city
                    case zip
                }
            }

            /// - Remark: Generated from `#/components/schemas/Person`.
            public struct Person: Codable, Hashable, Sendable {
                public var id: Swift.Int
                public var name: Swift.String
                public var email: Swift.String
                public var age: Swift.Int
                public var verified: Swift.Bool
                public var roles: [Swift.String]
                public var address: PersonAPI.Components.Schemas.Address
                public var createdAt: Foundation.Date

                public init(
                    id: Swift.Int, name: Swift.String, email: Swift.String, age: Swift.Int, verified: Swift.Bool,
                    roles: [Swift.String], address: PersonAPI.Components.Schemas.Address, createdAt: Foundation.Date
                ) {
                    self.id = id
                    self.name = name
                    self.email = email
                    self.age = age
                    self.verified = verified
                    self.roles = roles
                    self.address = address
                    self.createdAt = createdAt
                }

                public enum CodingKeys: String, CodingKey {
                    case id
                    case name
                    case email
                    case age
                    case verified
                    case roles
                    case address
                    case createdAt
                }
            }
        }
    }

    /// API operations, with input and output types, generated from `#/paths` in the OpenAPI document.
    public enum Operations {
        /// - Remark: HTTP `GET /person.json`.
        /// - Remark: Generated from `#/paths//person.json/get(getPerson)`.
        public enum GetPerson {
            public static let id: Swift.String = "getPerson"

            public struct Input: Sendable, Hashable {
                public struct Headers: Sendable, Hashable {
                    public var accept:
                        [OpenAPIRuntime.AcceptHeaderContentType<Operations.GetPerson.AcceptableContentType>]

                    public init(
                        accept: [OpenAPIRuntime.AcceptHeaderContentType<Operations.GetPerson.AcceptableContentType>] =
                            .defaultValues()
                    ) {
                        self.accept = accept
                    }
                }
                public var headers: Operations.GetPerson.Input.Headers

                public init(headers: Operations.GetPerson.Input.Headers = .init()) {
                    self.headers = headers
                }
            }

            public enum Output: Sendable, Hashable {
                public struct Ok: Sendable, Hashable {
                    public enum Body: Sendable, Hashable {
                        case json(PersonAPI.Components.Schemas.Person)

                        public var json: PersonAPI.Components.Schemas.Person {
                            get throws {
                                switch self {
                                case let .json(body): return body
                                }
                            }
                        }
                    }
                    public var body: Operations.GetPerson.Output.Ok.Body

                    public init(body: Operations.GetPerson.Output.Ok.Body) {
                        self.body = body
                    }
                }
                /// HTTP response code: `200 ok`.
                case ok(Operations.GetPerson.Output.Ok)

                public var ok: Operations.GetPerson.Output.Ok {
                    get throws {
                        switch self {
                        case let .ok(response): return response
                        default: try throwUnexpectedResponseStatus(expectedStatus: "ok", response: self)
                        }
                    }
                }
                /// A response with a code that is not documented in the OpenAPI document.
                case undocumented(statusCode: Swift.Int, OpenAPIRuntime.UndocumentedPayload)
            }

            public enum AcceptableContentType: AcceptableProtocol {
                case json
                case other(Swift.String)

                public init?(rawValue: Swift.String) {
                    switch rawValue.lowercased() {
                    case "application/json": self = .json
                    default: self = .other(rawValue)
                    }
                }

                public var rawValue: Swift.String {
                    switch self {
                    case let .other(string): return string
                    case .json: return "application/json"
                    }
                }

                public static var allCases: [Self] { [.json] }
            }
        }
    }
}
